// The generated long-range retrieval task (data/retrieval.h): the same seed gives the same
// sequences, the answer is in the sequence exactly once, the asked key lies beyond a window of
// min_distance positions before the question, the answers spread over the classes, how far back
// the key sits (positions and blocks), the text a block per line, each pair as one token (and as a
// classifier's examples), the errors.
#include "helpers.h"

#include <algorithm>

#include "data/retrieval.h"
#include "data/split_checks.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_error;

namespace {

RetrievalTaskOptions small_task() {
  return {.length = 200, .keys = 6, .values = 4, .distractors = 20, .min_distance = 120,
          .train = 300, .val = 50, .test = 50, .seed = 3};
}

bool same(const RetrievalSet& a, const RetrievalSet& b) {
  return testing::same_values(a.tokens, b.tokens) && testing::same_values(a.answers, b.answers) &&
         a.key_positions == b.key_positions;
}

int64_t token_at(const RetrievalSet& set, int64_t n, int64_t t) {
  return static_cast<int64_t>(set.tokens.data()[n * set.tokens.size(1) + t]);
}

}  // namespace

TEST_CASE("retrieval task: the same seed gives the same sequences, another seed others") {
  const RetrievalTaskOptions o = small_task();
  testing::check_seeded_splits(o, make_retrieval_task, same, [&](const RetrievalSet& set) { return retrieval_text(set, 0, o); });
}

TEST_CASE("retrieval task: the question's key appears once before it, followed by the answer, far enough back") {
  const RetrievalTaskOptions o = small_task();
  const RetrievalSet set = make_retrieval_task(o).train;
  REQUIRE(set.tokens.shape() == Shape{300, 200});
  REQUIRE(set.answers.numel() == 300);
  std::vector<int64_t> per_class(static_cast<size_t>(o.values));
  int64_t keys_seen = 0;
  for (int64_t n = 0; n < 300; ++n) {
    INFO("sequence ", n, ": ", retrieval_text(set, n, o));
    CHECK(token_at(set, n, 198) == 1);  // '?'
    const int64_t asked = token_at(set, n, 199);
    REQUIRE((asked >= key_token(0) && asked < key_token(o.keys)));
    std::vector<int64_t> places;  // where the asked key occurs before the question
    for (int64_t t = 0; t < 198; ++t)
      if (token_at(set, n, t) == asked) places.push_back(t);
    REQUIRE(places.size() == 1);
    CHECK(places[0] == set.key_positions[n]);
    CHECK(199 - places[0] >= o.min_distance);  // outside a window of min_distance positions
    const auto answer = static_cast<int64_t>(set.answers.data()[n]);
    CHECK(token_at(set, n, places[0] + 1) == value_token(answer, o));  // recoverable from the sequence
    ++per_class[static_cast<size_t>(answer)];
    for (int64_t t = 0; t < 198; ++t) {
      const int64_t token = token_at(set, n, t);
      if (token >= key_token(0) && token < key_token(o.keys)) ++keys_seen;
    }
  }
  CHECK(keys_seen == 300 * (o.distractors + 1));  // every distractor placed, none overwritten
  for (const int64_t count : per_class) CHECK(count > 300 / o.values / 2);  // guessing scores about 1 / values
  CHECK(retrieval_chance(o) == doctest::Approx(0.25));
  CHECK(retrieval_vocabulary(o) == 2 + 6 + 4);
  // The asked pair lands anywhere in the allowed range, not always at the start.
  CHECK(*std::max_element(set.key_positions.begin(), set.key_positions.end()) > 40);
}

TEST_CASE("retrieval task: the text shows one character per token") {
  RetrievalTaskOptions o = small_task();
  o.length = 12;
  o.min_distance = 10;
  o.distractors = 1;
  const RetrievalSet set = make_retrieval_task(o).test;
  for (int64_t n = 0; n < 50; ++n) {
    const std::string text = retrieval_text(set, n, o);
    REQUIRE(text.size() == 12);
    CHECK(text[10] == '?');
    const auto at = static_cast<size_t>(set.key_positions[n]);
    CHECK(text[at] == text[11]);  // the asked key, a letter
    CHECK((text[at] >= 'A' && text[at] < 'A' + o.keys));
    CHECK(text[at + 1] == '0' + static_cast<int>(set.answers.data()[n]));
  }
}

TEST_CASE("retrieval task errors") {
  const auto with = [](auto change) {
    RetrievalTaskOptions o = small_task();
    change(o);
    return o;
  };
  check_error([&] { make_retrieval_task(with([](auto& o) { o.keys = 1; })); },
              {"RetrievalTaskOptions", "keys must be in [2, 26]", "got 1"});
  check_error([&] { with([](auto& o) { o.keys = 27; }).check(); }, {"RetrievalTaskOptions", "keys must be in [2, 26]", "got 27"});
  CHECK_NOTHROW(small_task().check());
  check_error([&] { make_retrieval_task(with([](auto& o) { o.values = 11; })); }, {"values must be in [2, 10]", "got 11"});
  check_error([&] { make_retrieval_task(with([](auto& o) { o.length = 5; })); }, {"length must be >= 6", "got 5"});
  check_error([&] { make_retrieval_task(with([](auto& o) { o.distractors = -1; })); }, {"distractors must be >= 0, got -1"});
  check_error([&] { make_retrieval_task(with([](auto& o) { o.min_distance = 200; })); },
              {"min_distance must be in [3, length - 1 = 199], got 200"});
  check_error([&] { make_retrieval_task(with([](auto& o) { o.distractors = 60; })); },
              {"60 distractor pairs", "more than half of the 198 positions", "at most 48 distractors"});
  check_error([&] { make_retrieval_task(with([](auto& o) { o.val = -1; })); }, {"got train 300, val -1, test 50"});
}

