// ListOps (Nangia and Bowman 2018, as the Long Range Arena generates it, Tay et al. 2020): nested
// lists of digits under four operators, written as the LRA writes them, one token per word:
//   [MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ]      -> 5
// MIN, MAX, MED (the median; of an even count, the mean of the middle two rounded down) and SM (the
// sum modulo 10) over digits 0-9; the answer is one digit, the class. The generator draws a tree by
// the LRA's rule: an operator takes 2 to max_args arguments, each of which is another operator with
// probability operator_p (while the tree, its digits counted, stays within max_depth levels) and a
// digit otherwise; trees whose token count falls outside [min_len, max_len] are drawn again, and so
// are trees already drawn: as the LRA's set of examples, no expression is in two parts, or twice in one.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ladder::data {

// Token ids: 0 padding, 1-10 the digits 0-9, then the operators and the closing bracket.
inline constexpr int64_t kListOpsPad = 0, kListOpsMin = 11, kListOpsMax = 12, kListOpsMed = 13, kListOpsSum = 14,
                         kListOpsClose = 15, kListOpsVocabulary = 16;
inline constexpr int64_t kListOpsClasses = 10;  // the answers 0-9
int64_t listops_digit(int64_t digit);           // the id of digit 0-9

struct ListOpsOptions {
  int64_t min_len = 128, max_len = 512;  // tokens per expression, both ends included (LRA: 500 to 2000)
  int64_t max_depth = 10;  // levels of the tree, the digits' counted: operators nest max_depth - 1 deep (LRA: 10)
  int64_t max_args = 10;                 // arguments per operator at most; at least 2 always (LRA: 10)
  double operator_p = 0.25;              // an argument is an operator with this probability (LRA: 0.25)
  int64_t train = 10000, val = 1000, test = 1000;  // expressions in each part
  uint64_t seed = 0;  // each part draws from its own generator made from the seed

  // Throws ladder::Error when a setting is out of range or the tree rule cannot reach min_len.
  // make_listops calls it; a lesson calls it to refuse its flags before any work.
  void check() const;
};

struct ListOpsSet {
  Tensor tokens;  // (N, max_len): token ids as floats, padding after the expression
  Tensor valid;   // (N, max_len): 1 on the expression's tokens, 0 on padding
  Tensor answers;  // (N): the value of the expression, a class in [0, 10)
  std::vector<int64_t> lengths;  // tokens in each expression
};

struct ListOpsSplits {
  ListOpsSet train, val, test;
};

// The test part is drawn first, then validation, then training, each from its own generator made
// from the seed, each skipping what the parts before it hold: the test part does not change when
// the others grow. Checks the options first (ListOpsOptions::check); throws ladder::Error when no
// new expression of an allowed length turns up in many draws (the range is too narrow for the tree
// rule or too small for the expressions asked for).
ListOpsSplits make_listops(const ListOpsOptions& options);

// What evaluating an expression finds: its value and the shape of its tree.
struct ListOpsValue {
  int64_t answer = 0;
  int64_t depth = 0;    // operators nested at most (a lone digit: 0)
  int64_t widest = 0;   // the most arguments of any operator
  int64_t operators = 0;
};

// Computes an expression from its ids (padding ends it), with a stack of open operators; throws
// ladder::Error naming the position for a stray ']', an operator left open, an operator without
// arguments or more than one value at the top.
ListOpsValue evaluate_listops(const std::vector<int64_t>& ids);
std::vector<int64_t> listops_ids(const std::string& text);  // "[SM 3 9 ]" -> ids; unknown words throw
std::string listops_text(const std::vector<int64_t>& ids);   // ids -> "[SM 3 9 ]", padding left out
std::vector<int64_t> listops_row(const ListOpsSet& set, int64_t n);  // expression n's ids, without padding

std::array<int64_t, kListOpsClasses> answer_counts(const ListOpsSet& set);

}  // namespace ladder::data
