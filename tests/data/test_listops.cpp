// The generated ListOps task (data/listops.h): the operators on hand-made expressions, the same
// seed gives the same expressions, every label is the evaluator's answer, lengths, depth and
// arguments stay within their bounds, the answers spread over the classes, the errors.
#include "helpers.h"

#include <algorithm>

#include "data/listops.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_error;

namespace {

ListOpsOptions small_task() {
  return {.min_len = 20, .max_len = 80, .max_depth = 4, .max_args = 5, .train = 300, .val = 50, .test = 50, .seed = 3};
}

bool same(const ListOpsSet& a, const ListOpsSet& b) {
  return a.tokens.shape() == b.tokens.shape() &&
         std::equal(a.tokens.data(), a.tokens.data() + a.tokens.numel(), b.tokens.data()) &&
         std::equal(a.answers.data(), a.answers.data() + a.answers.numel(), b.answers.data()) && a.lengths == b.lengths;
}

int64_t value_of(const std::string& text) { return evaluate_listops(listops_ids(text)).answer; }

}  // namespace

TEST_CASE("listops: each operator on hand-made expressions") {
  CHECK(value_of("[MIN 4 2 7 ]") == 2);
  CHECK(value_of("[MAX 4 2 7 ]") == 7);
  CHECK(value_of("[MED 9 1 4 ]") == 4);     // odd count: the middle one after sorting
  CHECK(value_of("[MED 9 1 4 6 ]") == 5);   // even count: (4 + 6) / 2
  CHECK(value_of("[MED 2 1 ]") == 1);       // (1 + 2) / 2 rounded down
  CHECK(value_of("[SM 9 8 7 ]") == 4);      // 24 modulo 10
  CHECK(value_of("[SM 0 0 ]") == 0);
  // Nested: [MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ] = MAX(4, 3, 2, 1, 0, 5) = 5 (the LRA's example)
  const ListOpsValue v = evaluate_listops(listops_ids("[MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ]"));
  CHECK(v.answer == 5);
  CHECK(v.depth == 2);
  CHECK(v.widest == 6);
  CHECK(v.operators == 3);
  CHECK(value_of("[SM [SM 9 9 ] [MED [MIN 3 8 ] 7 ] 1 ]") == 4);  // 8 + MED(3, 7) = 5, + 1: 14 -> 4
  CHECK(evaluate_listops(listops_ids("[SM [SM [SM 1 1 ] 1 ] 1 ]")).depth == 3);
  CHECK(listops_text(listops_ids("[MED  1 [SM 2 3 ] ]")) == "[MED 1 [SM 2 3 ] ]");
}

TEST_CASE("listops: the same seed gives the same expressions, another seed others") {
  const ListOpsOptions o = small_task();
  const ListOpsSplits a = make_listops(o), b = make_listops(o);
  CHECK(same(a.train, b.train));
  CHECK(same(a.val, b.val));
  CHECK(same(a.test, b.test));
  CHECK(listops_row(a.train, 0) != listops_row(a.val, 0));  // each part draws from its own generator
  CHECK(listops_row(a.val, 0) != listops_row(a.test, 0));
  ListOpsOptions other = o;
  other.seed = 4;
  CHECK(!same(make_listops(other).train, a.train));
  ListOpsOptions more_train = o;
  more_train.train = 500;
  CHECK(same(make_listops(more_train).test, a.test));  // the test part does not move
}

TEST_CASE("listops: every label is the evaluator's answer, and lengths, depth and arguments hold their bounds") {
  const ListOpsOptions o = small_task();
  const ListOpsSet set = make_listops(o).train;
  REQUIRE(set.tokens.shape() == Shape{300, 80});
  REQUIRE(set.valid.shape() == Shape{300, 80});
  int64_t deepest = 0, widest = 0, shortest = o.max_len, longest = 0;
  for (int64_t n = 0; n < 300; ++n) {
    const std::vector<int64_t> ids = listops_row(set, n);
    INFO("expression ", n, ": ", listops_text(ids));
    const ListOpsValue v = evaluate_listops(ids);
    CHECK(v.answer == static_cast<int64_t>(set.answers.data()[n]));
    CHECK(v.depth >= 1);
    CHECK(v.depth <= o.max_depth);
    CHECK(v.widest >= 2);
    CHECK(v.widest <= o.max_args);
    const int64_t length = set.lengths[n];
    CHECK(length >= o.min_len);
    CHECK(length <= o.max_len);
    for (int64_t t = 0; t < o.max_len; ++t) {  // valid marks exactly the expression, padding is 0 after it
      CHECK(set.valid.data()[n * o.max_len + t] == (t < length ? 1.0f : 0.0f));
      if (t >= length) CHECK(set.tokens.data()[n * o.max_len + t] == kListOpsPad);
    }
    deepest = std::max(deepest, v.depth), widest = std::max(widest, v.widest);
    shortest = std::min(shortest, length), longest = std::max(longest, length);
  }
  CHECK(deepest == o.max_depth);  // the bounds are reached, not just respected
  CHECK(widest == o.max_args);
  CHECK(shortest < 30);  // the lengths spread over the range
  CHECK(longest > 65);
  const auto counts = answer_counts(set);
  CHECK(std::count_if(counts.begin(), counts.end(), [](int64_t c) { return c > 0; }) >= 8);  // most answers occur
  int64_t total = 0;
  for (const int64_t c : counts) total += c;
  CHECK(total == 300);
}

