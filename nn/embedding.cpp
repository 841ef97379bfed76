#include "nn/embedding.h"

#include "core/error.h"
#include "core/ops.h"
#include "nn/init.h"

namespace ladder::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t dim, float std, Generator& gen) : Module("Embedding") {
  if (num_embeddings <= 0 || dim <= 0)
    fail("Embedding", "sizes must be positive, got ", num_embeddings, " x ", dim);
  weight = register_parameter("weight", empty({num_embeddings, dim}), ParamKind::embedding);
  init_normal(weight, 0, std, gen);
}

Tensor Embedding::forward(const Tensor& ids) { return embedding(weight, ids); }

std::string Embedding::describe() const { return cat(weight.size(0), ", ", weight.size(1)); }

}  // namespace ladder::nn
