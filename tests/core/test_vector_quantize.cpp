// Vector quantisation in core: nearest codes on a hand-made codebook (ties included), the GEMM
// kernel against its naive twin (odd sizes, two threads), gathering codes, the straight-through
// estimator, and the error messages.
#include "helpers.h"

#include <cmath>

#include "core/kernels/vector_quantize.h"

using namespace ladder;
using ladder::testing::check_error;
using ladder::testing::check_tensor;

namespace {

// Two heads, two dims. Head 0: the corners (0,0), (1,0), (0,1), (1,0) again; head 1: (2,2), (-1,0),
// (0,-3), (5,5).
Tensor hand_made_codes() {
  return tensor({0, 0, 1, 0, 0, 1, 1, 0,  //
                 2, 2, -1, 0, 0, -3, 5, 5},
                {2, 4, 2});
}

// One sequence of three keys per head (B=1, H=2, T=3, d=2).
Tensor hand_made_keys() {
  return tensor({0.9f, 0.2f, 0.5f, 0.0f, 0.1f, 0.8f,  // head 0
                 0.9f, 0.2f, 1.0f, -2.0f, 4.0f, 3.0f},  // head 1
                {1, 2, 3, 2});
}

// The squared distance from `key` to code s of `codes` (d values each), in double.
double distance_to(const float* key, const float* codes, int64_t s, int64_t d) {
  double sum = 0;
  for (int64_t j = 0; j < d; ++j) sum += (double(key[j]) - codes[s * d + j]) * (double(key[j]) - codes[s * d + j]);
  return sum;
}

// The GEMM kernel against the naive twin on random keys and codes: distances within fp32 rounding,
// and the same code for every key, or one whose distance equals the nearest's to within rounding
// (two codes that close are a tie that the two ways of summing may break differently).
void check_against_naive(const NearestCodeProblem& p, uint64_t seed) {
  INFO("B H T S d rows = ", p.batch, " ", p.heads, " ", p.length, " ", p.codes, " ", p.width, " ", p.rows);
  Generator gen(seed);
  const Tensor keys = randn({p.batch, p.heads, p.length, p.width}, gen);
  const Tensor codes = randn({p.heads, p.codes, p.width}, gen);
  const int64_t n = p.batch * p.heads * p.length;
  std::vector<int64_t> index(static_cast<size_t>(n)), index_naive(index.size());
  Tensor distance = empty({n}), distance_naive = empty({n});
  nearest_code(p, keys.data(), codes.data(), index.data(), distance.data());
  nearest_code_naive(p, keys.data(), codes.data(), index_naive.data(), distance_naive.data());
  int64_t differ = 0;
  for (int64_t key = 0; key < n; ++key) {
    const float* k = keys.data() + key * p.width;
    const float* head_codes = codes.data() + key / p.length % p.heads * p.codes * p.width;
    const double nearest = distance_naive.data()[key], tolerance = 1e-5 * (1 + nearest);
    CHECK(std::fabs(distance.data()[key] - nearest) <= tolerance + 1e-5 * p.width);
    if (index[key] == index_naive[key]) continue;
    ++differ;
    CHECK(std::fabs(distance_to(k, head_codes, index[key], p.width) - nearest) <= tolerance);
  }
  CHECK(differ <= n / 100);
}

}  // namespace

TEST_CASE("nearest codes on a hand-made codebook: the exact code, the distance, ties to the lowest index") {
  const Tensor keys = hand_made_keys(), codes = hand_made_codes();
  // Head 0: (0.9,0.2) is nearest (1,0), which codes 1 and 3 both hold: code 1. (0.5,0) is as far
  // from (0,0) as from (1,0): code 0. (0.1,0.8): (0,1), code 2. Head 1: (0.9,0.2) -> (-1,0) at
  // 3.65 beats (2,2) at 4.45; (1,-2) -> (0,-3) at 2; (4,3) is 5 from both (2,2) and (5,5): code 0.
  const std::vector<int64_t> expected{1, 0, 2, 1, 2, 0};
  const std::vector<float> distances{0.05f, 0.25f, 0.05f, 3.65f, 2.0f, 5.0f};
  for (const auto f : {nearest_codes, nearest_codes_naive}) {
    const CodeAssignment a = f(keys, codes);
    CHECK(a.indices == expected);
    check_tensor(a.distances, {1, 2, 3}, distances, 1e-6f);
  }
}

