// Scaled dot-product attention: the fused op against its naive twin (values and every gradient)
// on odd sizes and every mask, the raw kernels against theirs, dropout, and the error messages.
#include "helpers.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/kernels/attention.h"
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

using AttentionFn = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const SdpaOptions&);

AttentionRun run(AttentionFn f, const Tensor& q, const Tensor& k, const Tensor& v, const SdpaOptions& options,
                 const Tensor& gout) {
  const auto call = [&](const Tensor& a, const Tensor& b, const Tensor& c) { return f(a, b, c, options); };
  return ladder::testing::run_attention(call, q, k, v, gout);
}

struct Sizes {
  int64_t B, H, T, S, D;
};

// The fused op and the naive one agree on the output and the gradients of q, k and v.
void check_fused_against_naive(const Sizes& n, SdpaOptions options, float q_scale = 1, uint64_t seed = 1) {
  INFO("B H T S D = ", n.B, " ", n.H, " ", n.T, " ", n.S, " ", n.D, "; causal ", options.causal, " offset ",
       options.causal_offset, " dropout ", options.dropout);
  Generator gen(seed);
  const Tensor q = randn({n.B, n.H, n.T, n.D}, gen) * q_scale, k = randn({n.B, n.H, n.S, n.D}, gen),
               v = randn({n.B, n.H, n.S, n.D}, gen), gout = randn({n.B, n.H, n.T, n.D}, gen);
  Generator fused_gen(99), naive_gen(99);  // the same dropout mask on both sides
  SdpaOptions fused_options = options, naive_options = options;
  fused_options.generator = &fused_gen;
  naive_options.generator = &naive_gen;
  check_runs_agree(run(scaled_dot_product_attention, q, k, v, fused_options, gout),
                   run(scaled_dot_product_attention_naive, q, k, v, naive_options, gout));
}

// Key padding (B,S): batch b keeps its first S - b*cut keys (b = 0 keeps all).
Tensor padding_mask(int64_t B, int64_t S, int64_t cut) {
  Tensor mask = ones({B, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = std::max<int64_t>(S - b * cut, 0); j < S; ++j) mask.data()[b * S + j] = 0;
  return mask;
}

}  // namespace

TEST_CASE("fused attention equals its naive twin on odd sizes") {
  SUBCASE("T != S, D not a multiple of the vector width") { check_fused_against_naive({2, 3, 5, 7, 7}, {}); }
  SUBCASE("one query") { check_fused_against_naive({1, 2, 1, 9, 33}, {}); }
  SUBCASE("one key") { check_fused_against_naive({2, 1, 4, 1, 7}, {}); }
  SUBCASE("several tiles of rows and keys") { check_fused_against_naive({1, 2, 130, 150, 33}, {}); }
  SUBCASE("explicit scale") { check_fused_against_naive({1, 2, 6, 8, 5}, {.scale = 0.7f}); }
}

TEST_CASE("fused attention equals its naive twin under causal and padding masks") {
  SUBCASE("causal, T = S") { check_fused_against_naive({2, 2, 100, 100, 7}, {.causal = true}); }
  SUBCASE("causal, more queries than keys, offset 0") { check_fused_against_naive({1, 2, 70, 50, 33}, {.causal = true}); }
  SUBCASE("causal, offset S - T (a KV cache)") {
    check_fused_against_naive({1, 3, 5, 130, 16}, {.causal = true, .causal_offset = 125});
  }
  SUBCASE("causal, offset > 0 over several tiles") {
    check_fused_against_naive({1, 1, 140, 200, 9}, {.causal = true, .causal_offset = 60});
  }
  SUBCASE("causal, negative offset: the first rows see nothing") {
    check_fused_against_naive({1, 2, 70, 70, 7}, {.causal = true, .causal_offset = -3});
  }
  SUBCASE("padding, the last batch entirely padded") {
    check_fused_against_naive({3, 2, 9, 70, 33}, {.key_padding_mask = padding_mask(3, 70, 35)});
  }
  SUBCASE("causal and padding") {
    check_fused_against_naive({2, 2, 80, 80, 7}, {.causal = true, .key_padding_mask = padding_mask(2, 80, 30)});
  }
  SUBCASE("queries scaled by 100") { check_fused_against_naive({1, 2, 70, 90, 33}, {.causal = true}, 100.0f); }
  SUBCASE("dropout, causal and padding") {
    check_fused_against_naive({2, 2, 70, 75, 7},
                              {.causal = true, .key_padding_mask = padding_mask(2, 75, 20), .dropout = 0.3f});
  }
}

