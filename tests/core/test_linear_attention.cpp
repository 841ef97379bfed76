// Linear attention: the chunked causal product against its naive twin (raw kernels, on odd sizes
// and on two threads), the attention against the (T,S) matrix it implies, values and gradients,
// causality, finite results for large or empty inputs, and the error messages.
#include "helpers.h"

#include <algorithm>
#include <cmath>

#include "core/kernels/linear_attention.h"
#include "core/kernels/parallel.h"

using namespace ladder;
using ladder::testing::check_close;
using ladder::testing::all_finite;
using ladder::testing::AttentionRun;
using ladder::testing::check_agree;
using ladder::testing::check_runs_agree;
using ladder::testing::check_error;
using ladder::testing::max_abs;

namespace {

// Positive features, as a feature map gives them.
Tensor features(const Shape& shape, Generator& gen) { return uniform(shape, 0.0f, 1.0f, gen); }

// The raw kernels against their naive twins: output and the three gradients. Raw elu inputs are
// any sign; features normalised as they are must be positive (as a feature map gives them).
void check_product_kernels(const CausalProductProblem& p, uint64_t seed) {
  INFO("heads T M E chunk = ", p.heads, " ", p.length, " ", p.features, " ", p.values, " ", p.chunk,
       "; elu ", p.elu_features, " normalise ", p.normalise);
  Generator gen(seed);
  const bool positive = p.normalise && !p.elu_features;
  const Shape shape{p.heads, p.length, p.features};
  const Tensor q = positive ? features(shape, gen) : randn(shape, gen), k = positive ? features(shape, gen) : randn(shape, gen);
  const Tensor v = randn({p.heads, p.length, p.values}, gen), gout = randn(v.shape(), gen);
  Tensor out = empty(v.shape()), out_naive = empty(v.shape()), denominators = empty({p.heads, p.length});
  causal_product_forward(p, q.data(), k.data(), v.data(), out.data(), denominators.data());
  causal_product_forward_naive(p, q.data(), k.data(), v.data(), out_naive.data());
  check_agree(out, out_naive, "out");
  Tensor dq = empty(q.shape()), dk = empty(k.shape()), dv = empty(v.shape());
  Tensor dq_naive = empty(q.shape()), dk_naive = empty(k.shape()), dv_naive = empty(v.shape());
  causal_product_backward(p, q.data(), k.data(), v.data(), out.data(), denominators.data(), gout.data(), dq.data(),
                          dk.data(), dv.data());
  causal_product_backward_naive(p, q.data(), k.data(), v.data(), gout.data(), dq_naive.data(), dk_naive.data(),
                                dv_naive.data());
  check_agree(dq, dq_naive, "dq");
  check_agree(dk, dk_naive, "dk");
  check_agree(dv, dv_naive, "dv");
}

// The same problem as the plain product, normalised, with elu + 1 inside, and both.
void check_every_mode(CausalProductProblem p, uint64_t seed) {
  for (const bool elu : {false, true})
    for (const bool normalise : {false, true}) {
      p.elu_features = elu, p.normalise = normalise;
      check_product_kernels(p, seed);
    }
}

using LinearFn = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const LinearAttentionOptions&);

AttentionRun run(LinearFn f, const Tensor& q, const Tensor& k, const Tensor& v, const LinearAttentionOptions& options,
                 const Tensor& gout) {
  const auto call = [&](const Tensor& a, const Tensor& b, const Tensor& c) { return f(a, b, c, options); };
  return ladder::testing::run_attention(call, q, k, v, gout);
}

// linear_attention against the matrix it implies, values and every gradient.
void check_against_naive(int64_t B, int64_t H, int64_t T, int64_t S, int64_t M, int64_t D,
                         const LinearAttentionOptions& options) {
  INFO("B H T S M D = ", B, " ", H, " ", T, " ", S, " ", M, " ", D, "; causal ", options.causal, " chunk ",
       options.chunk, " elu ", options.elu_features);
  Generator gen(T * 31 + S);
  // raw inputs of either sign for elu + 1; otherwise features, positive as a feature map gives them
  const auto input = [&](const Shape& shape) { return options.elu_features ? randn(shape, gen) : features(shape, gen); };
  const Tensor q = input({B, H, T, M}), k = input({B, H, S, M}), v = randn({B, H, S, D}, gen);
  const Tensor gout = randn({B, H, T, D}, gen);
  check_runs_agree(run(linear_attention, q, k, v, options, gout),
                   run(linear_attention_naive, q, k, v, options, gout));
}

