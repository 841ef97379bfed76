// BigBird (nn/attention/bigbird_pattern.h, bigbird_attention.h). The pattern: which key blocks each
// query block sees, bidirectional and causal; no block twice, the same blocks for the same seed,
// layer and head, each head its own random blocks (and their spread over the blocks allowed),
// random blocks never where the window or the global blocks already are, short sequences fully
// visible, the position mask when the length is not a multiple of the block. The attention: equal to
// dense softmax attention masked by each head's pattern (values and gradients, with padding and a
// short last block), full attention when every block is visible, the errors. The interface's
// other promises (stepping, causality, gradient check, large inputs): tests/nn/test_attention_kinds.cpp.
#include "helpers.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "nn/attention/bigbird_attention.h"
#include "nn/attention/bigbird_pattern.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_error;
using ladder::testing::max_abs;

namespace {

// The key blocks of query block i that have this role.
std::set<int64_t> with_role(const BlockPattern& p, int64_t i, BlockRole role) {
  std::set<int64_t> blocks;
  for (size_t n = 0; n < p.keys[i].size(); ++n)
    if (p.roles[i][n] == role) blocks.insert(p.keys[i][n]);
  return blocks;
}

}  // namespace

TEST_CASE("bidirectional pattern: global first and last blocks, a window of 3, r random blocks, no repeats") {
  const BlockPattern p = bigbird_pattern(1000, {.block = 50, .random_blocks = 3, .seed = 7});
  REQUIRE(p.blocks == 20);
  for (const int64_t global : {0, 19}) CHECK(p.keys[global].size() == 20);  // global queries see every block
  for (int64_t i = 1; i < 19; ++i) {
    INFO("query block ", i);
    const std::vector<int64_t>& keys = p.keys[i];
    CHECK(std::is_sorted(keys.begin(), keys.end()));
    CHECK(std::set<int64_t>(keys.begin(), keys.end()).size() == keys.size());
    CHECK(with_role(p, i, BlockRole::global) == std::set<int64_t>{0, 19});
    std::set<int64_t> window{i - 1, i, i + 1};
    window.erase(0);
    window.erase(19);  // already there as global blocks
    CHECK(with_role(p, i, BlockRole::window) == window);
    const std::set<int64_t> random = with_role(p, i, BlockRole::random);
    CHECK(random.size() == 3);
    for (const int64_t j : random) CHECK((j != 0 && j != 19 && std::abs(j - i) > 1));
  }
  CHECK(p.visible_blocks() == 2 * 20 + 18 * (2 + 3 + 3) - 2);  // blocks 1 and 18 share a window block with a global one
}

TEST_CASE("the random blocks depend on the seed and the layer only") {
  const BigBirdSettings s{.block = 16, .random_blocks = 2, .seed = 3, .layer = 1};
  const BlockPattern a = bigbird_pattern(640, s), b = bigbird_pattern(640, s);
  CHECK(a.keys == b.keys);
  BigBirdSettings other_layer = s, other_seed = s;
  other_layer.layer = 2;
  other_seed.seed = 4;
  CHECK(bigbird_pattern(640, other_layer).keys != a.keys);
  CHECK(bigbird_pattern(640, other_seed).keys != a.keys);
}

TEST_CASE("random blocks per head: each head of a layer draws its own, the same seed draws them again") {
  const BigBirdSettings s{.block = 16, .random_blocks = 2, .seed = 3, .layer = 1};
  const std::vector<BlockPattern> heads = bigbird_head_patterns(640, 4, s), again = bigbird_head_patterns(640, 4, s);
  REQUIRE(heads.size() == 4);
  CHECK(heads[0].keys == bigbird_pattern(640, s).keys);  // head 0 is the layer's draw of one head
  for (size_t h = 0; h < 4; ++h) {
    CHECK(heads[h].keys == again[h].keys);
    for (size_t other = 0; other < h; ++other) CHECK(heads[h].keys != heads[other].keys);
    for (int64_t i = 1; i < 39; ++i) CHECK(with_role(heads[h], i, BlockRole::random).size() == 2);
    // Only the random blocks differ: the global and window blocks are every head's.
    for (int64_t i = 0; i < 40; ++i) {
      CHECK(with_role(heads[h], i, BlockRole::global) == with_role(heads[0], i, BlockRole::global));
      CHECK(with_role(heads[h], i, BlockRole::window) == with_role(heads[0], i, BlockRole::window));
    }
  }
  BigBirdSettings shared = s;
  shared.per_head = false;
  for (const BlockPattern& p : bigbird_head_patterns(640, 4, shared)) CHECK(p.keys == heads[0].keys);
  BigBirdSettings other_seed = s;
  other_seed.seed = 4;
  CHECK(bigbird_head_patterns(640, 4, other_seed)[2].keys != heads[2].keys);
  check_error([&] { bigbird_head_patterns(640, 0, s); }, {"heads must be >= 1, got 0"});
}

