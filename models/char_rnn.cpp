#include "models/char_rnn.h"

#include "core/autograd.h"
#include "core/error.h"
#include "models/sampling.h"
#include "core/ops.h"

namespace ladder::models {

CharRNN::CharRNN(int64_t vocab, int64_t embed, int64_t hidden, nn::CellKind cell, nn::RecurrentOptions options,
                 Generator& gen)
    : Module("CharRNN") {
  options.batch_first = true;  // ids come as (B,T)
  embedding = register_module("embedding", std::make_shared<nn::Embedding>(vocab, embed, 1.0f, gen));
  rnn = register_module("rnn", std::make_shared<nn::Recurrent>(cell, embed, hidden, options, gen));
  head = register_module("head", std::make_shared<nn::Linear>(hidden * rnn->directions(), vocab, nn::LinearOptions{}, gen));
}

CharRNN::Output CharRNN::forward(const Tensor& ids, const Tensor& h0, const Tensor& c0) {
  if (ids.dim() != 2) fail("CharRNN", "expects ids (B,T), got ", shape_str(ids.shape()));
  nn::RecurrentOutput states = rnn->forward((*embedding)(ids), h0, c0);  // (B,T,E) -> (B,T,H)
  return {(*head)(states.output), states};
}

void CharRNN::check_unidirectional(const char* op) const {
  if (rnn->directions() != 1)
    fail(op, "a bidirectional model reads the future: it cannot predict the next token or carry a state forward");
}

std::vector<int> CharRNN::sample(const std::vector<int>& prompt, int length, Generator& gen, float temperature) {
  if (prompt.empty()) fail("CharRNN::sample", "needs at least one token to start from");
  if (!(temperature > 0)) fail("CharRNN::sample", "temperature must be positive, got ", temperature);
  check_unidirectional("CharRNN::sample");
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(*this);  // no dropout while generating
  std::vector<float> first(prompt.begin(), prompt.end());
  Output out = forward(tensor(first, {1, static_cast<int64_t>(first.size())}));
  std::vector<int> generated;
  for (int k = 0; k < length; ++k) {
    const int64_t T = out.logits.size(1);
    const Tensor last = reshape(narrow(out.logits, 1, T - 1, 1), {-1});  // (V)
    check_finite_logits("CharRNN::sample", last.data(), last.numel());
    const Tensor p = softmax(last / temperature, -1);
    float u = gen.uniform();
    int next = 0;
    while (next + 1 < p.numel() && u >= p.data()[next]) u -= p.data()[next++];
    generated.push_back(next);
    out = forward(tensor({static_cast<float>(next)}, {1, 1}), out.states.h_n, out.states.c_n);
  }
  return generated;
}

Tensor CharRNN::loss(const data::Batch& batch) {
  check_unidirectional("CharRNN::loss");
  const Output out = forward(batch.x, carried_h_, carried_c_);
  carried_h_ = out.states.h_n.detach();  // keep the state, drop its history
  if (out.states.c_n.defined()) carried_c_ = out.states.c_n.detach();
  return cross_entropy(out.logits, batch.y);
}

void CharRNN::reset_state() { carried_h_ = carried_c_ = Tensor(); }

double stream_nll(CharRNN& model, const std::vector<int>& ids, int64_t block) {
  model.check_unidirectional("stream_nll");
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);  // no dropout while measuring
  data::ContiguousBatcher batcher(ids, 1, block);
  Tensor h, c;
  double total = 0;
  for (int64_t w = 0; w < batcher.windows(); ++w) {
    const data::Batch b = batcher.next();
    const CharRNN::Output out = model.forward(b.x, h, c);
    total += cross_entropy(out.logits, b.y, {.reduction = Reduction::sum}).item();
    h = out.states.h_n;
    c = out.states.c_n;
  }
  return total / static_cast<double>(batcher.windows() * block);
}

}  // namespace ladder::models
