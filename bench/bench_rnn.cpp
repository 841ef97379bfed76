// A 2-layer LSTM character language model (hidden 256, batch 32, sequence 64, vocabulary 65):
// one training step (forward, backward, Adam), in ladder and with torch.nn.LSTM.
#include "bench/bench.h"
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
  const double ms = time_ms([&] {
    adam.zero_grad();
    cross_entropy(model.forward(x).logits, y).backward();
    adam.step();
  });
  report("lstm_lm_train_step_2x256_b32_t64", ms,
         torch.count("lstm_lm_train_step_2x256_b32_t64") ? torch.at("lstm_lm_train_step_2x256_b32_t64") : -1,
         "(ref: PyTorch nn.LSTM; embed 64, vocab 65; fwd + bwd + Adam)");
}

}  // namespace ladder::bench
