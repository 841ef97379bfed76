#include "data/listops.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/random.h"
#include "data/visible_text.h"

namespace ladder::data {

namespace {

constexpr const char* kOperatorWords[] = {"[MIN", "[MAX", "[MED", "[SM"};  // ids kListOpsMin ...
constexpr int64_t kMaxDraws = 100000;  // draws per expression before the range is called too narrow

using Expressions = std::set<std::vector<int64_t>>;  // every expression drawn so far, in any part

bool is_digit(int64_t id) { return id >= listops_digit(0) && id <= listops_digit(9); }
bool is_operator(int64_t id) { return id >= kListOpsMin && id <= kListOpsSum; }

// Appends an operator at level `depth` of the tree (the outermost is 1) and its arguments, on level
// depth + 1, to `ids`: as in the LRA's generate_tree, a node on the last level, max_depth, is a
// digit. Gives up (false) as soon as the expression grows past max_len, so that a huge tree costs
// no more than that.
bool grow(std::vector<int64_t>& ids, int64_t depth, const ListOpsOptions& o, Generator& gen) {
  ids.push_back(kListOpsMin + gen.randint(0, 4));
  const int64_t arguments = gen.randint(2, o.max_args + 1);
  for (int64_t a = 0; a < arguments; ++a) {
    if (static_cast<int64_t>(ids.size()) > o.max_len) return false;
    if (depth + 1 < o.max_depth && gen.uniform() < o.operator_p) {
      if (!grow(ids, depth + 1, o, gen)) return false;
    } else {
      ids.push_back(listops_digit(gen.randint(0, 10)));
    }
  }
  ids.push_back(kListOpsClose);
  return static_cast<int64_t>(ids.size()) <= o.max_len;
}

// A tree of an allowed length that `seen` does not hold yet; adds it there.
std::vector<int64_t> draw_expression(const ListOpsOptions& o, Generator& gen, Expressions& seen) {
  std::vector<int64_t> ids;
  for (int64_t draw = 0; draw < kMaxDraws; ++draw) {
    ids.clear();
    if (grow(ids, 1, o, gen) && static_cast<int64_t>(ids.size()) >= o.min_len && seen.insert(ids).second) return ids;
  }
  fail("make_listops", "no new expression of ", o.min_len, " to ", o.max_len, " tokens in ", kMaxDraws,
       " draws (max_depth ", o.max_depth, ", max_args ", o.max_args, ", operator_p ", o.operator_p, ", ", seen.size(),
       " distinct expressions drawn before); widen the length range, raise max_depth or max_args for longer "
       "expressions, or ask for fewer");
}

ListOpsSet draw_set(int64_t count, const ListOpsOptions& o, Generator gen, Expressions& seen) {
  ListOpsSet set{zeros({count, o.max_len}), zeros({count, o.max_len}), zeros({count}),
                 std::vector<int64_t>(static_cast<size_t>(count))};
  for (int64_t n = 0; n < count; ++n) {
    const std::vector<int64_t> ids = draw_expression(o, gen, seen);
    const auto length = static_cast<int64_t>(ids.size());
    for (int64_t t = 0; t < length; ++t) {
      set.tokens.data()[n * o.max_len + t] = static_cast<float>(ids[t]);
      set.valid.data()[n * o.max_len + t] = 1;
    }
    set.answers.data()[n] = static_cast<float>(evaluate_listops(ids).answer);
    set.lengths[n] = length;
  }
  return set;
}

// The value of one operator over its arguments (digits 0-9, at least one).
int64_t apply(int64_t op, std::vector<int64_t> args) {
  switch (op) {
    case kListOpsMin: return *std::min_element(args.begin(), args.end());
    case kListOpsMax: return *std::max_element(args.begin(), args.end());
    case kListOpsMed: {
      std::sort(args.begin(), args.end());
      const size_t half = args.size() / 2;
      return args.size() % 2 ? args[half] : (args[half - 1] + args[half]) / 2;
    }
    default: {  // kListOpsSum
      int64_t sum = 0;
      for (const int64_t a : args) sum += a;
      return sum % 10;
    }
  }
}

}  // namespace

void ListOpsOptions::check() const {
  const char* op = "ListOpsOptions";
  if (min_len < 4 || max_len < min_len)
    fail(op, "lengths must satisfy 4 <= min_len <= max_len (the shortest expression is '[SM 1 2 ]'), got min_len ",
         min_len, " and max_len ", max_len);
  if (max_depth < 2)
    fail(op, "max_depth must be >= 2 (an operator and its digits: the tree's levels, the digits' counted), got ",
         max_depth);
  if (max_args < 2) fail(op, "max_args must be >= 2 (every operator takes at least two arguments), got ", max_args);
  if (!(operator_p >= 0 && operator_p <= 1)) fail(op, "operator_p must be in [0, 1], got ", operator_p);
  if (train < 0 || val < 0 || test < 0)
    fail(op, "the parts need >= 0 expressions, got train ", train, ", val ", val, ", test ", test);
  // The longest expression: every argument an operator down to level max_depth - 1, each with
  // max_args arguments, and digits on the last level.
  int64_t longest = 2 + max_args;  // an operator over digits alone, at level max_depth - 1
  for (int64_t depth = max_depth - 2; depth >= 1 && operator_p > 0 && longest < min_len; --depth)
    longest = 2 + max_args * longest;
  if (longest < min_len)
    fail(op, "the longest expression that max_depth ", max_depth, " and max_args ", max_args,
         (operator_p > 0 ? "" : " with operator_p 0"), " allow has ", longest, " tokens, fewer than min_len ", min_len,
         "; raise max_depth or max_args, or lower min_len");
}

int64_t listops_digit(int64_t digit) { return 1 + digit; }

ListOpsSplits make_listops(const ListOpsOptions& o) {
  o.check();
  Generator root(o.seed);  // one child per part
  Generator train = root.child(), val = root.child(), test = root.child();
  Expressions seen;  // test first, so that it does not change when the others grow
  ListOpsSplits splits;
  splits.test = draw_set(o.test, o, test, seen);
  splits.val = draw_set(o.val, o, val, seen);
  splits.train = draw_set(o.train, o, train, seen);
  return splits;
}

ListOpsValue evaluate_listops(const std::vector<int64_t>& ids) {
  const char* op = "evaluate_listops";
  struct Open {
    int64_t op;
    std::vector<int64_t> args;
  };
  std::vector<Open> open;      // the operators not yet closed, innermost last
  std::vector<int64_t> top;    // values outside every operator
  ListOpsValue value;
  for (size_t t = 0; t < ids.size() && ids[t] != kListOpsPad; ++t) {
    const int64_t id = ids[t];
    std::vector<int64_t>& into = open.empty() ? top : open.back().args;
    if (is_digit(id)) {
      into.push_back(id - listops_digit(0));
    } else if (is_operator(id)) {
      open.push_back({id, {}});
      value.depth = std::max(value.depth, static_cast<int64_t>(open.size()));
      ++value.operators;
    } else if (id == kListOpsClose) {
      if (open.empty()) fail(op, "']' at position ", t, " closes no operator: ", listops_text(ids));
      if (open.back().args.empty()) fail(op, "the operator closed at position ", t, " has no arguments");
      value.widest = std::max(value.widest, static_cast<int64_t>(open.back().args.size()));
      const int64_t result = apply(open.back().op, open.back().args);
      open.pop_back();
      (open.empty() ? top : open.back().args).push_back(result);
    } else {
      fail(op, "id ", id, " at position ", t, " is not a ListOps token (0 to ", kListOpsVocabulary - 1, ")");
    }
  }
  if (!open.empty()) fail(op, open.size(), " operator(s) left open at the end; every '[OP' needs its ']'");
  if (top.size() != 1) fail(op, "an expression is one value, this one has ", top.size(), " at the top");
  value.answer = top[0];
  return value;
}

std::vector<int64_t> listops_ids(const std::string& text) {
  std::vector<int64_t> ids;
  size_t at = 0;
  while ((at = text.find_first_not_of(' ', at)) != std::string::npos) {
    const size_t end = std::min(text.find(' ', at), text.size());
    const std::string word = text.substr(at, end - at);
    const auto named = std::find(std::begin(kOperatorWords), std::end(kOperatorWords), word);
    if (named != std::end(kOperatorWords)) ids.push_back(kListOpsMin + (named - std::begin(kOperatorWords)));
    else if (word == "]") ids.push_back(kListOpsClose);
    else if (word.size() == 1 && word[0] >= '0' && word[0] <= '9') ids.push_back(listops_digit(word[0] - '0'));
    else fail("listops_ids", "'", visible(word), "' is not a ListOps word; the words are [MIN [MAX [MED [SM ] and the digits 0-9");
    at = end;
  }
  return ids;
}

std::string listops_text(const std::vector<int64_t>& ids) {
  std::string text;
  for (const int64_t id : ids) {
    if (id == kListOpsPad) break;
    if (!text.empty()) text += ' ';
    if (is_digit(id)) text += static_cast<char>('0' + (id - listops_digit(0)));
    else if (is_operator(id)) text += kOperatorWords[id - kListOpsMin];
    else if (id == kListOpsClose) text += ']';
    else text += '?';
  }
  return text;
}

std::vector<int64_t> listops_row(const ListOpsSet& set, int64_t n) {
  const int64_t width = set.tokens.size(1);
  std::vector<int64_t> ids(static_cast<size_t>(set.lengths[n]));
  for (size_t t = 0; t < ids.size(); ++t) ids[t] = static_cast<int64_t>(set.tokens.data()[n * width + static_cast<int64_t>(t)]);
  return ids;
}

std::array<int64_t, kListOpsClasses> answer_counts(const ListOpsSet& set) {
  std::array<int64_t, kListOpsClasses> counts{};
  for (int64_t n = 0; n < set.answers.numel(); ++n) ++counts[static_cast<size_t>(set.answers.data()[n])];
  return counts;
}

}  // namespace ladder::data
