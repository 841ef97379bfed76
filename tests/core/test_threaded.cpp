// Every threaded loop of the core, run on two threads on a shape large enough to split, forward and
// backward, against a naive twin: the *_naive kernel where there is one, else plain loops written
// here (double accumulation). Each case first requires that its shapes really take the threaded
// path: parallel_blocks(n, work) > 1, i.e. n * work >= kMinParallelWork (32768) for the n and the
// work per item the kernel passes to parallel_for. Sizes are odd where they can be, so that the
// split between the two threads falls inside a row.
#include "helpers.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/kernels/conv.h"
#include "core/kernels/layer_norm.h"
#include "core/kernels/softmax.h"

using namespace ladder;
using ladder::testing::check_close;
using ladder::testing::require_threaded;
using ladder::testing::TwoThreads;

namespace {

Tensor leaf(const Tensor& values) {
  Tensor t = values.clone();
  t.requires_grad_();
  return t;
}

Tensor to_tensor(const std::vector<double>& values, const Shape& shape) {
  Tensor t = empty(shape);
  for (size_t i = 0; i < values.size(); ++i) t.data()[i] = static_cast<float>(values[i]);
  return t;
}

int64_t at(const Tensor& index, int64_t i) { return static_cast<int64_t>(index.data()[i]); }

// The sizes before dim, at dim and after it: a tensor seen as (outer, size, inner).
struct Around {
  int64_t outer = 1, size = 1, inner = 1;
  Around(const Shape& shape, int64_t dim) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      (d < dim ? outer : d == dim ? size : inner) *= shape[d];
  }
};

// The flat position, in an operand of shape `from`, of the element that element i of the
// broadcast result (shape `to`) reads: NumPy's rule, aligned from the right.
int64_t broadcast_source(int64_t i, const Shape& to, const Shape& from) {
  int64_t offset = 0, stride = 1;
  for (size_t k = 0; k < to.size(); ++k) {
    const int64_t coord = i % to[to.size() - 1 - k];
    i /= to[to.size() - 1 - k];
    if (k >= from.size()) continue;
    const int64_t size = from[from.size() - 1 - k];
    if (size != 1) offset += coord * stride;
    stride *= size;
  }
  return offset;
}

// sum_to of n values down to `kept` along one run of consecutive dims splits the kept outputs
// (work n / kept each), or, down to one value, the n terms themselves.
void require_sum_threaded(int64_t n, int64_t kept) {
  if (kept == 1) require_threaded(n, 1);
  else require_threaded(kept, n / kept);
}

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

// out = a / b with broadcasting; ga and gb summed back to the shapes of a and b.
void check_div_broadcast(const Shape& a_shape, const Shape& b_shape, const Shape& out_shape, Generator& gen) {
  CAPTURE(shape_str(a_shape));
  CAPTURE(shape_str(b_shape));
  const int64_t n = numel(out_shape);
  require_threaded(n, 1);  // the forward loop and the two derivative loops
  for (const Shape* s : {&a_shape, &b_shape})
    if (numel(*s) < n) require_sum_threaded(n, numel(*s));  // sum_to of the broadcast gradient
  const Tensor a = leaf(uniform(a_shape, -2, 2, gen)), b = leaf(uniform(b_shape, 0.5f, 2, gen));
  const Tensor y = a / b;
  REQUIRE(y.shape() == out_shape);
  const Tensor gy = randn(out_shape, gen);
  y.backward(gy);
  std::vector<double> out(n), ga(a.numel(), 0.0), gb(b.numel(), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ia = broadcast_source(i, out_shape, a_shape), ib = broadcast_source(i, out_shape, b_shape);
    const double va = a.data()[ia], vb = b.data()[ib], g = gy.data()[i];
    out[i] = va / vb;
    ga[ia] += g / vb;
    gb[ib] -= g * va / (vb * vb);
  }
  check_close(y, to_tensor(out, out_shape), 0, 1e-7f);
  check_close(a.grad(), to_tensor(ga, a_shape), 1e-4f, 1e-5f);
  check_close(b.grad(), to_tensor(gb, b_shape), 1e-4f, 1e-5f);
}