Tensor padding_mask(int64_t B, int64_t S, int64_t padded_in_last_row) {
  Tensor m = ones({B, S});
  for (int64_t j = S - padded_in_last_row; j < S; ++j) m.data()[(B - 1) * S + j] = 0;
  return m;
}

}  // namespace

TEST_CASE("the chunked causal product equals its naive twin, whatever the chunk") {
  for (const int64_t chunk : {1, 7, 64, 45})  // 45 = the whole sequence
    check_every_mode({.heads = 3, .length = 45, .features = 5, .values = 9, .chunk = chunk}, chunk);
  SUBCASE("one position") {
    check_every_mode({.heads = 2, .length = 1, .features = 3, .values = 2, .chunk = 4}, 9);
  }
  SUBCASE("a longer chunk than the sequence") {
    check_every_mode({.heads = 1, .length = 10, .features = 4, .values = 4, .chunk = 64}, 10);
  }
}

TEST_CASE("the chunked causal product on two threads equals its naive twin") {
  ladder::testing::TwoThreads threads;
  const CausalProductProblem p{.heads = 4, .length = 300, .features = 16, .values = 17, .chunk = 64};
  ladder::testing::require_threaded(p.heads, p.length * (std::min(p.chunk, p.length) * (p.features + p.values) +
                                                         p.features * p.values));
  check_every_mode(p, 11);
}

TEST_CASE("the causal_linear_product op equals tril(q k^T) v, values and gradients") {
  Generator gen(5);
  const Tensor q = randn({2, 2, 13, 4}, gen), k = randn(q.shape(), gen), v = randn({2, 2, 13, 6}, gen);
  const Tensor gout = randn(v.shape(), gen);
  const auto fused = [](const Tensor& a, const Tensor& b, const Tensor& c) {
    return causal_linear_product(a, b, c, /*chunk=*/5);
  };
  check_runs_agree(ladder::testing::run_attention(fused, q, k, v, gout),
                   ladder::testing::run_attention(causal_linear_product_naive, q, k, v, gout));
}

TEST_CASE("linear attention equals the matrix it implies") {
  SUBCASE("non-causal, more keys than queries") { check_against_naive(2, 3, 7, 11, 5, 6, {}); }
  SUBCASE("non-causal, padding") {
    check_against_naive(2, 1, 6, 9, 4, 3, {.key_padding_mask = padding_mask(2, 9, 4)});
  }
  SUBCASE("one query, one key") { check_against_naive(1, 2, 1, 1, 3, 2, {}); }
  for (const int64_t chunk : {1, 7, 64, 37}) {
    SUBCASE(("causal, chunk " + std::to_string(chunk)).c_str()) {
      check_against_naive(2, 2, 37, 37, 6, 5, {.causal = true, .chunk = chunk});
    }
  }
  SUBCASE("causal with padding") {
    check_against_naive(2, 2, 20, 20, 4, 4, {.causal = true, .key_padding_mask = padding_mask(2, 20, 6), .chunk = 8});
  }
  SUBCASE("causal on two threads: the heads split over the threads") {
    ladder::testing::TwoThreads threads;
    ladder::testing::require_threaded(2 * 4, 300 * (32 * (8 + 16) + 8 * 16));  // B*H heads, as for_each_head counts
    check_against_naive(2, 4, 300, 300, 8, 16, {.causal = true, .chunk = 32});
    check_against_naive(2, 4, 300, 300, 8, 16, {.causal = true, .chunk = 32, .elu_features = true});
  }
  SUBCASE("elu + 1 applied by the op: causal (inside the chunks), causal with padding, non-causal") {
    check_against_naive(2, 2, 37, 37, 6, 5, {.causal = true, .chunk = 7, .elu_features = true});
    check_against_naive(2, 2, 20, 20, 4, 4,
                        {.causal = true, .key_padding_mask = padding_mask(2, 20, 6), .chunk = 8, .elu_features = true});
    check_against_naive(2, 3, 7, 11, 5, 6, {.elu_features = true});
  }
}

