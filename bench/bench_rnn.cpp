// A 2-layer LSTM character language model (hidden 256, batch 32, sequence 64, vocabulary 65):
// one training step (forward, backward, Adam), in ladder and with torch.nn.LSTM, at one and at
// two threads on each side (a recurrence's small per-step GEMMs gain less from threads than big ones).
#include "bench/bench.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"
#include "models/char_rnn.h"
#include "optim/adam.h"

namespace ladder::bench {

void run_rnn() {
  Generator gen(4);
  models::CharRNN model(65, 64, 256, nn::CellKind::lstm, {.num_layers = 2}, gen);
  optim::Adam adam(model.named_parameters(), {.lr = 2e-3f});
  const Tensor x = randint(0, 65, {32, 64}, gen), y = randint(0, 65, {32, 64}, gen);
  auto step = [&] {
    adam.zero_grad();
    cross_entropy(model.forward(x).logits, y).backward();
    adam.step();
  };
  std::vector<Workload> workloads;
  for (int threads : {1, 2})
    workloads.push_back({.name = "lstm_lm_step_2x256_b32_t64_threads" + std::to_string(threads),
                         .step = step,
                         .threads = threads,
                         .note = "(ref: PyTorch nn.LSTM, same thread count; embed 64, vocab 65; fwd + bwd + Adam)"});
  compare_with_pytorch("bench_rnn.py", workloads);
}

}  // namespace ladder::bench