TEST_CASE("random blocks per head: over many heads every block outside the window and the globals is drawn equally often") {
  // 20 blocks: query block 9 draws 2 of the 15 blocks that are neither global (0, 19) nor its window (8-10).
  const std::vector<BlockPattern> heads = bigbird_head_patterns(320, 3000, {.block = 16, .random_blocks = 2, .seed = 8});
  std::vector<double> count(20);
  for (const BlockPattern& p : heads)
    for (const int64_t j : with_role(p, 9, BlockRole::random)) ++count[static_cast<size_t>(j)];
  for (const int64_t never : {0, 8, 9, 10, 19}) CHECK(count[static_cast<size_t>(never)] == 0);
  // Each of the 15 is drawn with probability 2/15: 400 of 3000 heads, standard deviation about 19.
  double chi_square = 0;
  for (int64_t j = 0; j < 20; ++j) {
    if (j == 0 || (j >= 8 && j <= 10) || j == 19) continue;
    CHECK(count[static_cast<size_t>(j)] > 400 - 5 * 19);
    CHECK(count[static_cast<size_t>(j)] < 400 + 5 * 19);
    chi_square += (count[static_cast<size_t>(j)] - 400) * (count[static_cast<size_t>(j)] - 400) / 400;
  }
  CHECK(chi_square < 36.1);  // the 0.999 quantile of chi-square with 14 degrees of freedom
  // Two heads' draws for a query block are independent: they share both blocks about 1 time in C(15,2) = 105.
  int64_t same = 0;
  for (size_t h = 1; h < heads.size(); ++h)
    same += with_role(heads[h], 9, BlockRole::random) == with_role(heads[h - 1], 9, BlockRole::random);
  CHECK(same < 3000 / 105 * 2);
}

TEST_CASE("causal pattern: block 0 global, the window and the random blocks from the past") {
  const BlockPattern p = bigbird_pattern(700, {.block = 50, .random_blocks = 3, .causal = true, .seed = 1});
  REQUIRE(p.blocks == 14);
  CHECK(p.keys[0] == std::vector<int64_t>{0});
  for (int64_t i = 1; i < 14; ++i) {
    INFO("query block ", i);
    CHECK(p.keys[i].back() == i);  // nothing after its own block
    CHECK(p.keys[i].front() == 0);
    const std::set<int64_t> random = with_role(p, i, BlockRole::random);
    CHECK(static_cast<int64_t>(random.size()) == std::clamp<int64_t>(i - 2, 0, 3));  // fewer when the past is short
    for (const int64_t j : random) CHECK((j > 0 && j < i - 1));
  }
}

TEST_CASE("the lesson's variants: the window alone, and window + global without random blocks") {
  for (const bool causal : {false, true}) {
    INFO((causal ? "causal" : "bidirectional"));
    const BlockPattern window = bigbird_pattern(
        1000, {.block = 50, .random_blocks = 0, .global_blocks = false, .causal = causal, .seed = 7});
    const BlockPattern global = bigbird_pattern(1000, {.block = 50, .random_blocks = 0, .causal = causal, .seed = 7});
    REQUIRE(window.blocks == 20);
    for (int64_t i = 0; i < 20; ++i) {
      INFO("query block ", i);
      std::vector<int64_t> expected;  // i-1, i, i+1 inside the sequence, none after i when causal
      for (int64_t j = std::max<int64_t>(0, i - 1); j <= std::min<int64_t>(19, causal ? i : i + 1); ++j)
        expected.push_back(j);
      CHECK(window.keys[i] == expected);
      CHECK(with_role(window, i, BlockRole::window).size() == expected.size());

      const bool global_query = causal ? i == 0 : (i == 0 || i == 19);
      if (global_query) {
        CHECK(global.keys[i].size() == (causal ? 1u : 20u));
        continue;
      }
      std::set<int64_t> both(expected.begin(), expected.end());
      both.insert(0);
      if (!causal) both.insert(19);
      CHECK(std::set<int64_t>(global.keys[i].begin(), global.keys[i].end()) == both);
      CHECK(with_role(global, i, BlockRole::random).empty());
    }
  }
  // Without global blocks the random blocks are drawn from everything outside the window.
  const BlockPattern sparse = bigbird_pattern(1000, {.block = 50, .random_blocks = 2, .global_blocks = false});
  for (int64_t i = 0; i < 20; ++i) {
    CHECK(with_role(sparse, i, BlockRole::global).empty());
    CHECK(with_role(sparse, i, BlockRole::random).size() == 2);
  }
}

TEST_CASE("a sequence short enough sees every block; the position mask covers a short last block") {
  const BlockPattern p = bigbird_pattern(37, {.block = 8, .random_blocks = 3});  // 5 blocks, the last of 5 positions
  REQUIRE(p.blocks == 5);
  for (const auto& keys : p.keys) CHECK(keys.size() == 5);
  const Tensor full = pattern_mask(p, 37);
  CHECK(sum(full).item() == 37 * 37);

  const BlockPattern causal = bigbird_pattern(37, {.block = 8, .random_blocks = 3, .causal = true});
  const Tensor mask = pattern_mask(causal, 37);
  for (int64_t i = 0; i < 37; ++i)
    for (int64_t j = 0; j < 37; ++j) CHECK(mask.data()[i * 37 + j] == (j <= i ? 1.0f : 0.0f));
}