TEST_CASE("causal linear attention: an output does not change when later keys and values change") {
  Generator gen(7);
  const Tensor q = features({1, 2, 30, 4}, gen), k = features(q.shape(), gen), v = randn({1, 2, 30, 3}, gen);
  const Tensor before = linear_attention(q, k, v, {.causal = true, .chunk = 8});
  Tensor k2 = k.clone(), v2 = v.clone();
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t t = 20; t < 30; ++t) {
      for (int64_t m = 0; m < 4; ++m) k2.data()[(h * 30 + t) * 4 + m] += 1.5f;
      for (int64_t d = 0; d < 3; ++d) v2.data()[(h * 30 + t) * 3 + d] -= 2.0f;
    }
  const Tensor after = linear_attention(q, k2, v2, {.causal = true, .chunk = 8});
  check_close(narrow(after, 2, 0, 20), narrow(before, 2, 0, 20), 0);
  CHECK(max_abs(narrow(after, 2, 20, 10) - narrow(before, 2, 20, 10)) > 0.01f);
}

TEST_CASE("linear attention stays finite: large features, a query with zero features, every key padded") {
  Generator gen(8);
  const Tensor q = features({2, 1, 16, 4}, gen) * 100.0f, k = features(q.shape(), gen) * 100.0f;
  const Tensor v = randn({2, 1, 16, 3}, gen);
  for (const bool causal : {false, true}) {
    CHECK(all_finite(linear_attention(q, k, v, {.causal = causal, .chunk = 5})));
    // Query 0 of every head has no features; batch 1 has every key padded: 0 there, no NaN.
    Tensor q0 = q.clone();
    for (int64_t b = 0; b < 2; ++b) std::fill(q0.data() + b * 16 * 4, q0.data() + b * 16 * 4 + 4, 0.0f);
    Tensor padding = ones({2, 16});
    std::fill(padding.data() + 16, padding.data() + 32, 0.0f);
    const Tensor out = linear_attention(q0, k, v, {.causal = causal, .key_padding_mask = padding, .chunk = 5});
    REQUIRE(all_finite(out));
    CHECK(max_abs(narrow(narrow(out, 0, 0, 1), 2, 0, 1)) == 0);
    CHECK(max_abs(narrow(out, 0, 1, 1)) == 0);
  }
}

TEST_CASE("the implied matrix: rows sum to 1 over the keys a query sees") {
  Generator gen(9);
  const Tensor q = features({1, 2, 6, 3}, gen), k = features({1, 2, 6, 3}, gen);
  const Tensor w = linear_attention_weights(q, k, {.causal = true});
  check_close(sum(w, {3}), ones({1, 2, 6}), 1e-5f);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = i + 1; j < 6; ++j) CHECK(w.data()[i * 6 + j] == 0);
}

TEST_CASE("linear attention's errors name the op, the shapes and the fix") {
  Generator gen(10);
  const Tensor q = features({1, 2, 5, 3}, gen), k = features({1, 2, 6, 3}, gen), v = randn({1, 2, 6, 4}, gen);
  check_error([&] { linear_attention(q, k, v, {.causal = true}); },
              {"linear_attention", "needs as many queries as keys", "T = 5", "S = 6", "S += phi(k) v^T"});
  check_error([&] { linear_attention(q, features({1, 2, 6, 4}, gen), v); },
              {"linear_attention", "must agree in batch, heads and features", "(1,2,6,4)"});
  check_error([&] { linear_attention(q, k, randn({1, 2, 5, 4}, gen)); }, {"v must be (B,H,S,D)", "(1,2,5,4)"});
  check_error([&] { linear_attention(q, k, v, {.key_padding_mask = ones({1, 5})}); },
              {"key_padding_mask must be (B,S) = (1,6)", "(1,5)"});
  check_error([&] { linear_attention(q, k, v, {.eps = 0}); }, {"eps must be > 0"});
  check_error([&] { linear_attention(reshape(q, {2, 5, 3}), k, v); }, {"q and k must be (B,H,T,M)", "(2,5,3)"});
  check_error([&] { causal_linear_product(q, q, narrow(v, 2, 0, 5), 0); },
              {"causal_linear_product", "chunk must be >= 1, got 0"});
  check_error([&] { causal_linear_product(q, k, v); },
              {"causal_linear_product", "q and k (B,H,T,M) of one shape", "(1,2,5,3)", "(1,2,6,3)"});
}