TEST_CASE("the GEMM kernel finds the codes its naive twin finds") {
  for (const int64_t rows : {1, 7, 64})
    check_against_naive({.batch = 2, .heads = 3, .length = 45, .codes = 17, .width = 5, .rows = rows}, rows);
  SUBCASE("one code") { check_against_naive({.batch = 1, .heads = 2, .length = 9, .codes = 1, .width = 4}, 3); }
  SUBCASE("no keys") { check_against_naive({.batch = 1, .heads = 2, .length = 0, .codes = 4, .width = 4}, 4); }
  SUBCASE("two threads share out the blocks of rows") {
    ladder::testing::TwoThreads two;
    const NearestCodeProblem p{.batch = 2, .heads = 2, .length = 300, .codes = 64, .width = 16, .rows = 64};
    ladder::testing::require_threaded(p.batch * p.heads * 5, p.rows * p.codes * p.width);
    check_against_naive(p, 11);
  }
}

TEST_CASE("gather_codes puts each key's code of its own head in its place") {
  const Tensor codes = hand_made_codes();
  const Tensor got = gather_codes(codes, {3, 0, 2, 1, 2, 0}, {1, 2, 3});
  check_tensor(got, {1, 2, 3, 2}, {1, 0, 0, 0, 0, 1, -1, 0, 0, -3, 2, 2}, 0);
}

TEST_CASE("the straight-through estimator: the code forward, bit for bit; the gradient to the key unchanged") {
  Generator gen(5);
  Tensor keys = randn({2, 2, 3, 2}, gen);
  keys.requires_grad_();
  const Tensor codes = hand_made_codes() * 0.3f;  // steps of 0.3 are not exact in binary
  const Tensor quantised = gather_codes(codes, nearest_codes(keys, codes).indices, {2, 2, 3});
  const Tensor out = straight_through(keys, quantised);
  CHECK(out.to_vector() == quantised.to_vector());
  // Through a nonlinearity after it: d/dk sum(tanh(out) * w) = w * (1 - tanh(code)^2), the
  // derivative taken at the code and handed to the key as it is.
  const Tensor w = randn(keys.shape(), gen);
  sum(tanh(out) * w).backward();
  const Tensor t = tanh(quantised);
  ladder::testing::check_close(keys.grad(), w * (1.0f - t * t), 1e-6f, 1e-6f);
}

TEST_CASE("vector quantisation errors name the op, the shapes and the fix") {
  const Tensor keys = hand_made_keys(), codes = hand_made_codes();
  check_error([&] { nearest_codes(reshape(keys, {2, 3, 2}), codes); },
              {"nearest_codes", "keys (B,H,T,d) and codes (H,S,d)", "(2,3,2)", "quantise with H = 1"});
  check_error([&] { nearest_codes(keys, zeros({2, 4, 3})); },
              {"nearest_codes", "(1,2,3,2)", "(2,4,3)", "agree in heads and width"});
  check_error([&] { nearest_codes(keys, zeros({1, 4, 2})); }, {"agree in heads and width"});
  check_error([&] { nearest_codes_naive(keys, zeros({2, 0, 2})); }, {"nearest_codes_naive", "no codes", "S >= 1"});
  check_error([&] { gather_codes(codes, {0, 0, 4, 0, 0, 0}, {1, 2, 3}); },
              {"gather_codes", "index 4 at position 2", "4 codes (valid: 0 to 3)"});
  check_error([&] { gather_codes(codes, {0, 0}, {1, 2, 3}); }, {"gather_codes", "hold 2 values", "needs 6"});
  check_error([&] { gather_codes(codes, {0, 0, 0}, {1, 3, 1}); }, {"same H", "(1,3,1)"});
  check_error([&] { straight_through(keys, codes); }, {"straight_through", "(1,2,3,2)", "(2,4,2)", "one shape"});
}
