#include "nn/attention/positional_encoding.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

Tensor sinusoidal_encoding(int64_t max_len, int64_t dim) {
  if (max_len <= 0 || dim <= 0)
    fail("sinusoidal_encoding", "max_len and dim must be positive, got ", max_len, " and ", dim);
  std::vector<float> table(static_cast<size_t>(max_len * dim));
  for (int64_t p = 0; p < max_len; ++p)
    for (int64_t i = 0; i < dim; i += 2) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, static_cast<double>(i) / dim);
      table[p * dim + i] = static_cast<float>(std::sin(angle));
      if (i + 1 < dim) table[p * dim + i + 1] = static_cast<float>(std::cos(angle));
    }
  return tensor(table, {max_len, dim});
}

PositionalEncoding::PositionalEncoding(std::string type_name, int64_t dim, int64_t max_len, float dropout,
                                       Generator& gen)
    : Module(std::move(type_name)), dim_(dim), max_len_(max_len) {
  if (dim <= 0 || max_len <= 0)
    fail(this->type_name().c_str(), "dim and max_len must be positive, got ", dim, " and ", max_len);
  if (!(dropout >= 0 && dropout < 1)) fail(this->type_name().c_str(), "dropout must be in [0, 1), got ", dropout);
  this->dropout = register_module("dropout", std::make_shared<Dropout>(dropout, gen));
}

Tensor PositionalEncoding::forward(const Tensor& x, int64_t offset) {
  const char* op = type_name().c_str();
  if (x.dim() != 3 || x.size(2) != dim_) fail(op, "expects x (B,T,", dim_, "), got ", shape_str(x.shape()));
  if (offset < 0) fail(op, "the position offset must be >= 0, got ", offset);
  const int64_t T = x.size(1);
  if (offset + T > max_len_)
    fail(op, "positions up to ", offset + T, " (offset ", offset, " + T ", T, ") exceed max_len ", max_len_,
         "; build it with max_len >= ", offset + T, " or use shorter sequences");
  return dropout->forward(x + positions(offset, T));  // (B,T,E) + (T,E)
}

std::string PositionalEncoding::describe() const { return cat("dim=", dim_, ", max_len=", max_len_); }

SinusoidalPositionalEncoding::SinusoidalPositionalEncoding(int64_t dim, int64_t max_len, float dropout, Generator& gen)
    : PositionalEncoding("SinusoidalPositionalEncoding", dim, max_len, dropout, gen),
      table_(sinusoidal_encoding(max_len, dim)) {}

Tensor SinusoidalPositionalEncoding::positions(int64_t offset, int64_t length) {
  return narrow(table_, 0, offset, length);
}

LearnedPositionalEncoding::LearnedPositionalEncoding(int64_t dim, int64_t max_len, float dropout, float std,
                                                     Generator& gen)
    : PositionalEncoding("LearnedPositionalEncoding", dim, max_len, dropout, gen) {
  embedding = register_module("embedding", std::make_shared<Embedding>(max_len, dim, std, gen));
}

Tensor LearnedPositionalEncoding::positions(int64_t offset, int64_t length) {
  return narrow(embedding->weight, 0, offset, length);
}

}  // namespace ladder::nn