TEST_CASE("fused attention on two threads equals its naive twin") {
  ladder::testing::TwoThreads threads;
  const Sizes n{1, 2, 200, 180, 33};
  ladder::testing::require_threaded(n.B * n.H * ((n.T + kAttentionRowTile - 1) / kAttentionRowTile),
                                    std::min(kAttentionRowTile, n.T) * n.S * n.D);
  SUBCASE("causal") { check_fused_against_naive(n, {.causal = true, .causal_offset = 5}); }
  SUBCASE("padding and dropout") {
    check_fused_against_naive(n, {.key_padding_mask = padding_mask(1, 180, 0), .dropout = 0.2f});
  }
  SUBCASE("one head, so that row tiles of one head split across threads") {
    check_fused_against_naive({1, 1, 300, 300, 16}, {.causal = true});
  }
  SUBCASE("one row tile per head: the backward adds into dk and dv directly") {
    const Sizes small{12, 4, 64, 64, 32};  // a GPT step's shape: the heads shared out, whole
    ladder::testing::require_threaded(small.B * small.H, small.T * small.S * small.D);
    check_fused_against_naive(small, {.causal = true, .key_padding_mask = padding_mask(12, 64, 9), .dropout = 0.1f});
  }
}

// A block-sparse pattern by hand for T positions in blocks of `block`: query block t sees block 0,
// itself, and block (t * 7) % blocks when that is not after it (a stand-in for random blocks).
std::shared_ptr<const BlockSparsity> sparse_pattern(int64_t T, int64_t block) {
  auto s = std::make_shared<BlockSparsity>();
  s->block = block;
  const int64_t blocks = (T + block - 1) / block;
  for (int64_t t = 0; t < blocks; ++t) {
    std::set<int64_t> listed{0, t, (t * 7) % blocks};
    s->key_blocks.emplace_back(listed.begin(), listed.end());
  }
  return s;
}

TEST_CASE("block-sparse fused attention equals the naive twin with the pattern as a dense mask") {
  SUBCASE("blocks of 8, a short last block") {
    check_fused_against_naive({2, 2, 37, 37, 7}, {.block_sparsity = sparse_pattern(37, 8)});
  }
  SUBCASE("causal and padding") {
    check_fused_against_naive({2, 2, 37, 37, 5}, {.causal = true, .key_padding_mask = padding_mask(2, 37, 12),
                                                  .block_sparsity = sparse_pattern(37, 8)});
  }
  SUBCASE("dropout, blocks of 64") {
    check_fused_against_naive({1, 2, 200, 200, 16}, {.dropout = 0.2f, .block_sparsity = sparse_pattern(200, 64)});
  }
  SUBCASE("blocks of 1") { check_fused_against_naive({1, 1, 9, 9, 4}, {.block_sparsity = sparse_pattern(9, 1)}); }
}

TEST_CASE("block-sparse fused attention on two threads equals its naive twin") {
  ladder::testing::TwoThreads threads;
  const Sizes n{1, 2, 300, 300, 32};
  const auto pattern = sparse_pattern(300, 16);  // 19 query blocks of 16, at most 3 key blocks each
  ladder::testing::require_threaded(n.B * n.H * 19, 16 * 16 * 2 * n.D);
  check_fused_against_naive(n, {.causal = true, .block_sparsity = pattern});
}

