#include "models/mlp_lm.h"

#include "core/autograd.h"
#include "core/error.h"
#include "models/sampling.h"
#include "core/ops.h"
#include "data/tokenizer.h"

namespace ladder::models {

MLPLanguageModel::MLPLanguageModel(int64_t vocab, int64_t context, int64_t embed, int64_t hidden_size, Generator& gen)
    : Module("MLPLanguageModel"), context_(context) {
  if (context < 1) fail("MLPLanguageModel", "context must be at least 1, got ", context);
  embedding = register_module("embedding", std::make_shared<nn::Embedding>(vocab, embed, 1.0f, gen));
  hidden = register_module("hidden", std::make_shared<nn::Linear>(context * embed, hidden_size, nn::LinearOptions{}, gen));
  output = register_module("output", std::make_shared<nn::Linear>(hidden_size, vocab, nn::LinearOptions{}, gen));
}

Tensor MLPLanguageModel::forward(const Tensor& contexts) {
  if (contexts.dim() != 2 || contexts.size(1) != context_)
    fail("MLPLanguageModel", "expects contexts (B, ", context_, "), got ", shape_str(contexts.shape()));
  const Tensor e = (*embedding)(contexts);                       // (B, context, embed)
  const Tensor h = tanh((*hidden)(flatten(e, 1)));               // (B, hidden)
  return (*output)(h);                                           // (B, vocab)
}

Tensor MLPLanguageModel::loss(const data::Batch& batch) { return cross_entropy(forward(batch.x), batch.y); }

std::vector<int> MLPLanguageModel::sample(Generator& gen, int max_length, float temperature) {
  NoGradGuard no_grad;
  std::vector<float> window(static_cast<size_t>(context_), static_cast<float>(data::Tokenizer::kBos));
  std::vector<int> out;
  for (int t = 0; t < max_length; ++t) {
    const Tensor logits = forward(tensor(window, {1, context_}));  // (1, V)
    check_finite_logits("MLPLanguageModel::sample", logits.data(), logits.numel());
    const Tensor p = softmax(logits / temperature, -1);
    float u = gen.uniform();
    int next = 0;
    while (next + 1 < p.numel() && u >= p.data()[next]) u -= p.data()[next++];
    if (next == data::Tokenizer::kEos) break;
    out.push_back(next);
    window.erase(window.begin());
    window.push_back(static_cast<float>(next));
  }
  return out;
}

}  // namespace ladder::models
