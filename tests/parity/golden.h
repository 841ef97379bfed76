// Reading the golden files that bench/pytorch/*.py write, and holding tensors to them.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ladder::testing {

inline nlohmann::json read_golden(const std::string& name) {
  std::ifstream file(std::string(LADDER_SOURCE_DIR) + "/tests/parity/golden/" + name);
  REQUIRE_MESSAGE(file.good(), name);
  return nlohmann::json::parse(file);
}

// A list of golden numbers; JSON has none for NaN and the infinities, so they come as "nan", "inf", "-inf".
inline std::vector<float> golden_values(const nlohmann::json& list) {
  std::vector<float> out;
  out.reserve(list.size());
  for (const nlohmann::json& v : list) {
    if (!v.is_string()) {
      out.push_back(v.get<float>());
      continue;
    }
    const std::string word = v.get<std::string>();
    REQUIRE_MESSAGE((word == "nan" || word == "inf" || word == "-inf"), "unknown golden value \"", word, "\"");
    out.push_back(word == "nan" ? std::numeric_limits<float>::quiet_NaN()
                                : (word == "inf" ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity());
  }
  return out;
}

// Every element of t agrees with PyTorch's: |ours - torch| <= tol * max(1, |torch|), NaN where
// PyTorch has NaN, the same infinity where PyTorch has one. A failure names the worst element.
inline void check_golden(const Tensor& t, const nlohmann::json& expected, const std::string& what, float tol) {
  const std::vector<float> e = golden_values(expected);
  REQUIRE_MESSAGE(static_cast<size_t>(t.numel()) == e.size(), what, ": ", t.numel(), " elements, PyTorch has ", e.size());
  size_t differ = 0, worst_at = 0;
  float worst = -1;
  for (size_t i = 0; i < e.size(); ++i) {
    const float ours = t.data()[i], scale = std::max(1.0f, std::fabs(e[i]));
    const bool same = std::isnan(e[i])   ? std::isnan(ours)
                      : std::isinf(e[i]) ? ours == e[i]
                                         : std::fabs(ours - e[i]) <= tol * scale;
    if (same) continue;
    ++differ;
    const float excess = std::isfinite(ours) && std::isfinite(e[i]) ? std::fabs(ours - e[i]) / scale
                                                                    : std::numeric_limits<float>::infinity();
    if (excess > worst) {
      worst = excess;
      worst_at = i;
    }
  }
  std::ostringstream worst_element;  // nine digits: every float32 exactly
  if (differ)
    worst_element << std::setprecision(9) << "[" << worst_at << "]: " << t.data()[worst_at] << " vs PyTorch "
                  << e[worst_at] << ", |difference| / max(1, |PyTorch|) = " << worst;
  CHECK_MESSAGE(differ == 0, what, ": ", differ, " of ", e.size(), " elements differ; the worst, ", worst_element.str());
}

}  // namespace ladder::testing