TEST_CASE("a query that sees no key gets zeros and passes no gradient") {
  Generator gen(3);
  const Tensor q = randn({2, 1, 4, 5}, gen), k = randn({2, 1, 4, 5}, gen), v = randn({2, 1, 4, 5}, gen);
  const Tensor gout = randn({2, 1, 4, 5}, gen);
  // Offset -3: rows 0-2 see nothing, row 3 sees key 0. Batch 1 has every key padded.
  const SdpaOptions options{.causal = true, .causal_offset = -3, .key_padding_mask = padding_mask(2, 4, 4)};
  for (AttentionFn f : {scaled_dot_product_attention, scaled_dot_product_attention_naive}) {
    const AttentionRun r = run(f, q, k, v, options, gout);
    CHECK(all_finite(r.out));
    CHECK(all_finite(r.dq));
    CHECK(all_finite(r.dk));
    CHECK(all_finite(r.dv));
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 4; ++i) {
        if (b == 0 && i == 3) continue;  // the one row that sees a key
        for (int64_t d = 0; d < 5; ++d) {
          CHECK(r.out.at({b, 0, i, d}) == 0.0f);
          CHECK(r.dq.at({b, 0, i, d}) == 0.0f);
        }
      }
    // Only key 0 of batch 0 is ever seen: it alone receives gradient.
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t d = 0; d < 5; ++d) {
          if (b == 0 && j == 0) continue;
          CHECK(r.dk.at({b, 0, j, d}) == 0.0f);
          CHECK(r.dv.at({b, 0, j, d}) == 0.0f);
        }
    // Row 3 of batch 0 sees only key 0: its output is v_0, and v_0's gradient is that row's gout.
    for (int64_t d = 0; d < 5; ++d) {
      CHECK(r.out.at({0, 0, 3, d}) == doctest::Approx(v.at({0, 0, 0, d})).epsilon(1e-6));
      CHECK(r.dv.at({0, 0, 0, d}) == doctest::Approx(gout.at({0, 0, 3, d})).epsilon(1e-6));
    }
  }
}

TEST_CASE("the causal offset serves a KV cache: the last rows of a full pass, computed alone") {
  Generator gen(4);
  const int64_t N = 150, recent = 7;  // 143 cached positions, 7 new queries
  const Tensor q = randn({1, 2, N, 16}, gen), k = randn({1, 2, N, 16}, gen), v = randn({1, 2, N, 16}, gen);
  const Tensor full = scaled_dot_product_attention(q, k, v, {.causal = true});
  const Tensor step = scaled_dot_product_attention(narrow(q, 2, N - recent, recent), k, v,
                                                   {.causal = true, .causal_offset = N - recent});
  check_close(step, narrow(full, 2, N - recent, recent), 1e-6f, 1e-5f);
}

TEST_CASE("causal attention: an output does not change when later keys and values change") {
  Generator gen(5);
  const Tensor q = randn({1, 1, 90, 8}, gen), k = randn({1, 1, 90, 8}, gen), v = randn({1, 1, 90, 8}, gen);
  const Tensor before = scaled_dot_product_attention(q, k, v, {.causal = true});
  Tensor k2 = k.clone(), v2 = v.clone();
  for (int64_t j = 70; j < 90; ++j)
    for (int64_t d = 0; d < 8; ++d) {
      k2.data()[j * 8 + d] += 5;
      v2.data()[j * 8 + d] -= 3;
    }
  const Tensor after = scaled_dot_product_attention(q, k2, v2, {.causal = true});
  for (int64_t i = 0; i < 70; ++i)
    for (int64_t d = 0; d < 8; ++d) CHECK(after.at({0, 0, i, d}) == before.at({0, 0, i, d}));
  CHECK(after.at({0, 0, 80, 0}) != before.at({0, 0, 80, 0}));
}

