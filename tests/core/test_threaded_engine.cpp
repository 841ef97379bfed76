// The engine around the kernels on two threads: autograd adding a gradient into an existing .grad,
// and loops run by fewer threads than blocks (set_running_threads).
#include "helpers.h"
#include "threaded_reference.h"

#include <vector>

using namespace ladder;
using ladder::testing::check_close;
using ladder::testing::leaf;
using ladder::testing::require_threaded;
using ladder::testing::TwoThreads;

TEST_CASE("autograd adds a second gradient into an existing .grad on two threads") {
  TwoThreads threads;
  Generator gen(18);
  const Shape shape{211, 191};
  require_threaded(numel(shape), 1);  // accumulate_owned: one element of work each
  const Tensor a = randn(shape, gen), b = randn(shape, gen);
  SUBCASE("a leaf used twice, then a second backward") {
    const Tensor x = leaf(randn(shape, gen));
    (sum(x * a) + sum(x * b)).backward();
    check_close(x.grad(), a + b, 0);
    (sum(x * a) + sum(x * b)).backward();
    check_close(x.grad(), (a + b) * 2.0f, 1e-6f, 1e-6f);  // added in another order: a rounding apart
  }
  SUBCASE("a retained non-leaf gradient over two passes of one graph") {
    const Tensor x = leaf(randn(shape, gen));
    Tensor h = x * 3.0f;
    h.retain_grad();
    const Tensor loss = sum(h * a);
    loss.backward({}, /*retain_graph=*/true);
    loss.backward();
    check_close(h.grad(), a * 2.0f, 0);
    check_close(x.grad(), a * 6.0f, 0);
  }
  SUBCASE("sum's gradient, kept reduced, broadcast into a fresh .grad, an existing one and a pending node") {
    for (int64_t dim : {0, 1}) {
      CAPTURE(dim);
      const Shape reduced = dim == 0 ? Shape{191} : Shape{211};
      const Tensor gy = randn(reduced, gen);
      // expected[i][j] = gy[j] (dim 0 reduced) or gy[i] (dim 1 reduced), times the uses.
      Tensor once = empty(shape);
      for (int64_t i = 0; i < shape[0]; ++i)
        for (int64_t j = 0; j < shape[1]; ++j) once.data()[i * shape[1] + j] = gy.data()[dim == 0 ? j : i];
      const Tensor x = leaf(randn(shape, gen));
      sum(x, {dim}).backward(gy);
      check_close(x.grad(), once, 0);
      sum(x, {dim}).backward(gy);
      check_close(x.grad(), once * 2.0f, 0);
      const Tensor y = leaf(randn(shape, gen));
      const Tensor h = y * 1.0f;  // h's node gets the broadcast gradient first, then a full one
      (sum(h, {dim}) + sum(h * a, {dim})).backward(gy);
      check_close(y.grad(), once + once * a, 1e-6f, 1e-6f);
    }
  }
}

TEST_CASE("fewer threads running the same blocks give the same results bit for bit") {
  TwoThreads two;
  const Tensor x = randn({513, 129});
  const Tensor all_running = sum(softmax(x, -1) * x, {0});
  set_running_threads(1);  // as the harness asks while other programs keep the cores busy
  const int running = running_threads();
  const Tensor one_running = sum(softmax(x, -1) * x, {0});
  // One thread opens no parallel region: a BLAS call in the body then sees it is not inside one
  // and uses its own (one) thread, instead of starting a team of new threads on every call.
  int level = -1;
  parallel_for(2, kMinParallelWork, [&](int64_t, int64_t) { level = omp_get_level(); });
  set_running_threads(5);  // more than the blocks: as many as there are
  const int clamped = running_threads();
  CHECK(num_threads() == 2);
  CHECK(running == 1);
  CHECK(level == 0);
  CHECK(one_running.to_vector() == all_running.to_vector());
  CHECK(clamped == 2);
}

TEST_CASE("an error thrown in a block of a parallel loop reaches the caller as itself, after every block is done") {
  TwoThreads threads;
  const int64_t n = 4 * kMinParallelWork;
  require_threaded(n, 1);
  bool first_block_done = false;  // written by block 0 alone, read after the loop
  // The second block throws; the first finishes. OpenMP alone would end the process here.
  CHECK_THROWS_WITH_AS(parallel_for_blocks(n, 1, [&](int64_t, int64_t, int block) {
                         if (block == 1) throw Error("block 1 failed");
                         first_block_done = true;
                       }),
                       "block 1 failed", Error);
  CHECK(first_block_done);
}
