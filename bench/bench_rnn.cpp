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
  const auto torch = pytorch_reference("bench_rnn.py");
  Generator gen(4);
  models::CharRNN model(65, 64, 256, nn::CellKind::lstm, {.num_layers = 2}, gen);
  optim::Adam adam(model.named_parameters(), {.lr = 2e-3f});
  const Tensor x = randint(0, 65, {32, 64}, gen), y = randint(0, 65, {32, 64}, gen);
  const int threads_before = num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const double ms = time_ms([&] {
      adam.zero_grad();
      cross_entropy(model.forward(x).logits, y).backward();
      adam.step();
    });
    const std::string name = "lstm_lm_step_2x256_b32_t64_threads" + std::to_string(threads);
    report(name, ms, torch.count(name) ? torch.at(name) : -1,
           "(ref: PyTorch nn.LSTM, same thread count; embed 64, vocab 65; fwd + bwd + Adam)");
  }
  set_num_threads(threads_before);
}

}  // namespace ladder::bench
