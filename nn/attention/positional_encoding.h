// Positional encodings added to token embeddings, so that attention (which treats its keys as a
// set) can tell positions apart. Both modules map x (B,T,E) to dropout(x + P[offset : offset+T]),
// where P (max_len, E) holds one vector per position and `offset` is the position of x's first row
// (the number of positions already generated, when generating one token at a time).
// Rotary encodings rotate q and k inside the attention instead: rotary.h.
#pragma once

#include <cstdint>

#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/module.h"

namespace ladder::nn {

// The fixed table of "Attention Is All You Need" -> (max_len, dim):
// P[p, 2i] = sin(p / 10000^(2i/dim)), P[p, 2i+1] = cos(p / 10000^(2i/dim)). Each pair of columns is
// a clock of its own frequency, from one turn in 2 pi positions down to one in 10000 * 2 pi.
Tensor sinusoidal_encoding(int64_t max_len, int64_t dim);

// What both encodings share: the range check, the addition and the dropout.
class PositionalEncoding : public Module {
 public:
  Tensor forward(const Tensor& x, int64_t offset);  // x (B,T,E) -> (B,T,E)
  Tensor forward(const Tensor& x) override { return forward(x, 0); }
  int64_t max_len() const { return max_len_; }

 protected:
  PositionalEncoding(std::string type_name, int64_t dim, int64_t max_len, float dropout, Generator& gen);
  virtual Tensor positions(int64_t offset, int64_t length) = 0;  // -> (length, E)
  std::string describe() const override;

  std::shared_ptr<Dropout> dropout;

 private:
  int64_t dim_, max_len_;
};

// Fixed sines and cosines: no parameters, and nothing in the state dict (the table follows from
// dim and max_len).
class SinusoidalPositionalEncoding : public PositionalEncoding {
 public:
  SinusoidalPositionalEncoding(int64_t dim, int64_t max_len = 5000, float dropout = 0,
                               Generator& gen = default_generator());
  const Tensor& table() const { return table_; }  // (max_len, dim)

 protected:
  Tensor positions(int64_t offset, int64_t length) override;

 private:
  Tensor table_;
};

// One learned vector per position (GPT's wpe): an Embedding of max_len rows, N(0, std^2) at the
// start, registered as `embedding` (state dict: embedding.weight).
class LearnedPositionalEncoding : public PositionalEncoding {
 public:
  LearnedPositionalEncoding(int64_t dim, int64_t max_len, float dropout = 0, float std = 0.02f,
                            Generator& gen = default_generator());
  std::shared_ptr<Embedding> embedding;

 protected:
  Tensor positions(int64_t offset, int64_t length) override;
};

}  // namespace ladder::nn