void check_expand(const Shape& from, const Shape& to, Generator& gen) {
  CAPTURE(shape_str(from));
  CAPTURE(shape_str(to));
  require_threaded(numel(to), 1);
  require_sum_threaded(numel(to), numel(from));
  const Tensor x = leaf(randn(from, gen));
  const Tensor y = expand(x, to);
  const Tensor gy = randn(to, gen);
  y.backward(gy);
  std::vector<double> out(numel(to)), gx(x.numel(), 0.0);
  for (int64_t i = 0; i < numel(to); ++i) {
    const int64_t ix = broadcast_source(i, to, from);
    out[i] = x.data()[ix];
    gx[ix] += gy.data()[i];
  }
  check_close(y, to_tensor(out, to), 0);
  check_close(x.grad(), to_tensor(gx, from), 1e-4f, 1e-5f);
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

// Running sums along dim, forwards (the value) and backwards (the gradient), in double.
void check_cumsum(const Shape& shape, int64_t dim, Generator& gen) {
  CAPTURE(shape_str(shape));
  CAPTURE(dim);
  const Around v(shape, dim);
  require_threaded(v.outer * v.inner, v.size);
  const Tensor x = leaf(randn(shape, gen));
  const Tensor y = cumsum(x, dim);
  const Tensor gy = randn(shape, gen);
  y.backward(gy);
  std::vector<double> out(x.numel()), gx(x.numel());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t j = 0; j < v.inner; ++j) {
      double forward = 0, backward = 0;
      for (int64_t k = 0; k < v.size; ++k) {
        const int64_t front = (o * v.size + k) * v.inner + j, back = (o * v.size + v.size - 1 - k) * v.inner + j;
        out[front] = forward += x.data()[front];
        gx[back] = backward += gy.data()[back];
      }
    }
  check_close(y, to_tensor(out, shape), 1e-6f, 1e-6f);
  check_close(x.grad(), to_tensor(gx, shape), 1e-6f, 1e-6f);
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

TEST_CASE("unary_op: forward and derivative loops of several elementwise ops") {
  TwoThreads threads;
  Generator gen(4);
  const Shape shape{211, 191};  // 40301 elements, work 1 each
  require_threaded(numel(shape), 1);
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> op;
    double (*f)(double);
    double (*df)(double);
  };
  const Case cases[] = {
      {"exp", [](const Tensor& x) { return exp(x); }, [](double v) { return std::exp(v); },
       [](double v) { return std::exp(v); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](double v) { return std::tanh(v); },
       [](double v) { return 1 - std::tanh(v) * std::tanh(v); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, [](double v) { return 1 / (1 + std::exp(-v)); },
       [](double v) { return std::exp(-v) / ((1 + std::exp(-v)) * (1 + std::exp(-v))); }},
      {"relu", [](const Tensor& x) { return relu(x); }, [](double v) { return v > 0 ? v : 0.0; },
       [](double v) { return v > 0 ? 1.0 : 0.0; }},
      {"sin", [](const Tensor& x) { return sin(x); }, [](double v) { return std::sin(v); },
       [](double v) { return std::cos(v); }},
      {"x * 2.5", [](const Tensor& x) { return x * 2.5f; }, [](double v) { return v * 2.5; },
       [](double) { return 2.5; }},
      {"gelu", [](const Tensor& x) { return gelu(x); },
       [](double v) { return v * 0.5 * std::erfc(-v / std::sqrt(2.0)); },
       [](double v) { return 0.5 * std::erfc(-v / std::sqrt(2.0)) + v * std::exp(-v * v / 2) / std::sqrt(2 * M_PI); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Tensor x = leaf(uniform(shape, -3, 3, gen));
    const Tensor y = c.op(x);
    const Tensor gy = randn(shape, gen);
    y.backward(gy);
    std::vector<double> out(x.numel()), gx(x.numel());
    for (int64_t i = 0; i < x.numel(); ++i) {
      out[i] = c.f(x.data()[i]);
      gx[i] = gy.data()[i] * c.df(x.data()[i]);
    }
    check_close(y, to_tensor(out, shape), 1e-7f, 2e-6f);
    check_close(x.grad(), to_tensor(gx, shape), 1e-6f, 4e-6f);
  }
}

TEST_CASE("binary_op: every broadcast stride pattern, forward and the gradients summed back") {
  TwoThreads threads;
  Generator gen(5);
  const int64_t R = 257, C = 163, A = 7, B = 37;  // 41891 and 42217 outputs
  check_div_broadcast({R, C}, {R, C}, {R, C}, gen);  // same shape
  check_div_broadcast({R, C}, {C}, {R, C}, gen);     // row vector, on either side
  check_div_broadcast({C}, {R, C}, {R, C}, gen);
  check_div_broadcast({R, C}, {1, C}, {R, C}, gen);
  check_div_broadcast({R, C}, {R, 1}, {R, C}, gen);  // column vector, on either side
  check_div_broadcast({R, 1}, {R, C}, {R, C}, gen);
  check_div_broadcast({R, C}, {}, {R, C}, gen);      // scalar, on either side
  check_div_broadcast({1, 1}, {R, C}, {R, C}, gen);
  check_div_broadcast({R, 1}, {1, C}, {R, C}, gen);  // both broadcast: an outer product
  check_div_broadcast({1, C}, {R, 1}, {R, C}, gen);
  check_div_broadcast({A, B, C}, {A, 1, C}, {A, B, C}, gen);  // a broadcast middle dim: carries across two dims
  check_div_broadcast({A, 1, C}, {A, B, C}, {A, B, C}, gen);
  check_div_broadcast({A, B, C}, {B, C}, {A, B, C}, gen);     // a missing leading dim
  check_div_broadcast({A, B, 1}, {A, B, C}, {A, B, C}, gen);
}

TEST_CASE("expand: the threaded broadcast copy and its gradient") {
  TwoThreads threads;
  Generator gen(6);
  check_expand({163}, {257, 163}, gen);
  check_expand({257, 1}, {257, 163}, gen);
  check_expand({}, {257, 163}, gen);
  check_expand({7, 1, 163}, {7, 37, 163}, gen);
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

TEST_CASE("cumsum forwards and its gradient backwards, along the first, middle and last dims") {
  TwoThreads threads;
  Generator gen(9);
  check_cumsum({64, 1023}, 0, gen);    // 1023 lines of 64
  check_cumsum({64, 1023}, 1, gen);    // 64 lines of 1023
  check_cumsum({16, 51, 48}, 1, gen);  // 768 lines of 51, strided by 48
}

TEST_CASE("max, min, amax and amin over dim 0: values, positions and the gradient shared by ties") {
  TwoThreads threads;
  Generator gen(10);
  const int64_t R = 301, C = 150;
  require_threaded(C, R);  // one output per column, each reading R values
  const Tensor x = randint(0, 5, {R, C}, gen);  // five values only: ties everywhere
  for (bool largest : {true, false}) {
    CAPTURE(largest);
    auto better = [largest](float v, float best) { return largest ? v > best : v < best; };
    // Reference: the extreme of each column, where it first occurs, and how many times it occurs.
    std::vector<double> best(C), first(C, 0.0), ties(C, 0.0);
    for (int64_t j = 0; j < C; ++j) {
      best[j] = x.data()[j];
      for (int64_t i = 1; i < R; ++i)
        if (better(x.data()[i * C + j], static_cast<float>(best[j]))) {
          best[j] = x.data()[i * C + j];
          first[j] = static_cast<double>(i);
        }
      for (int64_t i = 0; i < R; ++i) ties[j] += x.data()[i * C + j] == best[j] ? 1 : 0;
    }
    const Tensor gy = randn({C}, gen);

    const Tensor xa = leaf(x);
    const ValuesIndices along = largest ? max(xa, 0) : min(xa, 0);
    check_close(along.values, to_tensor(best, {C}), 0);
    check_close(along.indices, to_tensor(first, {C}), 0);
    along.values.backward(gy);
    std::vector<double> g_first(R * C, 0.0), g_shared(R * C, 0.0);
    for (int64_t j = 0; j < C; ++j) {
      g_first[static_cast<int64_t>(first[j]) * C + j] = gy.data()[j];
      for (int64_t i = 0; i < R; ++i)
        if (x.data()[i * C + j] == best[j]) g_shared[i * C + j] = gy.data()[j] / ties[j];
    }
    check_close(xa.grad(), to_tensor(g_first, {R, C}), 0);

    const Tensor xb = leaf(x);
    const Tensor extreme = largest ? amax(xb, {0}) : amin(xb, {0});
    check_close(extreme, to_tensor(best, {C}), 0);
    extreme.backward(gy);
    check_close(xb.grad(), to_tensor(g_shared, {R, C}), 1e-7f, 1e-6f);
  }
}

TEST_CASE("matmul: the threaded loop over broadcast batches of small GEMMs, forward and backward") {
  TwoThreads threads;
  Generator gen(11);
  const int64_t M = 16, K = 16, N = 16;
  require_threaded(12, M * N * K);  // batches (4,1) and (3) broadcast to (4,3): 12 GEMMs
  for (bool transpose_b : {false, true}) {
    CAPTURE(transpose_b);
    const Tensor a = leaf(randn({4, 1, M, K}, gen));
    const Tensor b = leaf(randn(transpose_b ? Shape{3, N, K} : Shape{3, K, N}, gen));
    const Tensor y = matmul(a, b, {.transpose_b = transpose_b});
    REQUIRE(y.shape() == Shape{4, 3, M, N});
    const Tensor gy = randn(y.shape(), gen);
    y.backward(gy);
    auto b_at = [&](int64_t j, int64_t k, int64_t n) {  // op(b)[j] (K,N) at (k, n)
      return static_cast<double>(b.data()[j * K * N + (transpose_b ? n * K + k : k * N + n)]);
    };
    std::vector<double> out(y.numel(), 0.0), ga(a.numel(), 0.0), gb(b.numel(), 0.0);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            const int64_t o = ((i * 3 + j) * M + m) * N + n;
            for (int64_t k = 0; k < K; ++k) {
              const double va = a.data()[(i * M + m) * K + k];
              out[o] += va * b_at(j, k, n);
              ga[(i * M + m) * K + k] += gy.data()[o] * b_at(j, k, n);
              gb[j * K * N + (transpose_b ? n * K + k : k * N + n)] += gy.data()[o] * va;
            }
          }
    check_close(y, to_tensor(out, y.shape()), 1e-5f, 1e-5f);
    check_close(a.grad(), to_tensor(ga, a.shape()), 1e-4f, 1e-5f);
    check_close(b.grad(), to_tensor(gb, b.shape()), 1e-4f, 1e-5f);
  }
}

TEST_CASE("linear: the threaded bias rows and the GEMM into them, against matmul then add") {
  TwoThreads threads;
  Generator gen(13);
  const int64_t rows = 5 * 83, in = 47, out = 131;
  require_threaded(rows, out);
  const Tensor x = leaf(randn({5, 83, in}, gen)), w = leaf(randn({out, in}, gen)), b = leaf(randn({out}, gen));
  const Tensor x2 = leaf(x.detach()), w2 = leaf(w.detach()), b2 = leaf(b.detach());
  const Tensor gy = randn({5, 83, out}, gen);
  const Tensor y = linear(x, w, b), naive = matmul(x2, w2, {.transpose_b = true}) + b2;
  y.backward(gy);
  naive.backward(gy);
  check_close(y, naive, 1e-5f, 1e-5f);
  check_close(x.grad(), x2.grad(), 1e-5f, 1e-5f);
  check_close(w.grad(), w2.grad(), 1e-4f, 1e-5f);
  check_close(b.grad(), b2.grad(), 1e-4f, 1e-5f);
}

TEST_CASE("softmax and log_softmax over the last dim: the fused row kernels against their naive twins") {
  TwoThreads threads;
  Generator gen(12);
  const int64_t rows = 601, cols = 97;
  require_threaded(rows, cols);  // forward and backward split the rows
  const Tensor x = randn({rows, cols}, gen) * 4.0f, gy = randn({rows, cols}, gen);
  for (bool log_space : {false, true}) {
    CAPTURE(log_space);
    const Tensor xl = leaf(x);
    const Tensor y = log_space ? log_softmax(xl, -1) : softmax(xl, -1);
    y.backward(gy);
    Tensor y_naive = empty_like(x), gx_naive = empty_like(x);
    if (log_space) {
      log_softmax_rows_naive(x.data(), y_naive.data(), rows, cols);
      log_softmax_backward_rows_naive(y_naive.data(), gy.data(), gx_naive.data(), rows, cols);
    } else {
      softmax_rows_naive(x.data(), y_naive.data(), rows, cols);
      softmax_backward_rows_naive(y_naive.data(), gy.data(), gx_naive.data(), rows, cols);
    }
    check_close(y, y_naive, 1e-6f, 1e-5f);
    check_close(xl.grad(), gx_naive, 1e-5f, 1e-4f);
  }
}

TEST_CASE("cross_entropy: class weights, ignore_index and every reduction, forward and backward") {
  TwoThreads threads;
  Generator gen(13);
  const int64_t classes = 97, rows = 20 * 30;
  require_threaded(rows, classes);  // log_softmax_rows forward, the gradient loop backward
  const Tensor logits = randn({20, 30, classes}, gen) * 3.0f;
  const Tensor targets = randint(0, classes, {20, 30}, gen), weight = uniform({classes}, 0.2f, 2, gen);
  const int64_t ignored = 5;  // a real class index: its rows count for nothing
  for (Reduction reduction : {Reduction::mean, Reduction::sum, Reduction::none}) {
    CAPTURE(static_cast<int>(reduction));
    const Tensor x = leaf(logits);
    const Tensor loss = cross_entropy(x, targets, {.weight = weight, .ignore_index = ignored, .reduction = reduction});
    const Tensor gy = reduction == Reduction::none ? randn({20, 30}, gen) : scalar(1.5f);
    loss.backward(gy);
    // Reference: loss_r = -w_t log p_r[t] with p_r = softmax(x_r); d loss_r / d x_r = w_t (p_r - onehot(t)).
    std::vector<double> losses(rows, 0.0), log_p(x.numel()), gx(x.numel(), 0.0);
    double total = 0, weight_sum = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.data() + r * classes;
      double m = xr[0], s = 0;
      for (int64_t c = 0; c < classes; ++c) m = std::max<double>(m, xr[c]);
      for (int64_t c = 0; c < classes; ++c) s += std::exp(xr[c] - m);
      for (int64_t c = 0; c < classes; ++c) log_p[r * classes + c] = xr[c] - m - std::log(s);
      const int64_t t = at(targets, r);
      if (t == ignored) continue;
      losses[r] = -weight.data()[t] * log_p[r * classes + t];
      total += losses[r];
      weight_sum += weight.data()[t];
    }
    const double scale = reduction == Reduction::mean ? 1 / weight_sum : 1;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t t = at(targets, r);
      if (t == ignored) continue;
      const double g = (reduction == Reduction::none ? gy.data()[r] : gy.item() * scale) * weight.data()[t];
      for (int64_t c = 0; c < classes; ++c) gx[r * classes + c] = g * (std::exp(log_p[r * classes + c]) - (c == t ? 1 : 0));
    }
    if (reduction == Reduction::none) check_close(loss, to_tensor(losses, {20, 30}), 1e-5f, 1e-5f);
    else check_close(loss, scalar(static_cast<float>(total * scale)), 0, 1e-5f);
    check_close(x.grad(), to_tensor(gx, x.shape()), 1e-6f, 1e-4f);
  }
}

TEST_CASE("layer_norm over one and two trailing dims, with and without the affine, against the naive kernels") {
  TwoThreads threads;
  Generator gen(14);
  const Shape shape{64, 6, 101};
  for (const Shape& normalized : {Shape{101}, Shape{6, 101}}) {
    CAPTURE(shape_str(normalized));
    const int64_t cols = numel(normalized), rows = numel(shape) / cols;  // (384, 101) or (64, 606)
    require_threaded(rows, cols);  // the forward rows and the backward blocks with their partial sums
    for (bool affine : {true, false}) {
      CAPTURE(affine);
      const Tensor x = leaf(randn(shape, gen) * 2.0f + 1.0f);
      const Tensor w = affine ? leaf(randn(normalized, gen)) : Tensor(), b = affine ? leaf(randn(normalized, gen)) : Tensor();
      const Tensor y = layer_norm(x, normalized, w, b);
      const Tensor gy = randn(shape, gen);
      y.backward(gy);
      const float* gamma = affine ? w.data() : nullptr;
      Tensor y_naive = empty(shape), mean = empty({rows}), rstd = empty({rows}), gx = empty(shape);
      Tensor gw = empty(normalized), gb = empty(normalized);
      layer_norm_rows_naive(x.data(), gamma, affine ? b.data() : nullptr, y_naive.data(), mean.data(), rstd.data(),
                            rows, cols, 1e-5f);
      layer_norm_backward_rows_naive(x.data(), gamma, mean.data(), rstd.data(), gy.data(), gx.data(), gw.data(),
                                     gb.data(), rows, cols);
      check_close(y, y_naive, 1e-5f, 1e-5f);
      check_close(x.grad(), gx, 1e-4f, 1e-4f);
      if (!affine) continue;
      check_close(w.grad(), gw, 1e-3f, 1e-4f);
      check_close(b.grad(), gb, 1e-3f, 1e-4f);
    }
  }
}

TEST_CASE("conv2d: the threaded im2col, bias, reorder and col2im loops against direct convolution") {
  TwoThreads threads;
  Generator gen(15);
  const int64_t N = 8, C = 3, O = 24;
  const ConvGeometry g{C, 16, 16, 3, 3, 1, 1};  // 16x16 out: L = 256 pixels, patches of P = 27
  require_threaded(N, g.patch() * g.pixels());  // im2col forward, col2im backward: 55296
  require_threaded(N * O, g.pixels());          // bias forward, gy reorder backward: 49152
  const Tensor x = leaf(randn({N, C, 16, 16}, gen)), w = leaf(randn({O, C, 3, 3}, gen)), b = leaf(randn({O}, gen));
  const Tensor y = conv2d(x, w, b, {.stride = 1, .padding = 1});
  Tensor y_naive = empty(y.shape());
  conv2d_naive(x.data(), w.data(), b.data(), y_naive.data(), N, O, g);
  check_close(y, y_naive, 1e-4f, 1e-4f);
  const Tensor gy = randn(y.shape(), gen);
  y.backward(gy);
  Tensor gx = empty(x.shape()), gw = empty(w.shape()), gb = empty(b.shape());
  conv2d_backward_naive(x.data(), w.data(), gy.data(), gx.data(), gw.data(), gb.data(), N, O, g);
  check_close(x.grad(), gx, 1e-4f, 1e-4f);
  check_close(w.grad(), gw, 1e-3f, 1e-4f);
  check_close(b.grad(), gb, 1e-3f, 1e-4f);
}

TEST_CASE("max_pool2d and avg_pool2d: the threaded window loops, tiled and overlapping with padding") {
  TwoThreads threads;
  Generator gen(16);
  const int64_t N = 6, C = 8, H = 32, W = 32, planes = N * C;
  for (Pool2dOptions options : {Pool2dOptions{2, 2, 0}, Pool2dOptions{3, 2, 1}}) {
    CAPTURE(options.kernel);
    const int64_t K = options.kernel, oh = (H + 2 * options.padding - K) / options.stride + 1;
    const int64_t ow = (W + 2 * options.padding - K) / options.stride + 1;
    require_threaded(planes, oh * ow * K * K);  // 48 planes of 16x16 windows
    const Tensor x = leaf(randn({N, C, H, W}, gen));
    const Tensor y_max = max_pool2d(x, options), y_avg = avg_pool2d(x, options);
    const Tensor gy_max = randn(y_max.shape(), gen), gy_avg = randn(y_avg.shape(), gen);
    (sum(y_max * gy_max) + sum(y_avg * gy_avg)).backward();
    std::vector<double> out_max(y_max.numel()), out_avg(y_avg.numel(), 0.0), gx(x.numel(), 0.0);
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t oi = 0; oi < oh; ++oi)
        for (int64_t oj = 0; oj < ow; ++oj) {
          const int64_t o = (p * oh + oi) * ow + oj;
          int64_t best = -1;
          for (int64_t ki = 0; ki < K; ++ki)
            for (int64_t kj = 0; kj < K; ++kj) {
              const int64_t i = oi * options.stride - options.padding + ki, j = oj * options.stride - options.padding + kj;
              if (i < 0 || i >= H || j < 0 || j >= W) continue;  // padding: a zero for the average, never the max
              const int64_t in = (p * H + i) * W + j;
              if (best < 0 || x.data()[in] > x.data()[best]) best = in;
              out_avg[o] += x.data()[in] / static_cast<double>(K * K);
              gx[in] += gy_avg.data()[o] / static_cast<double>(K * K);
            }
          out_max[o] = x.data()[best];
          gx[best] += gy_max.data()[o];
        }
    check_close(y_max, to_tensor(out_max, y_max.shape()), 0);
    check_close(y_avg, to_tensor(out_avg, y_avg.shape()), 1e-6f, 1e-5f);
    check_close(x.grad(), to_tensor(gx, x.shape()), 1e-5f, 1e-5f);
  }
}

