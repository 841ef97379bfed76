// The core's threaded index and copy loops on two threads against plain loops: index_select,
// embedding, gather, concat, stack, split and slice (how: threaded_reference.h).
#include "helpers.h"
#include "threaded_reference.h"

#include <vector>

using namespace ladder;
using ladder::testing::Around;
using ladder::testing::at;
using ladder::testing::check_close;
using ladder::testing::leaf;
using ladder::testing::require_threaded;
using ladder::testing::to_tensor;
using ladder::testing::TwoThreads;

namespace {

// index_select by plain loops on x seen as (outer, size, inner), picking `count` rows: the values,
// and gy (outer, count, inner) scatter-added back onto the rows it came from.
struct Selected {
  std::vector<double> values, grad;
};
Selected select_rows(const Tensor& x, const Tensor& ids, const Tensor& gy, const Around& v) {
  const int64_t count = ids.numel();
  Selected s{std::vector<double>(static_cast<size_t>(v.outer * count * v.inner)), std::vector<double>(x.numel(), 0.0)};
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < count; ++i)
      for (int64_t j = 0; j < v.inner; ++j) {
        const int64_t src = (o * v.size + at(ids, i)) * v.inner + j, dst = (o * count + i) * v.inner + j;
        s.values[dst] = x.data()[src];
        s.grad[src] += gy.data()[dst];
      }
  return s;
}

void check_index_select(const Shape& shape, int64_t dim, int64_t count, Generator& gen) {
  CAPTURE(shape_str(shape));
  CAPTURE(dim);
  const Around v(shape, dim);
  require_threaded(v.outer * count, v.inner);  // forward: the picked rows
  require_threaded(v.inner, v.outer * count);  // backward: the columns, each over every pick
  const Tensor ids = randint(0, v.size, {count}, gen);  // count > size: ids repeat
  const Tensor x = leaf(randn(shape, gen));
  const Tensor y = index_select(x, dim, ids);
  const Tensor gy = randn(y.shape(), gen);
  y.backward(gy);
  const Selected expected = select_rows(x, ids, gy, v);
  check_close(y, to_tensor(expected.values, y.shape()), 0);
  check_close(x.grad(), to_tensor(expected.grad, shape), 1e-5f, 1e-6f);
}

// slice along dim, by plain loops on x seen as (outer, size, inner).
void check_slice(const Shape& shape, int64_t dim, int64_t start, int64_t end, int64_t step, Generator& gen) {
  CAPTURE(shape_str(shape));
  CAPTURE(dim);
  const Around v(shape, dim);
  const int64_t first = start < 0 ? start + v.size : start, count = (std::min(end, v.size) - first + step - 1) / step;
  Shape out_shape = shape;
  out_shape[dim] = count;
  require_threaded(numel(out_shape) / out_shape.back(), out_shape.back());  // strided_copy: rows of the last dim
  const Tensor x = leaf(randn(shape, gen));
  const Tensor y = slice(x, dim, start, end, step);
  REQUIRE(y.shape() == out_shape);
  const Tensor gy = randn(out_shape, gen);
  y.backward(gy);
  std::vector<double> out(numel(out_shape)), gx(x.numel(), 0.0);
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t k = 0; k < count; ++k)
      for (int64_t j = 0; j < v.inner; ++j) {
        const int64_t src = (o * v.size + first + k * step) * v.inner + j, dst = (o * count + k) * v.inner + j;
        out[dst] = x.data()[src];
        gx[src] += gy.data()[dst];
      }
  check_close(y, to_tensor(out, out_shape), 0);
  check_close(x.grad(), to_tensor(gx, shape), 0);
}

}  // namespace

TEST_CASE("index_select: the threaded copy and the threaded scatter-add with repeated ids, along dims 0 and 1") {
  TwoThreads threads;
  Generator gen(1);
  check_index_select({50, 64}, 0, 1024, gen);     // 1024 picks x 64 columns = 65536
  check_index_select({4, 30, 33}, 1, 300, gen);   // 1200 picks x 33 columns = 39600
}

TEST_CASE("embedding: rows looked up by repeated ids, their gradients added up across threads") {
  TwoThreads threads;
  Generator gen(2);
  const int64_t V = 40, D = 48;
  const Tensor ids = randint(0, V, {32, 40}, gen);  // 1280 ids over 40 rows: every row repeats
  require_threaded(ids.numel(), D);               // 61440
  require_threaded(D, ids.numel());
  const Tensor weight = leaf(randn({V, D}, gen));
  const Tensor y = embedding(weight, ids);
  REQUIRE(y.shape() == Shape{32, 40, D});
  const Tensor gy = randn(y.shape(), gen);
  y.backward(gy);
  const Selected expected = select_rows(weight, ids, gy, Around({V, D}, 0));
  check_close(y, to_tensor(expected.values, y.shape()), 0);
  check_close(weight.grad(), to_tensor(expected.grad, {V, D}), 1e-5f, 1e-6f);
}

