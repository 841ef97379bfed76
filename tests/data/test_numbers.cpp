// The generated number task: numbers in words, read back by a parser written independently; the
// split by distinct source; lengths from one word to many.
#include "helpers.h"
#include "pair_sets.h"
#include "split_checks.h"

#include <map>
#include <set>
#include <sstream>

#include "data/numbers.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_error;
using ladder::testing::shared;
using ladder::testing::sources_of;

namespace {

// Words back to the number, by the rules of English rather than by the generator's tables: small
// words add to the current group, "hundred" multiplies it, a scale word closes it.
uint64_t parse_words(const std::string& words) {
  const std::map<std::string, uint64_t> small = {
      {"zero", 0},     {"one", 1},      {"two", 2},        {"three", 3},     {"four", 4},     {"five", 5},
      {"six", 6},      {"seven", 7},    {"eight", 8},      {"nine", 9},      {"ten", 10},     {"eleven", 11},
      {"twelve", 12},  {"thirteen", 13}, {"fourteen", 14}, {"fifteen", 15},  {"sixteen", 16}, {"seventeen", 17},
      {"eighteen", 18}, {"nineteen", 19}, {"twenty", 20},  {"thirty", 30},   {"forty", 40},   {"fifty", 50},
      {"sixty", 60},   {"seventy", 70},  {"eighty", 80},   {"ninety", 90}};
  const std::map<std::string, uint64_t> scales = {
      {"thousand", 1000ULL}, {"million", 1000000ULL}, {"billion", 1000000000ULL}, {"trillion", 1000000000000ULL}};
  uint64_t total = 0, group = 0;
  std::istringstream in(words);
  for (std::string w; in >> w;) {
    if (w == "and") continue;
    if (w == "hundred") group *= 100;
    else if (scales.count(w)) total += group * scales.at(w), group = 0;
    else group += small.at(w);
  }
  return total + group;
}

int64_t word_count(const std::string& text) {
  std::istringstream in(text);
  int64_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

}  // namespace

TEST_CASE("numbers in words: groups of three with their scale, and before a last group below a hundred") {
  CHECK(number_in_words(0) == "zero");
  CHECK(number_in_words(7) == "seven");
  CHECK(number_in_words(13) == "thirteen");
  CHECK(number_in_words(40) == "forty");
  CHECK(number_in_words(45) == "forty five");
  CHECK(number_in_words(100) == "one hundred");
  CHECK(number_in_words(105) == "one hundred five");
  CHECK(number_in_words(1000) == "one thousand");
  CHECK(number_in_words(1005) == "one thousand and five");
  CHECK(number_in_words(1100) == "one thousand one hundred");
  CHECK(number_in_words(312005) == "three hundred twelve thousand and five");
  CHECK(number_in_words(20000017) == "twenty million and seventeen");
  CHECK(number_in_words(9040000001ULL) == "nine billion forty million and one");
  CHECK(number_in_words(999999999999999ULL) ==
        "nine hundred ninety nine trillion nine hundred ninety nine billion nine hundred ninety nine million "
        "nine hundred ninety nine thousand nine hundred ninety nine");
  check_error([] { number_in_words(1000000000000000ULL); }, {"number_in_words", "more than 15 digits", "trillion"});
  CHECK(number_in_digits(0) == "0");
  CHECK(number_in_digits(999) == "999");
  CHECK(number_in_digits(1000) == "1,000");
  CHECK(number_in_digits(312005) == "312,005");
  CHECK(number_in_digits(9040000001ULL) == "9,040,000,001");
}

TEST_CASE("numbers in words: every number up to 100,000, and numbers of every length, read back to themselves" * doctest::skip(testing::kSanitized)) {
  std::set<std::string> written;
  for (uint64_t n = 0; n <= 100000; ++n) {
    const std::string words = number_in_words(n);
    REQUIRE_MESSAGE(parse_words(words) == n, words);
    written.insert(words);
  }
  CHECK(written.size() == 100001);  // no two numbers share their words
  Generator gen(3);
  for (int i = 0; i < 20000; ++i) {
    const auto n = static_cast<uint64_t>(gen.randint(0, 999999999999999LL + 1)) / static_cast<uint64_t>(gen.randint(1, 1000000));
    REQUIRE_MESSAGE(parse_words(number_in_words(n)) == n, number_in_words(n));
  }
}

TEST_CASE("the number task: targets are the digits of their sources, no source in two parts, lengths spread") {
  const NumberTaskOptions options{.max_digits = 12, .train = 6000, .val = 500, .test = 500, .seed = 2};
  const PairSplits task = make_number_task(options);
  REQUIRE(task.train.size() == 6000);
  REQUIRE(task.val.size() == 500);
  REQUIRE(task.test.size() == 500);
  CHECK(task.description == "numbers of 1 to 12 digits in words (seed 2)");

  const auto train = sources_of(task.train), val = sources_of(task.val), test = sources_of(task.test);
  CHECK(train.size() == task.train.size());  // no source twice within a part
  CHECK(val.size() == task.val.size());
  CHECK(test.size() == task.test.size());
  CHECK(shared(train, test) == 0);
  CHECK(shared(train, val) == 0);
  CHECK(shared(val, test) == 0);

  std::map<size_t, int64_t> by_digits;
  int64_t shortest = 100, longest = 0;
  const std::vector<TextPair>* parts[] = {&task.train, &task.val, &task.test};
  const PairPart names[] = {PairPart::train, PairPart::val, PairPart::test};
  for (size_t p = 0; p < 3; ++p)
    for (const TextPair& pair : *parts[p]) {
      std::string digits = pair.target;
      std::erase(digits, ',');
      REQUIRE_MESSAGE(std::to_string(parse_words(pair.source)) == digits, pair.source, " -> ", pair.target);
      for (size_t comma = pair.target.size(); comma > 3; comma -= 4) CHECK(pair.target[comma - 4] == ',');
      CHECK(generated_part(pair.source, options.seed) == names[p]);
      if (p == 2) {
        ++by_digits[digits.size()];
        shortest = std::min(shortest, word_count(pair.source));
        longest = std::max(longest, word_count(pair.source));
      }
    }
  // The test part: every length from 3 digits on about equally often (1/12 of 500 = 42); of one and
  // two digits there are only the few numbers whose words hash into the test part.
  CHECK(by_digits.size() >= 10);
  for (size_t digits = 3; digits <= 12; ++digits) {
    CHECK_MESSAGE(by_digits[digits] > 20, digits, " digits: ", by_digits[digits]);
    CHECK_MESSAGE(by_digits[digits] < 70, digits, " digits: ", by_digits[digits]);
  }
  CHECK(shortest <= 2);
  CHECK(longest >= 18);  // twelve digits take up to 19 words
}

TEST_CASE("the number task is seeded, each part from its own generator") {
  ladder::testing::check_seeded_splits(
      NumberTaskOptions{.max_digits = 9, .train = 800, .val = 100, .test = 100, .seed = 5}, make_number_task,
      [](const std::vector<TextPair>& a, const std::vector<TextPair>& b) { return a == b; },
      [](const std::vector<TextPair>& part) { return part.front().source; });
}

TEST_CASE("the number task: bad options, and lengths that run out of numbers, are refused") {
  check_error([] { make_number_task({.max_digits = 0}); }, {"make_number_task", "max_digits", "1-15, got 0"});
  check_error([] { make_number_task({.max_digits = 16}); }, {"make_number_task", "max_digits", "got 16"});
  check_error([] { make_number_task({.train = 0}); }, {"make_number_task", "asked for 0 training", "at least 1"});
  check_error([] { make_number_task({.test = -1}); }, {"make_number_task", "-1 test"});
  // Two digits make 100 numbers, about 80 of them in the training part.
  check_error([] { make_number_task({.max_digits = 2, .train = 200, .val = 1, .test = 1}); },
              {"make_number_task", "distinct training numbers of up to 2 digits, asked for 200", "more digits"});
}
