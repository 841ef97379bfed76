// The core's threaded elementwise, broadcast, reduction and matmul loops on two threads against
// plain loops (how: threaded_reference.h).
#include "helpers.h"
#include "threaded_reference.h"

#include <cmath>
#include <functional>
#include <vector>

using namespace ladder;
using ladder::testing::Around;
using ladder::testing::check_close;
using ladder::testing::leaf;
using ladder::testing::require_threaded;
using ladder::testing::to_tensor;
using ladder::testing::TwoThreads;

namespace {

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
    INFO("op ", std::string(c.name));  // doctest shows a char* as its address
    const Tensor x = leaf(uniform(shape, -3, 3, gen));
    const Tensor y = c.op(x);
    const Tensor gy = randn(shape, gen);
    y.backward(gy);
    std::vector<double> out(x.numel()), gx(x.numel());
    for (int64_t i = 0; i < x.numel(); ++i) {
      out[i] = c.f(x.data()[i]);
      gx[i] = gy.data()[i] * c.df(x.data()[i]);
    }
    {
      INFO("the forward, y");
      check_close(y, to_tensor(out, shape), 1e-7f, 2e-6f);
    }
    INFO("the gradient, x.grad()");
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
