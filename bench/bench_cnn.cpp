// The CNN of lesson 04: one training step (forward, backward, Adam) on a batch of 64 images,
// in ladder and in PyTorch.
#include "bench/bench.h"
#include "core/ops.h"
#include "models/cnn.h"
#include "optim/adam.h"

namespace ladder::bench {

void run_cnn() {
  const auto torch = pytorch_reference("bench_cnn.py");
  Generator gen(3);
  const auto net = models::glyph_cnn(20, 10, gen);
  optim::Adam adam(net->named_parameters(), {.lr = 1e-3f});
  const Tensor x = randn({64, 1, 20, 20}, gen), y = randint(0, 10, {64}, gen);
  const double ms = time_ms([&] {
    adam.zero_grad();
    cross_entropy((*net)(x), y).backward();
    adam.step();
  });
  report("cnn_train_step_b64_20x20", ms, torch.count("cnn_train_step_b64_20x20") ? torch.at("cnn_train_step_b64_20x20") : -1,
         "(ref: PyTorch; conv-bn-relu-pool x2, global pool, linear; fwd + bwd + Adam)");
}

}  // namespace ladder::bench
