#include "nn/attention/attention_workload.h"

#include <memory>

#include "core/autograd.h"
#include "core/ops.h"

namespace ladder::nn {

namespace {

// The kind of `settings` for heads of the measured size (vq sizes its codebooks by them).
std::shared_ptr<AttentionKind> measured_kind(AttentionSettings settings, int64_t length, Generator& gen) {
  settings.heads = kWorkloadHeads, settings.head_dim = kWorkloadHeadDim, settings.max_length = length;
  return make_attention(settings, gen);
}

struct Inputs {
  Tensor q, k, v, gout;  // (1,H,T,D) each
};

}  // namespace

std::function<void()> layer_training_step(const AttentionSettings& settings, int64_t length, bool causal,
                                          Generator& gen) {
  const std::shared_ptr<AttentionKind> kind = measured_kind(settings, length, gen);
  const Shape shape{1, kWorkloadHeads, length, kWorkloadHeadDim};
  auto in = std::make_shared<Inputs>();
  in->q = randn(shape, gen), in->k = randn(shape, gen), in->v = randn(shape, gen), in->gout = randn(shape, gen);
  for (Tensor* x : {&in->q, &in->k, &in->v}) x->requires_grad_();
  return [kind, in, causal] {
    for (Tensor* x : {&in->q, &in->k, &in->v}) x->zero_grad();
    const Tensor out = kind->attend(in->q, in->k, in->v, {.causal = causal});
    // One backward through both, as optim::train_step takes it: they may share a graph (vq's
    // normalised keys feed the attention and the commitment loss).
    const Tensor auxiliary = kind->take_auxiliary_loss();
    if (auxiliary.defined())
      (sum(out * in->gout) + auxiliary).backward();
    else
      out.backward(in->gout);
    kind->after_optimizer_step();
  };
}

std::function<void()> generated_token(const AttentionSettings& settings, int64_t context, Generator& gen) {
  NoGradGuard no_grad;
  const std::shared_ptr<AttentionKind> kind = measured_kind(settings, context + 1, gen);
  kind->eval();  // generation: a kind that learns from its keys (vq's codebook) leaves them alone
  const std::shared_ptr<AttentionState> filled = kind->start();
  const Tensor keys = randn({1, kWorkloadHeads, context, kWorkloadHeadDim}, gen);
  kind->step(keys, keys, randn(keys.shape(), gen), *filled);
  const Tensor q = randn({1, kWorkloadHeads, 1, kWorkloadHeadDim}, gen), k = randn(q.shape(), gen),
               v = randn(q.shape(), gen);
  return [kind, filled, q, k, v] {
    NoGradGuard no_grad;
    const std::unique_ptr<AttentionState> state = filled->clone();
    kind->step(q, k, v, *state);
  };
}

}  // namespace ladder::nn
