// The generated ListOps task (data/listops.h): the operators on hand-made expressions, the same
// seed gives the same expressions, no expression is in two parts, every label is the evaluator's
// answer, lengths, depth (as the LRA's generator counts it) and arguments stay within their bounds,
// the answers spread over the classes, the errors.
#include "helpers.h"

#include <algorithm>
#include <set>

#include "data/listops.h"
#include "data/split_checks.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_error;

namespace {

ListOpsOptions small_task() {
  return {.min_len = 20, .max_len = 80, .max_depth = 4, .max_args = 5, .train = 300, .val = 50, .test = 50, .seed = 3};
}

bool same(const ListOpsSet& a, const ListOpsSet& b) {
  return testing::same_values(a.tokens, b.tokens) && testing::same_values(a.answers, b.answers) && a.lengths == b.lengths;
}

std::set<std::vector<int64_t>> expressions_of(const ListOpsSet& set) {
  std::set<std::vector<int64_t>> out;
  for (int64_t n = 0; n < set.answers.numel(); ++n) out.insert(listops_row(set, n));
  return out;
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
  testing::check_seeded_splits(small_task(), make_listops, same, [](const ListOpsSet& set) { return listops_row(set, 0); });
}

TEST_CASE("listops: no expression is in two parts or twice in one, as in the LRA's set of examples") {
  // Expressions of exactly 4 tokens, '[OP d d ]', number 4 * 10 * 10 = 400: drawn at random, 300
  // of them would repeat some 90 times without the check.
  ListOpsOptions o = small_task();
  o.min_len = o.max_len = 4;
  o.max_args = 2;
  o.train = 250, o.val = 50, o.test = 50;
  const ListOpsSplits s = make_listops(o);
  const auto train = expressions_of(s.train), val = expressions_of(s.val), test = expressions_of(s.test);
  CHECK(train.size() == 250);
  CHECK(val.size() == 50);
  CHECK(test.size() == 50);
  std::set<std::vector<int64_t>> all = train;
  all.insert(val.begin(), val.end());
  all.insert(test.begin(), test.end());
  CHECK(all.size() == 350);
  // The default sizes, on the lesson's lengths: no test expression is in training.
  const ListOpsSplits big = make_listops({.min_len = 16, .max_len = 64, .train = 3000, .val = 0, .test = 300});
  const auto big_train = expressions_of(big.train);
  for (const auto& e : expressions_of(big.test)) CHECK(big_train.count(e) == 0);
  CHECK(big_train.size() == 3000);
  o.train = 301;  // 400 in all are possible, 401 are asked for
  check_error([&] { make_listops(o); },
              {"make_listops", "no new expression of 4 to 4 tokens", "400 distinct expressions drawn before", "ask for fewer"});
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
    CHECK(v.depth <= o.max_depth - 1);  // the digits take the last level
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
  CHECK(deepest == o.max_depth - 1);  // the bounds are reached, not just respected
  CHECK(widest == o.max_args);
  CHECK(shortest < 30);  // the lengths spread over the range
  CHECK(longest > 65);
  const auto counts = answer_counts(set);
  CHECK(std::count_if(counts.begin(), counts.end(), [](int64_t c) { return c > 0; }) >= 8);  // most answers occur
  int64_t total = 0;
  for (const int64_t c : counts) total += c;
  CHECK(total == 300);
}

TEST_CASE("listops: operator_p 0 gives one operator over digits, operator_p 1 nests to max_depth levels") {
  ListOpsOptions flat = small_task();
  flat.min_len = 4;
  flat.max_len = 12;
  flat.operator_p = 0;
  const ListOpsSet set = make_listops(flat).test;
  for (int64_t n = 0; n < 50; ++n) CHECK(evaluate_listops(listops_row(set, n)).depth == 1);
  ListOpsOptions deep = small_task();
  deep.operator_p = 1;
  deep.max_depth = 4;
  deep.max_args = 2;
  deep.min_len = 4;
  deep.max_len = 40;
  // Every node above the last level is an operator: a full binary tree of 4 levels, 3 of
  // operators (as the LRA's generate_tree(1, 4, 2) with VALUE_P 1) and 8 digits on the last.
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
              {"ListOpsOptions", "4 <= min_len <= max_len", "got min_len 3 and max_len 80"});
  check_error([&] { with([](auto& o) { o.max_args = 0; }).check(); }, {"ListOpsOptions", "max_args must be >= 2", "got 0"});
  CHECK_NOTHROW(small_task().check());
  check_error([&] { make_listops(with([](auto& o) { o.max_len = 10; })); }, {"got min_len 20 and max_len 10"});
  check_error([&] { make_listops(with([](auto& o) { o.max_depth = 1; })); }, {"max_depth must be >= 2", "got 1"});
  check_error([&] { make_listops(with([](auto& o) { o.max_args = 1; })); }, {"max_args must be >= 2", "got 1"});
  check_error([&] { make_listops(with([](auto& o) { o.operator_p = 1.5; })); }, {"operator_p must be in [0, 1], got 1.5"});
  check_error([&] { make_listops(with([](auto& o) { o.test = -2; })); }, {"got train 300, val 50, test -2"});
  // Three levels (two of operators) of at most 3 arguments make at most 2 + 3 * (2 + 3) = 17 tokens.
  check_error([&] { make_listops(with([](auto& o) { o.max_depth = 3, o.max_args = 3, o.min_len = 18; })); },
              {"the longest expression that max_depth 3 and max_args 3 allow has 17 tokens, fewer than min_len 18"});
  CHECK(make_listops(with([](auto& o) { o.max_depth = 3, o.max_args = 3, o.min_len = 17, o.operator_p = 0.9, o.train = 3, o.val = 3, o.test = 3; })).train.lengths[0] == 17);
  check_error([&] { make_listops(with([](auto& o) { o.operator_p = 0; })); }, {"with operator_p 0 allow has 7 tokens"});
  // Possible, but an operator nests once in a million arguments: 100 tokens never turns up.
  check_error([&] { make_listops(with([](auto& o) { o.operator_p = 1e-6, o.min_len = 100, o.max_len = 200; })); },
              {"no new expression of 100 to 200 tokens", "widen the length range"});
  check_error([] { listops_ids("[MAX 3 (4 ]"); }, {"listops_ids", "'(4' is not a ListOps word"});
  check_error([] { evaluate_listops(listops_ids("[MAX 3 ] ]")); }, {"evaluate_listops", "']' at position 3 closes no operator"});
  check_error([] { evaluate_listops(listops_ids("[MAX 3 [MIN 4 ]")); }, {"1 operator(s) left open"});
  check_error([] { evaluate_listops(listops_ids("[SM ]")); }, {"closed at position 1 has no arguments"});
  check_error([] { evaluate_listops(listops_ids("[SM 1 2 ] 7")); }, {"this one has 2 at the top"});
  check_error([] { evaluate_listops({listops_digit(1), 99}); }, {"id 99 at position 1 is not a ListOps token"});
}