TEST_CASE("listops: operator_p 0 gives one operator over digits, operator_p 1 nests to max_depth") {
  ListOpsOptions flat = small_task();
  flat.min_len = 4;
  flat.max_len = 12;
  flat.operator_p = 0;
  const ListOpsSet set = make_listops(flat).test;
  for (int64_t n = 0; n < 50; ++n) CHECK(evaluate_listops(listops_row(set, n)).depth == 1);
  ListOpsOptions deep = small_task();
  deep.operator_p = 1;
  deep.max_depth = 3;
  deep.max_args = 2;
  deep.min_len = 4;
  deep.max_len = 40;
  // Every argument above the last level is an operator: a full binary tree of 3 levels, 4 * 2 digits.
  const ListOpsSet full = make_listops(deep).val;
  for (int64_t n = 0; n < 50; ++n) {
    const ListOpsValue v = evaluate_listops(listops_row(full, n));
    CHECK(v.depth == 3);
    CHECK(v.operators == 7);
    CHECK(full.lengths[n] == 7 * 2 + 8);
  }
}

TEST_CASE("listops errors") {
  const auto with = [](auto change) {
    ListOpsOptions o = small_task();
    change(o);
    return o;
  };
  check_error([&] { make_listops(with([](auto& o) { o.min_len = 3; })); },
              {"make_listops", "4 <= min_len <= max_len", "got min_len 3 and max_len 80"});
  check_error([&] { make_listops(with([](auto& o) { o.max_len = 10; })); }, {"got min_len 20 and max_len 10"});
  check_error([&] { make_listops(with([](auto& o) { o.max_depth = 0; })); }, {"max_depth must be >= 1", "got 0"});
  check_error([&] { make_listops(with([](auto& o) { o.max_args = 1; })); }, {"max_args must be >= 2", "got 1"});
  check_error([&] { make_listops(with([](auto& o) { o.operator_p = 1.5; })); }, {"operator_p must be in [0, 1], got 1.5"});
  check_error([&] { make_listops(with([](auto& o) { o.test = -2; })); }, {"got train 300, val 50, test -2"});
  // Two levels of at most 3 arguments make at most 2 + 3 * (2 + 3) = 17 tokens.
  check_error([&] { make_listops(with([](auto& o) { o.max_depth = 2, o.max_args = 3, o.min_len = 18; })); },
              {"the longest expression that max_depth 2 and max_args 3 allow has 17 tokens, fewer than min_len 18"});
  CHECK(make_listops(with([](auto& o) { o.max_depth = 2, o.max_args = 3, o.min_len = 17, o.operator_p = 0.9; })).train.lengths[0] == 17);
  check_error([&] { make_listops(with([](auto& o) { o.operator_p = 0; })); }, {"with operator_p 0 allow has 7 tokens"});
  // Possible, but an operator nests once in a million arguments: 100 tokens never turns up.
  check_error([&] { make_listops(with([](auto& o) { o.operator_p = 1e-6, o.min_len = 100, o.max_len = 200; })); },
              {"no expression of 100 to 200 tokens", "widen the length range"});
  check_error([] { listops_ids("[MAX 3 (4 ]"); }, {"listops_ids", "'(4' is not a ListOps word"});
  check_error([] { evaluate_listops(listops_ids("[MAX 3 ] ]")); }, {"evaluate_listops", "']' at position 3 closes no operator"});
  check_error([] { evaluate_listops(listops_ids("[MAX 3 [MIN 4 ]")); }, {"1 operator(s) left open"});
  check_error([] { evaluate_listops(listops_ids("[SM ]")); }, {"closed at position 1 has no arguments"});
  check_error([] { evaluate_listops(listops_ids("[SM 1 2 ] 7")); }, {"this one has 2 at the top"});
  check_error([] { evaluate_listops({listops_digit(1), 99}); }, {"id 99 at position 1 is not a ListOps token"});
}