TEST_CASE("batch_norm: batch statistics, running statistics and eval, forward and backward, 4-d and 2-d") {
  TwoThreads threads;
  Generator gen(17);
  for (const Shape& shape : {Shape{8, 24, 16, 16}, Shape{2048, 24}}) {
    CAPTURE(shape_str(shape));
    const int64_t N = shape[0], C = shape[1], L = numel(shape) / (N * C), m = N * L;
    require_threaded(C, m);      // statistics forward, the per-channel gradient backward: 49152
    require_threaded(N * C, L);  // the normalisation forward
    for (bool training : {true, false}) {
      CAPTURE(training);
      const Tensor x = leaf(randn(shape, gen) * 2.0f + 0.5f);
      const Tensor w = leaf(randn({C}, gen)), b = leaf(randn({C}, gen));
      const Tensor running_mean = randn({C}, gen), running_var = uniform({C}, 0.5f, 2, gen);
      const Tensor mean_before = running_mean.clone(), var_before = running_var.clone();
      const float momentum = 0.1f, eps = 1e-5f;
      const Tensor y = batch_norm(x, running_mean, running_var, w, b, training, momentum, eps);
      const Tensor gy = randn(shape, gen);
      y.backward(gy);
      // Reference per channel c, over its m values: xhat = (x - mean) rstd, y = xhat w + b;
      // gw = sum(gy xhat), gb = sum(gy); gx = w rstd (gy - [gb + xhat gw] / m), or w rstd gy in eval.
      auto value = [&](const Tensor& t, int64_t n, int64_t c, int64_t l) {
        return static_cast<double>(t.data()[(n * C + c) * L + l]);
      };
      std::vector<double> out(x.numel()), gx(x.numel()), gw(C, 0.0), gb(C, 0.0), new_mean(C), new_var(C);
      for (int64_t c = 0; c < C; ++c) {
        double mu = 0, var = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t l = 0; l < L; ++l) mu += value(x, n, c, l) / static_cast<double>(m);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t l = 0; l < L; ++l) var += (value(x, n, c, l) - mu) * (value(x, n, c, l) - mu) / static_cast<double>(m);
        new_mean[c] = training ? (1 - momentum) * mean_before.data()[c] + momentum * mu : mean_before.data()[c];
        new_var[c] = training ? (1 - momentum) * var_before.data()[c] + momentum * var * m / (m - 1) : var_before.data()[c];
        if (!training) mu = mean_before.data()[c], var = var_before.data()[c];
        const double rstd = 1 / std::sqrt(var + eps);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t l = 0; l < L; ++l) {
            const double xhat = (value(x, n, c, l) - mu) * rstd;
            out[(n * C + c) * L + l] = xhat * w.data()[c] + b.data()[c];
            gw[c] += value(gy, n, c, l) * xhat;
            gb[c] += value(gy, n, c, l);
          }
        for (int64_t n = 0; n < N; ++n)
          for (int64_t l = 0; l < L; ++l) {
            const double xhat = (value(x, n, c, l) - mu) * rstd;
            const double g = value(gy, n, c, l);
            const double centred = training ? g - (gb[c] + xhat * gw[c]) / static_cast<double>(m) : g;
            gx[(n * C + c) * L + l] = w.data()[c] * rstd * centred;
          }
      }
      check_close(y, to_tensor(out, shape), 1e-5f, 1e-5f);
      check_close(running_mean, to_tensor(new_mean, {C}), 1e-6f, 1e-5f);
      check_close(running_var, to_tensor(new_var, {C}), 1e-6f, 1e-5f);
      check_close(x.grad(), to_tensor(gx, shape), 1e-5f, 1e-4f);
      check_close(w.grad(), to_tensor(gw, {C}), 1e-3f, 1e-4f);
      check_close(b.grad(), to_tensor(gb, {C}), 1e-3f, 1e-4f);
    }
  }
}

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

