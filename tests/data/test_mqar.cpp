// Multi-query associative recall (data/mqar.h): the same seed gives the same sequences; the pairs come
// first with distinct keys; every query asks a key of its sequence once, after the pairs, and its label
// is that pair's value, read back from the tokens; no other position is labelled; the one-hop form
// writes the same pairs as one token each; the text; the errors.
#include "helpers.h"

#include <algorithm>
#include <set>

#include "data/mqar.h"
#include "data/split_checks.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_error;

namespace {

MqarOptions small_task() {
  return {.pairs = 6, .queries = 4, .keys = 9, .values = 5, .length = 24, .train = 200, .val = 30, .test = 30, .seed = 7};
}

bool same(const LabelledBatch& a, const LabelledBatch& b) {
  return testing::same_values(a.inputs, b.inputs) && testing::same_values(a.labels, b.labels);
}

int64_t at(const Tensor& x, int64_t n, int64_t t) { return static_cast<int64_t>(x.data()[n * x.size(1) + t]); }

}  // namespace

TEST_CASE("mqar: the same seed gives the same sequences, another seed others; each part its own draws") {
  const MqarOptions o = small_task();
  testing::check_seeded_splits(o, make_mqar, same, [&](const LabelledBatch& set) { return mqar_text(set, 0, o); });
}

TEST_CASE("mqar: distinct keys in the pairs, every query answered by its pair's value, nothing else labelled") {
  const MqarOptions o = small_task();
  const LabelledBatch set = make_mqar(o).train;
  REQUIRE(set.inputs.shape() == Shape{200, 24});
  REQUIRE(set.labels.shape() == Shape{200, 24});
  CHECK_FALSE(set.valid.defined());
  std::vector<int64_t> per_value(static_cast<size_t>(o.values)), per_place(24);
  for (int64_t n = 0; n < 200; ++n) {
    INFO("sequence ", n, ": ", mqar_text(set, n, o));
    std::set<int64_t> keys;
    for (int64_t p = 0; p < o.pairs; ++p) {
      const int64_t key = at(set.inputs, n, 2 * p), value = at(set.inputs, n, 2 * p + 1);
      REQUIRE((key >= mqar_key_token(0) && key < mqar_key_token(o.keys)));
      REQUIRE((value >= mqar_value_token(0, o) && value < mqar_value_token(o.values, o)));
      keys.insert(key);
      CHECK(at(set.labels, n, 2 * p) == kNoAnswer);
      CHECK(at(set.labels, n, 2 * p + 1) == kNoAnswer);
    }
    CHECK(keys.size() == static_cast<size_t>(o.pairs));  // no key twice
    std::set<int64_t> asked;
    for (int64_t t = 2 * o.pairs; t < 24; ++t) {
      const int64_t token = at(set.inputs, n, t), label = at(set.labels, n, t);
      if (label == kNoAnswer) {
        CHECK(token == 0);  // filler between the queries
        continue;
      }
      ++per_place[static_cast<size_t>(t)];
      REQUIRE(keys.count(token) == 1);  // a key of this sequence's pairs
      asked.insert(token);
      int64_t p = 0;
      while (at(set.inputs, n, 2 * p) != token) ++p;
      CHECK(mqar_value_token(label, o) == at(set.inputs, n, 2 * p + 1));  // the value beside the key
      ++per_value[static_cast<size_t>(label)];
    }
    CHECK(asked.size() == static_cast<size_t>(o.queries));  // four distinct keys asked
  }
  for (const int64_t count : per_value) CHECK(count > 800 / o.values / 2);  // the answers spread over the values
  for (int64_t t = 2 * o.pairs; t < 24; ++t) CHECK(per_place[static_cast<size_t>(t)] > 0);  // queries anywhere after
  CHECK(mqar_chance(o) == doctest::Approx(0.2));
  CHECK(mqar_vocabulary(o) == 1 + 9 + 5);
}

TEST_CASE("mqar: without a length, the queries follow the pairs at once; the one-hop form, the same pairs as one token each") {
  MqarOptions o = small_task();
  o.length = 0;
  const LabelledBatch two = make_mqar(o).test;
  REQUIRE(two.inputs.size(1) == 2 * 6 + 4);
  o.one_hop = true;
  const LabelledBatch one = make_mqar(o).test;
  CHECK(testing::same_values(one.labels, two.labels));  // the same draws: the same queries and answers
  CHECK(mqar_vocabulary(o) == 1 + 9 + 5 + 9 * 5);
  for (int64_t n = 0; n < one.inputs.size(0); ++n)
    for (int64_t p = 0; p < o.pairs; ++p) {
      const int64_t key = at(two.inputs, n, 2 * p) - mqar_key_token(0);
      const int64_t value = at(two.inputs, n, 2 * p + 1) - mqar_value_token(0, o);
      CHECK(at(one.inputs, n, 2 * p) == mqar_pair_token(key, value, o));
      CHECK(at(one.inputs, n, 2 * p + 1) == 0);  // filler at the value's place
      for (int64_t t = 2 * o.pairs; t < 16; ++t) CHECK(at(one.inputs, n, t) == at(two.inputs, n, t));
    }
  const std::string text = mqar_text(one, 0, o);
  INFO(text);
  CHECK(text.find('=') != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '?') == 4);
  CHECK(mqar_text(two, 0, o).find(" v") != std::string::npos);
}

TEST_CASE("mqar: options out of range are refused with the fix") {
  MqarOptions o = small_task();
  o.keys = 5;
  check_error([&] { make_mqar(o); }, {"keys must be at least the 6 pairs"});
  o = small_task(), o.queries = 7;
  check_error([&] { make_mqar(o); }, {"queries must be in [1, pairs = 6]", "7"});
  o = small_task(), o.queries = 0;
  check_error([&] { make_mqar(o); }, {"queries must be in [1, pairs = 6]"});
  o = small_task(), o.length = 15;
  check_error([&] { make_mqar(o); }, {"length 15 is too short", "at least 16"});
  o = small_task(), o.values = 1;
  check_error([&] { make_mqar(o); }, {"values must be >= 2"});
  o = small_task(), o.pairs = 0;
  check_error([&] { make_mqar(o); }, {"pairs must be >= 1"});
  o = small_task(), o.test = -1;
  check_error([&] { make_mqar(o); }, {"the parts need >= 0 sequences"});
}