TEST_CASE("fused kernels agree with their naive twins on raw buffers, lse included") {
  Generator gen(6);
  const int64_t B = 2, H = 2, T = 70, S = 81, D = 7;
  const Tensor q = randn({B, H, T, D}, gen), k = randn({B, H, S, D}, gen), v = randn({B, H, S, D}, gen);
  const Tensor gout = randn({B, H, T, D}, gen), padding = padding_mask(B, S, 40);
  AttentionProblem p{.batch = B, .heads = H, .queries = T, .keys = S, .dim = D, .scale = 0.4f, .causal = true,
                     .causal_offset = 11, .key_padding = padding.data(), .dropout = 0.25f, .dropout_seed = 42};
  // Block-sparse: 7 query blocks of 10 against 9 key blocks, each seeing block 0, itself and block 8.
  std::vector<std::vector<int64_t>> key_blocks;
  for (int64_t t = 0; t < 7; ++t)
    key_blocks.push_back(t == 0 ? std::vector<int64_t>{0, 8} : std::vector<int64_t>{0, t, 8});
  SUBCASE("dense") {}
  SUBCASE("block-sparse") {
    p.key_blocks = &key_blocks;
    p.block = 10;
  }
  Tensor out = empty({B, H, T, D}), lse = empty({B, H, T}), out_naive = empty({B, H, T, D}), lse_naive = empty({B, H, T});
  attention_forward(p, q.data(), k.data(), v.data(), out.data(), lse.data());
  attention_forward_naive(p, q.data(), k.data(), v.data(), out_naive.data(), lse_naive.data());
  check_close(out, out_naive, 1e-5f, 1e-5f);
  check_close(lse, lse_naive, 1e-5f, 1e-5f);
  Tensor dq = empty(q.shape()), dk = empty(k.shape()), dv = empty(v.shape());
  Tensor dq_naive = empty(q.shape()), dk_naive = empty(k.shape()), dv_naive = empty(v.shape());
  attention_backward(p, q.data(), k.data(), v.data(), out.data(), lse.data(), gout.data(), dq.data(), dk.data(), dv.data());
  attention_backward_naive(p, q.data(), k.data(), v.data(), gout.data(), dq_naive.data(), dk_naive.data(), dv_naive.data());
  check_close(dq, dq_naive, 1e-5f, 1e-5f);
  check_close(dk, dk_naive, 1e-5f, 1e-5f);
  check_close(dv, dv_naive, 1e-5f, 1e-5f);
}

TEST_CASE("attention dropout: p = 0 changes nothing, a seed fixes the mask, about p of the weights drop") {
  Generator gen(7);
  const Tensor q = randn({1, 4, 64, 8}, gen), k = randn({1, 4, 64, 8}, gen), v = randn({1, 4, 64, 8}, gen);
  const Tensor plain = scaled_dot_product_attention(q, k, v);
  Generator a(1), b(1), c(2);
  check_close(scaled_dot_product_attention(q, k, v, {.dropout = 0, .generator = &a}), plain, 0);
  check_close(scaled_dot_product_attention(q, k, v, {.dropout = 0.5f, .training = false, .generator = &a}), plain, 0);
  const Tensor first = scaled_dot_product_attention(q, k, v, {.dropout = 0.3f, .generator = &b});
  Generator b_again(1);
  check_close(scaled_dot_product_attention(q, k, v, {.dropout = 0.3f, .generator = &b_again}), first, 0);
  const Tensor other = scaled_dot_product_attention(q, k, v, {.dropout = 0.3f, .generator = &c});
  CHECK(max_abs(other - first) > 0.1f);
  // 4 x 64 x 64 = 16384 weights: the dropped fraction is 0.3 within a few standard deviations (0.0036).
  Generator d(3);
  const Tensor weights = attention_weights(q, k, {.dropout = 0.3f, .generator = &d});
  int64_t dropped = 0;
  for (int64_t i = 0; i < weights.numel(); ++i) dropped += weights.data()[i] == 0;
  CHECK(static_cast<double>(dropped) / weights.numel() == doctest::Approx(0.3).epsilon(0.05));
  // The kept weights are scaled by 1/(1-p): each row sums to about 1 (its expectation).
  const Tensor undropped = attention_weights(q, k);
  const Tensor ratio = where(weights, weights / undropped, scalar(1 / 0.7f));
  check_close(ratio, full_like(ratio, 1 / 0.7f), 1e-5f, 1e-5f);
}