TEST_CASE("bigbird pattern errors") {
  check_error([] { bigbird_pattern(0, {}); }, {"bigbird_pattern", "at least one position, got 0"});
  check_error([] { bigbird_pattern(10, {.block = 0}); }, {"block size must be >= 1, got 0"});
  check_error([] { bigbird_pattern(10, {.random_blocks = -1}); }, {"random blocks must be >= 0, got -1"});
  const BlockPattern p = bigbird_pattern(64, {.block = 8});
  check_error([&] { pattern_mask(p, 100); }, {"covers 8 blocks of 8 positions, not a sequence of 100"});
}

namespace {

// softmax(q k^T / sqrt(D) where the pattern's mask allows (and the padding), -inf elsewhere) v,
// from plain ops: the dense reference BigBird is held to.
Tensor dense_reference(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  const Tensor scores = matmul(q, k, {.transpose_b = true}) / std::sqrt(static_cast<float>(q.size(3)));
  return matmul(where(mask, softmax(where(mask, scores, scalar(-INFINITY)), -1), scalar(0)), v);
}

}  // namespace

TEST_CASE("BigBird attention equals dense softmax attention masked by each head's block pattern") {
  // Each direction with the full pattern drawn per head and shared by the heads, and with the window
  // alone (no global, no random blocks).
  for (const bool causal : {false, true})
    for (const int variant : {0, 1, 2}) {
      const bool global_blocks = variant < 2, per_head = variant == 0;
      SUBCASE((std::string(causal ? "causal" : "bidirectional") +
               (variant == 0 ? ", per head" : variant == 1 ? ", one draw per layer" : ", window alone")).c_str()) {
        BigBirdAttention bigbird(bigbird_attention_settings({.block = 8,
                                                             .random_blocks = global_blocks ? 2 : 0,
                                                             .global_blocks = global_blocks,
                                                             .seed = 5,
                                                             .layer = 1,
                                                             .per_head = per_head}));
        const int64_t T = 77, H = 3;  // 10 blocks, the last of 5 positions
        Generator gen(12);
        const Tensor q = randn({2, H, T, 6}, gen), k = randn(q.shape(), gen), v = randn(q.shape(), gen);
        const Tensor gout = randn(q.shape(), gen);
        Tensor padding = ones({2, T});
        for (int64_t j = T - 9; j < T; ++j) padding.data()[T + j] = 0;
        std::vector<Tensor> heads;  // each head's (T,T) mask
        for (int64_t h = 0; h < H; ++h) heads.push_back(pattern_mask(bigbird.pattern(T, causal, h), T));
        const Tensor mask = reshape(stack(heads, 0), {1, H, T, T}) * reshape(padding, {2, 1, 1, T});
        CHECK(sum(mask).item() < 0.7f * 2 * H * T * T);  // the pattern really leaves blocks out
        if (variant == 1) CHECK(max_abs(heads[1] - heads[0]) == 0);
        if (variant == 0) CHECK(max_abs(heads[1] - heads[0]) > 0);
        const auto fast = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
          return bigbird.attend(a, b, c, {.causal = causal, .key_padding_mask = padding});
        };
        const auto dense = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
          return dense_reference(a, b, c, mask);
        };
        ladder::testing::check_runs_agree(ladder::testing::run_attention(fast, q, k, v, gout),
                                          ladder::testing::run_attention(dense, q, k, v, gout));
        const Tensor weights = bigbird.implied_weights(q, k, {.causal = causal, .key_padding_mask = padding});
        CHECK(max_abs(weights * (1.0f - mask)) == 0);  // no weight outside each head's pattern
      }
    }
}

TEST_CASE("BigBird over a sequence of few blocks is full attention") {
  BigBirdAttention bigbird(bigbird_attention_settings({.block = 8, .random_blocks = 3}));
  Generator gen(13);
  const Tensor q = randn({1, 2, 37, 4}, gen), k = randn(q.shape(), gen), v = randn(q.shape(), gen);
  for (const bool causal : {false, true})
    ladder::testing::check_agree(bigbird.attend(q, k, v, {.causal = causal}),
                                 scaled_dot_product_attention(q, k, v, {.causal = causal}), "few blocks");
}

TEST_CASE("BigBird attention errors") {
  BigBirdAttention bigbird({.kind = BigBirdAttention::Settings{.block = 4}});
  const Tensor q = zeros({1, 1, 8, 4}), k = zeros({1, 1, 12, 4});
  check_error([&] { bigbird.attend(q, k, k, {}); },
              {"BigBird attends within one sequence", "need T = S", "(1,1,8,4)", "(1,1,12,4)", "full attention"});
  check_error([&] { bigbird.attend(q, q, q, {.causal = true, .causal_offset = 3}); },
              {"causal_offset 3 is not supported", "start() and step()"});
  check_error([] { BigBirdAttention(bigbird_attention_settings({.block = 0})); }, {"bigbird attention", "block must be from 1 to 65536, got 0"});
  check_error([] { BigBirdAttention(bigbird_attention_settings({.random_blocks = -2})); },
              {"random_blocks must be from 0 to 1024, got -2"});
}
