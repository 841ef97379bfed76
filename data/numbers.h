// The number task of lessons 07, 09 and 10, generated and seeded: a number written in English words
// becomes its digits, in groups of three separated by commas as English writes them.
//   "seven" -> "7"      "three hundred twelve thousand and five" -> "312,005"
//   "nine billion forty million and one" -> "9,040,000,001"
// Unlike a date, whose source says the same year, month and day however it is written, a number
// carries more the longer it is written: every digit is new information. So a fixed-size context
// vector must hold more for a long source than for a short one, which is what lessons 07 and 09
// measure by source length. Sources are read as words, targets as characters (the digits).
#pragma once

#include <cstdint>
#include <string>

#include "data/pairs.h"

namespace ladder::data {

// The most digits a number of the task may have: 15 digits is below a quadrillion, the largest
// scale word is "trillion".
inline constexpr int kMaxNumberDigits = 15;

// The number in words, groups of three digits with their scale (thousand, million, billion,
// trillion), "and" before a last group below one hundred that follows a higher one:
//   0 -> "zero"   105 -> "one hundred five"   1005 -> "one thousand and five"
//   312005 -> "three hundred twelve thousand and five"   20000017 -> "twenty million and seventeen"
// Throws ladder::Error for a number of more than kMaxNumberDigits digits.
std::string number_in_words(uint64_t n);
// The digits with a comma between groups of three: 312005 -> "312,005", 7 -> "7".
std::string number_in_digits(uint64_t n);

struct NumberTaskOptions {
  int max_digits = 12;                             // numbers of 1 to max_digits digits
  int64_t train = 20000, val = 1000, test = 1000;  // pairs in each part, each source once
  uint64_t seed = 0;                               // which numbers are drawn, which part each is in
  // Throws ladder::Error for max_digits outside 1-kMaxNumberDigits or a part of a negative size
  // (training needs at least 1 pair).
  void check(const char* op) const;
};

// The pairs (words, digits with commas) of each part. The count of digits is drawn uniformly from 1 to
// max_digits for each pair, then the digits (the first not 0), so that source lengths spread
// evenly from one word to about 1.7 words per digit. A number belongs to one part, decided by
// generated_part() of its words (about 80% train, 10% validation, 10% test), and is drawn at most
// once. Short numbers run out (there are 10 of one digit): a part that has taken all of its
// numbers of some length draws another length instead. Each part draws from its own child of the
// seed's generator, so the test part stays put when the training part grows. Throws ladder::Error
// for bad options and when a part cannot find enough distinct numbers (max_digits 1 or 2).
PairSplits make_number_task(const NumberTaskOptions& options);

}  // namespace ladder::data
