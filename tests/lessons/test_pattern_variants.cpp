// Lesson 13's pattern variants: each one's attention lists the blocks its name says (the window
// alone no global or random blocks, window + global no random ones, BigBird all three), and the
// "mid" rows pad after the question so that its block is an ordinary one, which in one layer sees a
// far key only through a random block.
#include "helpers.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "lessons/13_bigbird/pattern_variants.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/bigbird_pattern.h"

using namespace ladder;
using namespace ladder::lessons;
using ladder::testing::check_tensor;

namespace {

// The key blocks query block `row` lists in head `head` of the variant's pattern over `length` positions.
std::set<int64_t> row_keys(const PatternVariant& v, int64_t length, int64_t row, int64_t head) {
  nn::BigBirdSettings settings = nn::bigbird_pattern_settings(pattern_attention(v, 8, 3, 7));
  settings.head = head;
  const nn::BlockPattern pattern = nn::bigbird_pattern(length, settings);
  return {pattern.keys[row].begin(), pattern.keys[row].end()};
}

}  // namespace

TEST_CASE("pattern_variants: the six rows of lesson 13's part 4, in the order of its table") {
  CHECK(pattern_variant_names() ==
        std::vector<std::string>{"full", "window", "window_global", "bigbird", "window_global_mid", "bigbird_mid"});
  CHECK(pattern_attention(pattern_variant("full"), 8, 3, 0).kind_name() == "full");
  for (const char* name : {"window", "window_global", "bigbird", "window_global_mid", "bigbird_mid"})
    CHECK(pattern_attention(pattern_variant(name), 8, 3, 0).kind_name() == "bigbird");
  CHECK_THROWS_WITH_AS(pattern_variant("windows"), doctest::Contains("no pattern named 'windows'"), Error);
}

TEST_CASE("pattern_attention: the window alone lists its 3 blocks, window + global adds the first and last, BigBird r random") {
  // 128 positions in 16 blocks of 8; the question in block 15.
  for (int64_t head = 0; head < 4; ++head) {
    CHECK(row_keys(pattern_variant("window"), 128, 7, head) == std::set<int64_t>{6, 7, 8});
    CHECK(row_keys(pattern_variant("window"), 128, 15, head) == std::set<int64_t>{14, 15});
    CHECK(row_keys(pattern_variant("window_global"), 128, 7, head) == std::set<int64_t>{0, 6, 7, 8, 15});
    const std::set<int64_t> bigbird = row_keys(pattern_variant("bigbird"), 128, 7, head);
    CHECK(bigbird.size() == 5 + 3);
    const std::set<int64_t> window_global{0, 6, 7, 8, 15};
    CHECK(std::includes(bigbird.begin(), bigbird.end(), window_global.begin(), window_global.end()));
    // The question's block is global: its row lists every block, with or without random blocks.
    CHECK(row_keys(pattern_variant("window_global"), 128, 15, head).size() == 16);
  }
  std::set<std::set<int64_t>> drawn;  // each head draws its own random blocks
  for (int64_t head = 0; head < 4; ++head) drawn.insert(row_keys(pattern_variant("bigbird"), 128, 7, head));
  CHECK(drawn.size() > 1);
}

TEST_CASE("padding_after_question: the mid rows move the question off the last block, the others leave it there") {
  CHECK(padding_after_question(pattern_variant("bigbird"), 128, 8) == 0);
  CHECK(padding_after_question(pattern_variant("window_global_mid"), 128, 8) == 8);    // 17 blocks, the question in 15
  CHECK(padding_after_question(pattern_variant("bigbird_mid"), 100, 8) == 12);         // 99 in block 12 of 14
  // Padded, the question's block 15 is an ordinary one: window + global lists 0, 14, 15, 16 and no
  // far block; BigBird adds its random blocks, which are then the only one-layer paths to blocks 1-13.
  for (int64_t head = 0; head < 4; ++head) {
    CHECK(row_keys(pattern_variant("window_global_mid"), 136, 15, head) == std::set<int64_t>{0, 14, 15, 16});
    const std::set<int64_t> bigbird = row_keys(pattern_variant("bigbird_mid"), 136, 15, head);
    CHECK(bigbird.size() == 4 + 3);
    CHECK(std::count_if(bigbird.begin(), bigbird.end(), [](int64_t b) { return b >= 1 && b <= 13; }) == 3);
  }
}

TEST_CASE("pad_after: padding positions with id 0 and valid 0 after each row, labels unchanged; 0 positions change nothing") {
  const data::LabelledBatch examples{tensor({1, 2, 3, 4, 5, 6}, {2, 3}), tensor({7, 8}), Tensor()};
  const data::LabelledBatch padded = pad_after(examples, 2);
  check_tensor(padded.inputs, {2, 5}, {1, 2, 3, 0, 0, 4, 5, 6, 0, 0});
  check_tensor(padded.valid, {2, 5}, {1, 1, 1, 0, 0, 1, 1, 1, 0, 0});
  check_tensor(padded.labels, {2}, {7, 8});
  const data::LabelledBatch same = pad_after(examples, 0);
  CHECK(same.inputs.data() == examples.inputs.data());
  CHECK_FALSE(same.valid.defined());
}
