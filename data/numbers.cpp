#include "data/numbers.h"

#include <unordered_set>

#include "core/error.h"
#include "core/random.h"

namespace ladder::data {

namespace {

const char* const kUnits[20] = {"zero",    "one",     "two",       "three",    "four",     "five",    "six",
                                "seven",   "eight",   "nine",      "ten",      "eleven",   "twelve",  "thirteen",
                                "fourteen", "fifteen", "sixteen",  "seventeen", "eighteen", "nineteen"};
const char* const kTens[10] = {"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
const char* const kScales[5] = {"", "thousand", "million", "billion", "trillion"};

// 1 to 999 in words: "three hundred twelve", "forty five", "seven".
std::string group_in_words(uint64_t n) {
  std::string words;
  auto add = [&words](const std::string& word) { words += (words.empty() ? "" : " ") + word; };
  if (n >= 100) add(std::string(kUnits[n / 100]) + " hundred");
  n %= 100;
  if (n >= 20) {
    add(kTens[n / 10]);
    if (n % 10 != 0) add(kUnits[n % 10]);
  } else if (n > 0) {
    add(kUnits[n]);
  }
  return words;
}

uint64_t power_of_ten(int exponent) {
  uint64_t p = 1;
  for (int i = 0; i < exponent; ++i) p *= 10;
  return p;
}

// A number of exactly `digits` digits, uniformly (0 to 9 for one digit).
uint64_t draw_number(int digits, Generator& gen) {
  const uint64_t low = digits == 1 ? 0 : power_of_ten(digits - 1);
  return low + static_cast<uint64_t>(gen.randint(0, static_cast<int64_t>(power_of_ten(digits) - low)));
}

}  // namespace

std::string number_in_words(uint64_t n) {
  if (n >= power_of_ten(kMaxNumberDigits))
    fail("number_in_words", n, " has more than ", kMaxNumberDigits, " digits; the largest scale word is trillion");
  if (n == 0) return kUnits[0];
  std::string words;
  for (int scale = 4; scale >= 0; --scale) {
    const uint64_t group = n / power_of_ten(3 * scale) % 1000;
    if (group == 0) continue;
    if (scale == 0 && !words.empty() && group < 100) words += " and";  // "one thousand and five"
    words += (words.empty() ? "" : " ") + group_in_words(group);
    if (scale > 0) words += std::string(" ") + kScales[scale];
  }
  return words;
}

std::string number_in_digits(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

void NumberTaskOptions::check(const char* op) const {
  if (max_digits < 1 || max_digits > kMaxNumberDigits)
    fail(op, "max_digits must be within 1-", kMaxNumberDigits, ", got ", max_digits);
  if (train < 1 || val < 0 || test < 0)
    fail(op, "asked for ", train, " training, ", val, " validation and ", test,
         " test pairs; training needs at least 1, the others at least 0");
}

PairSplits make_number_task(const NumberTaskOptions& options) {
  options.check("make_number_task");
  PairSplits out;
  out.description = cat("numbers of 1 to ", options.max_digits, " digits in words (seed ", options.seed, ")");
  Generator root(options.seed);
  for (const auto& [part, name, wanted, pairs] : parts_to_fill(out, options.train, options.val, options.test)) {
    Generator gen = root.child();
    std::unordered_set<uint64_t> seen;
    // Draws that land in another part or repeat a number are drawn again; past this many the
    // lengths asked for have run out of numbers.
    const int64_t attempts = 1000 + 100 * wanted;
    for (int64_t attempt = 0; static_cast<int64_t>(pairs.size()) < wanted; ++attempt) {
      if (attempt == attempts)
        fail("make_number_task", "found only ", pairs.size(), " distinct ", name, " numbers of up to ", options.max_digits,
             " digits, asked for ", wanted, "; ask for fewer pairs or more digits");
      const uint64_t n = draw_number(static_cast<int>(gen.randint(1, options.max_digits + 1)), gen);
      std::string words = number_in_words(n);
      if (generated_part(words, options.seed) != part || !seen.insert(n).second) continue;
      pairs.push_back({std::move(words), number_in_digits(n)});
    }
  }
  return out;
}

}  // namespace ladder::data
