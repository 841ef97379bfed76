#include "nn/init.h"

#include <cmath>
#include <vector>

#include "core/error.h"

namespace ladder::nn {

std::pair<int64_t, int64_t> fans(const Tensor& weight) {
  if (weight.dim() < 2) fail("init", "fan-in needs a weight of at least 2 dims, got ", shape_str(weight.shape()));
  const int64_t receptive = weight.numel() / (weight.size(0) * weight.size(1));  // kernel area for convs
  return {weight.size(1) * receptive, weight.size(0) * receptive};
}

void init_uniform(const Tensor& t, float low, float high, Generator& gen) {
  float* p = t.mutable_data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = gen.uniform(low, high);
}

void init_normal(const Tensor& t, float mean, float std, Generator& gen) {
  float* p = t.mutable_data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = mean + std * gen.normal();
}

void init_orthogonal(const Tensor& t, Generator& gen, float gain) {
  if (t.dim() != 2) fail("init_orthogonal", "needs a matrix, got shape ", shape_str(t.shape()));
  const int64_t rows = t.size(0), cols = t.size(1);
  const bool by_rows = rows <= cols;  // orthonormalise the shorter side's vectors
  const int64_t count = by_rows ? rows : cols, length = by_rows ? cols : rows;
  std::vector<std::vector<double>> v(static_cast<size_t>(count), std::vector<double>(static_cast<size_t>(length)));
  for (auto& vec : v) {
    for (double& e : vec) e = gen.normal();
  }
  for (size_t i = 0; i < v.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {  // remove the parts along the vectors already done
      double dot = 0;
      for (size_t e = 0; e < v[i].size(); ++e) dot += v[i][e] * v[k][e];
      for (size_t e = 0; e < v[i].size(); ++e) v[i][e] -= dot * v[k][e];
    }
    double norm = 0;
    for (double e : v[i]) norm += e * e;
    norm = std::sqrt(norm);
    for (double& e : v[i]) e /= norm;
  }
  float* p = t.mutable_data();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      p[r * cols + c] = gain * static_cast<float>(by_rows ? v[static_cast<size_t>(r)][static_cast<size_t>(c)]
                                                                 : v[static_cast<size_t>(c)][static_cast<size_t>(r)]);
}

void init_weight(const Tensor& weight, Init scheme, Generator& gen, float std) {
  const auto [fan_in, fan_out] = fans(weight);
  switch (scheme) {
    case Init::pytorch: {
      const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
      return init_uniform(weight, -bound, bound, gen);
    }
    case Init::xavier: {
      const float bound = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
      return init_uniform(weight, -bound, bound, gen);
    }
    case Init::kaiming: return init_normal(weight, 0, std::sqrt(2.0f / static_cast<float>(fan_in)), gen);
    case Init::normal: return init_normal(weight, 0, std, gen);
  }
}

}  // namespace ladder::nn