TEST_CASE("attention_weights: (B,H,T,S), rows sum to 1, or to 0 where no key is visible") {
  Generator gen(8);
  const Tensor q = randn({2, 3, 5, 4}, gen), k = randn({2, 3, 6, 4}, gen);
  const Tensor plain = attention_weights(q, k);
  CHECK(plain.shape() == Shape{2, 3, 5, 6});
  check_close(plain, softmax(matmul(q, k, {.transpose_b = true}) * 0.5f, -1), 1e-6f, 1e-6f);
  const Tensor masked = attention_weights(q, k, {.causal = true, .causal_offset = -1,
                                                 .key_padding_mask = tensor({1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1}, {2, 6})});
  const Tensor row_sums = sum(masked, {-1});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t i = 0; i < 5; ++i) {
        const bool sees_a_key = b == 0 ? i >= 1 : i >= 2;  // batch 1's key 0 is padding
        CHECK(row_sums.at({b, h, i}) == doctest::Approx(sees_a_key ? 1.0 : 0.0));
        for (int64_t j = 0; j < 6; ++j)
          if (j > i - 1 || (b == 1 && (j == 0 || j == 2))) CHECK(masked.at({b, h, i, j}) == 0.0f);
      }
}

TEST_CASE("attention backward refuses inputs changed in place after the forward pass") {
  Tensor q = randn({1, 1, 3, 4}), k = randn({1, 1, 3, 4}), v = randn({1, 1, 3, 4});
  q.requires_grad_();
  const Tensor out = scaled_dot_product_attention(q, k, v);
  v.mutable_data()[0] = 1;
  check_error([&] { sum(out).backward(); }, {"scaled_dot_product_attention", "input 2", "modified in place"});
}

TEST_CASE("attention errors name the op, the shapes and the fix") {
  const Tensor q = zeros({2, 3, 4, 8}), k = zeros({2, 3, 5, 8});
  for (const char* op : {"scaled_dot_product_attention", "scaled_dot_product_attention_naive"}) {
    const AttentionFn f = std::string(op) == "scaled_dot_product_attention" ? scaled_dot_product_attention
                                                                              : scaled_dot_product_attention_naive;
    CAPTURE(op);
    check_error([&] { f(zeros({4, 8}), k, k, {}); }, {op, "q must be (B,H,T,D)", "(4,8)", "transpose(1, 2)"});
    check_error([&] { f(q, zeros({5, 8}), k, {}); }, {op, "k must be (B,H,S,D)", "(5,8)"});
    check_error([&] { f(q, zeros({2, 3, 5, 6}), zeros({2, 3, 5, 6}), {}); },
                {op, "q (2,3,4,8) and k (2,3,5,6) must agree in batch, heads and head dim"});
    check_error([&] { f(q, k, zeros({2, 3, 4, 8}), {}); }, {op, "v must have k's shape (2,3,5,8)", "(2,3,4,8)"});
    check_error([&] { f(q, k, k, {.key_padding_mask = ones({2, 4})}); },
                {op, "key_padding_mask must be (B,S) = (2,5)", "got (2,4)"});
    check_error([&] { f(q, k, k, {.dropout = 1.5f}); }, {op, "dropout must be in [0, 1], got 1.5"});
    check_error([&] { f(q, k, k, {.scale = INFINITY}); }, {op, "scale must be a finite number"});
  }
  auto blocks = std::make_shared<BlockSparsity>(BlockSparsity{.block = 2, .key_blocks = {{0}, {0, 1}, {2}}});
  check_error([&] { scaled_dot_product_attention(q, k, k, {.block_sparsity = blocks}); },
              {"lists key blocks for 3 query blocks, but T = 4 queries make 2 blocks of 2"});
  blocks = std::make_shared<BlockSparsity>(BlockSparsity{.block = 2, .key_blocks = {{1, 0}, {0}}});
  check_error([&] { scaled_dot_product_attention(q, k, k, {.block_sparsity = blocks}); },
              {"key_blocks[0] must increase and stay below the 3 key blocks; it holds 0 after 1"});
  blocks = std::make_shared<BlockSparsity>(BlockSparsity{.block = 2, .key_blocks = {{0}, {3}}});
  check_error([&] { scaled_dot_product_attention_naive(q, k, k, {.block_sparsity = blocks}); },
              {"scaled_dot_product_attention_naive", "key_blocks[1]", "it holds 3 after -1"});
  check_error([&] { attention_weights(q, zeros({2, 4, 5, 8})); },
              {"attention_weights", "q (2,3,4,8) and k (2,4,5,8) must agree"});
}