TEST_CASE("gather along dims 0 and 1 on large inputs, repeated indices adding up") {
  // gather's loops are serial today; the shapes are large so that a threaded version is tested at once.
  TwoThreads threads;
  Generator gen(3);
  for (int64_t dim : {0, 1}) {
    CAPTURE(dim);
    const Shape x_shape = dim == 0 ? Shape{20, 301} : Shape{301, 20};
    const Shape index_shape = dim == 0 ? Shape{150, 301} : Shape{301, 150};  // 45150 picks of 20 values
    const Tensor x = leaf(randn(x_shape, gen)), index = randint(0, 20, index_shape, gen);
    const Tensor y = gather(x, dim, index);
    const Tensor gy = randn(index_shape, gen);
    y.backward(gy);
    std::vector<double> out(index.numel()), gx(x.numel(), 0.0);
    for (int64_t i = 0; i < index_shape[0]; ++i)
      for (int64_t j = 0; j < index_shape[1]; ++j) {
        const int64_t k = i * index_shape[1] + j;
        const int64_t src = dim == 0 ? at(index, k) * x_shape[1] + j : i * x_shape[1] + at(index, k);
        out[k] = x.data()[src];
        gx[src] += gy.data()[k];
      }
    check_close(y, to_tensor(out, index_shape), 0);
    check_close(x.grad(), to_tensor(gx, x_shape), 1e-5f, 1e-6f);
  }
}

TEST_CASE("concat and stack: the threaded slab copies, and the gradients cut back out of them") {
  TwoThreads threads;
  Generator gen(7);
  const int64_t R = 600;
  SUBCASE("concat along dim 1") {
    const std::vector<int64_t> widths{64, 97, 80};
    std::vector<Tensor> pieces;
    for (int64_t w : widths) {
      require_threaded(R, w);  // R slabs of w values each, forward (copy) and backward (narrow)
      pieces.push_back(leaf(randn({R, w}, gen)));
    }
    const Tensor y = concat(pieces, 1);
    REQUIRE(y.shape() == Shape{R, 241});
    const Tensor gy = randn(y.shape(), gen);
    y.backward(gy);
    int64_t offset = 0;
    for (size_t p = 0; p < pieces.size(); ++p) {
      const int64_t w = widths[p];
      std::vector<double> out(R * w), g(R * w);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t j = 0; j < w; ++j) {
          out[r * w + j] = y.data()[r * 241 + offset + j];
          g[r * w + j] = gy.data()[r * 241 + offset + j];
        }
      check_close(pieces[p], to_tensor(out, {R, w}), 0);
      check_close(pieces[p].grad(), to_tensor(g, {R, w}), 0);
      offset += w;
    }
  }
  SUBCASE("stack along dims 1 and 2") {
    const int64_t C = 64;
    require_threaded(R, C);      // dim 1: each piece is R slabs of C values
    require_threaded(R * C, 1);  // dim 2: each piece is R * C slabs of one value
    for (int64_t dim : {1, 2}) {
      CAPTURE(dim);
      std::vector<Tensor> pieces;
      for (int k = 0; k < 3; ++k) pieces.push_back(leaf(randn({R, C}, gen)));
      const Tensor y = stack(pieces, dim);
      REQUIRE(y.shape() == (dim == 1 ? Shape{R, 3, C} : Shape{R, C, 3}));
      const Tensor gy = randn(y.shape(), gen);
      y.backward(gy);
      for (int64_t k = 0; k < 3; ++k) {
        std::vector<double> out(R * C), g(R * C);
        for (int64_t r = 0; r < R; ++r)
          for (int64_t j = 0; j < C; ++j) {
            const int64_t i = dim == 1 ? (r * 3 + k) * C + j : (r * C + j) * 3 + k;
            out[r * C + j] = y.data()[i];
            g[r * C + j] = gy.data()[i];
          }
        check_close(pieces[k], to_tensor(out, {R, C}), 0);
        check_close(pieces[k].grad(), to_tensor(g, {R, C}), 0);
      }
    }
  }
}

TEST_CASE("split and slice: the threaded strided copy and its add-back, any step and dim") {
  TwoThreads threads;
  Generator gen(8);
  check_slice({400, 300}, 1, 1, 299, 3, gen);     // (400, 100): every third column
  check_slice({400, 300}, 0, -397, 400, 2, gen);  // (199, 300): every other row from row 3
  check_slice({20, 60, 90}, 1, 5, 60, 2, gen);    // (20, 28, 90): rows of 90 at odd offsets

  // split: three narrow pieces of x (1600, 150) along dim 1; the smallest, (1600, 22), still splits.
  require_threaded(1600, 22);
  const Tensor x = leaf(randn({1600, 150}, gen));
  const std::vector<Tensor> parts = split(x, 64, 1);
  REQUIRE(parts.size() == 3);
  const Tensor weights = randn({1600, 150}, gen);
  Tensor loss = scalar(0);
  int64_t offset = 0;
  for (const Tensor& part : parts) {
    const int64_t w = part.size(1);
    std::vector<double> expected(1600 * w);
    for (int64_t r = 0; r < 1600; ++r)
      for (int64_t j = 0; j < w; ++j) expected[r * w + j] = x.data()[r * 150 + offset + j];
    check_close(part, to_tensor(expected, {1600, w}), 0);
    loss = loss + sum(part * narrow(weights, 1, offset, w));
    offset += w;
  }
  loss.backward();
  check_close(x.grad(), weights, 0);  // each element of x is in exactly one part
}
