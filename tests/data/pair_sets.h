// Sets of pair sources, for the tests that check no source is in two parts of a split.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "data/pairs.h"

namespace ladder::testing {

inline std::set<std::string> sources_of(const std::vector<data::TextPair>& pairs) {
  std::set<std::string> out;
  for (const data::TextPair& pair : pairs) out.insert(pair.source);
  return out;
}

// How many strings the two sets have in common.
inline int64_t shared(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::count_if(a.begin(), a.end(), [&](const std::string& s) { return b.count(s) > 0; });
}

}  // namespace ladder::testing