TEST_CASE("retrieval task, key distances: positions before the question's key and blocks from its block") {
  const RetrievalSet two{zeros({2, 12}), zeros({2}), {0, 9}};  // keys at 0 and 9 of 12; the question's key at 11
  const KeyDistances d = key_distances(two, 4);                 // blocks 0-3, 4-7, 8-11
  CHECK(d.positions == std::vector<int64_t>{11, 2});
  CHECK(d.blocks == std::vector<int64_t>{2, 0});
  CHECK(key_distances(two, 5).blocks == std::vector<int64_t>{2, 1});  // blocks 0-4, 5-9, 10-11: a short last block
  CHECK(key_distances(two, 1).blocks == d.positions);
  const RetrievalTaskOptions o = small_task();
  const RetrievalSet set = make_retrieval_task(o).val;
  const KeyDistances drawn = key_distances(set, 16);
  REQUIRE(drawn.positions.size() == 50);
  for (size_t n = 0; n < 50; ++n) {
    CHECK(drawn.positions[n] >= o.min_distance);
    CHECK(drawn.blocks[n] == 199 / 16 - set.key_positions[n] / 16);
  }
  check_error([&] { key_distances(two, 0); }, {"key_distances", "block must be at least 1, got 0"});
}

TEST_CASE("retrieval task, a block per line: the text cut into blocks, the asked pair and the question marked") {
  const RetrievalTaskOptions o = small_task();  // keys A-F, values 0-3
  const auto id = [](int64_t token) { return static_cast<float>(token); };
  const float C = id(key_token(2)), B = id(key_token(1)), three = id(value_token(3, o)), zero = id(value_token(0, o));
  const RetrievalSet one{tensor({0, C, three, 0, 0, B, zero, 0, 0, 0, 1, C}, {1, 12}), tensor({3}), {1}};
  REQUIRE(retrieval_text(one, 0, o) == ".C3..B0...?C");
  CHECK(retrieval_blocks(one, 0, o, 5) == std::vector<std::string>{"block   0 | .C3..", "             ^^",
                                                                    "block   1 | B0...", "block   2 | ?C",
                                                                    "            ^^"});
  CHECK(retrieval_blocks(one, 0, o, 12) ==
        std::vector<std::string>{"block   0 | .C3..B0...?C", "             ^^       ^^"});
  check_error([&] { retrieval_blocks(one, 0, o, 0); }, {"retrieval_blocks", "block must be at least 1, got 0"});
}

TEST_CASE("retrieval task, paired examples: the pair tokens and the answers, for a classifier") {
  RetrievalTaskOptions o = small_task();
  o.train = 20;
  const RetrievalSet set = make_retrieval_task(o).train;
  const LabelledBatch examples = paired_examples(set, o);
  CHECK(testing::same_values(examples.inputs, pair_tokens(set, o).tokens));
  CHECK(testing::same_values(examples.labels, set.answers));
  CHECK_FALSE(examples.valid.defined());  // every position real
}

TEST_CASE("retrieval task, pair tokens: each pair one token at the key's place, the question and answers kept") {
  RetrievalTaskOptions o = small_task();
  o.train = 50;
  const RetrievalSet plain = make_retrieval_task(o).train, paired = pair_tokens(plain, o);
  REQUIRE(paired.tokens.shape() == plain.tokens.shape());
  CHECK(testing::same_values(paired.answers, plain.answers));
  CHECK(paired.key_positions == plain.key_positions);
  CHECK(paired_vocabulary(o) == 2 + 6 + 4 + 6 * 4);
  CHECK(pair_token(0, 0, o) == retrieval_vocabulary(o));
  CHECK(pair_token(5, 3, o) == paired_vocabulary(o) - 1);
  for (int64_t n = 0; n < 50; ++n) {
    INFO("sequence ", n, ": ", retrieval_text(plain, n, o));
    int64_t pairs = 0;
    for (int64_t t = 0; t < 198; ++t) {
      const int64_t before = token_at(plain, n, t), after = token_at(paired, n, t);
      if (before >= key_token(0) && before < key_token(o.keys)) {  // a key, its value next: the pair's token
        const int64_t value = token_at(plain, n, t + 1) - value_token(0, o);
        CHECK(after == pair_token(before - key_token(0), value, o));
        CHECK(token_at(paired, n, t + 1) == 0);  // the value's place becomes filler
        ++pairs;
      } else if (before < key_token(0)) {
        CHECK(after == before);  // filler stays filler
      }
      CHECK(after < paired_vocabulary(o));
    }
    CHECK(pairs == o.distractors + 1);
    const auto asked = static_cast<size_t>(paired.key_positions[n]);  // the asked pair holds the answer
    CHECK(token_at(paired, n, static_cast<int64_t>(asked)) ==
          pair_token(token_at(plain, n, 199) - key_token(0), static_cast<int64_t>(plain.answers.data()[n]), o));
    CHECK(token_at(paired, n, 198) == 1);  // '?' and the asked key stay
    CHECK(token_at(paired, n, 199) == token_at(plain, n, 199));
  }
}
