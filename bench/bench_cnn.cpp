// The CNN of lesson 04: one training step (forward, backward, Adam) on a batch of 64 images,
// in ladder and in PyTorch.
#include "bench/bench.h"
#include "core/ops.h"
#include "models/cnn.h"
#include "optim/adam.h"

namespace ladder::bench {

void run_cnn() {
  Generator gen(3);
  const auto net = models::glyph_cnn(20, 10, gen);
  optim::Adam adam(net->named_parameters(), {.lr = 1e-3f});
  const Tensor x = randn({64, 1, 20, 20}, gen), y = randint(0, 10, {64}, gen);
  auto step = [&] {
    adam.zero_grad();
    cross_entropy((*net)(x), y).backward();
    adam.step();
  };
  compare_with_pytorch("bench_cnn.py",
                       {{.name = "cnn_train_step_b64_20x20",
                         .step = step,
                         .note = "(ref: PyTorch; conv-bn-relu-pool x2, global pool, linear; fwd + bwd + Adam)"}});
}

}  // namespace ladder::bench