TEST_CASE("while other programs keep the cores busy, adapting runs one thread with the same blocks and results") {
  // Two spinning child processes are two runnable tasks of other programs: on a machine with two
  // cores none is free, so an adapting pool runs one thread. It still cuts loops into two blocks
  // (num_threads() is 2), so every sum is added in the same order as with two threads. (Threads of
  // this process do not count: an OpenMP worker still spinning after a region is not a busy core.)
  if (omp_get_num_procs() != 2) return;  // the arithmetic below is for two cores
  TwoThreads two;
  const Tensor x = randn({513, 129});
  const Tensor fixed = sum(softmax(x, -1) * x, {0});
  std::vector<pid_t> busy;
  for (int i = 0; i < 2; ++i) {
    const pid_t child = fork();
    if (child == 0)
      for (;;) asm volatile("");  // spin until killed (an empty loop the compiler keeps)
    busy.push_back(child);
  }
  set_num_threads(2, /*adapt_to_load=*/true);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // the pool looks at most every 100 ms
  const int running = running_threads();
  const Tensor adapted = sum(softmax(x, -1) * x, {0});
  // One thread opens no parallel region: a BLAS call in the body then sees it is not inside one
  // and uses its own (one) thread, instead of starting a team of new threads on every call.
  int level = -1;
  parallel_for(2, kMinParallelWork, [&](int64_t, int64_t) { level = omp_get_level(); });
  for (const pid_t child : busy) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  CHECK(num_threads() == 2);
  CHECK(running == 1);
  CHECK(level == 0);
  CHECK(adapted.to_vector() == fixed.to_vector());
}
