// Embedding: a table of vectors, one row per token id.
#pragma once

#include "nn/module.h"

namespace ladder::nn {

class Embedding : public Module {
 public:
  // Rows start as N(0, std^2); PyTorch's default std is 1.
  Embedding(int64_t num_embeddings, int64_t dim, float std = 1.0f, Generator& gen = default_generator());
  Tensor forward(const Tensor& ids) override;  // ids (...) -> (..., dim)

  Tensor weight;  // (num_embeddings, dim)

 protected:
  std::string describe() const override;
};

}  // namespace ladder::nn
