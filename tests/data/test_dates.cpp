// The generated date translation task: formats, weekdays, the count of distinct sources, the split.
#include "helpers.h"
#include "pair_sets.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "data/dates.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_error;
using ladder::testing::shared;
using ladder::testing::sources_of;

namespace {

// Zeller's congruence, written independently of the library's calendar: 0 = Monday ... 6 = Sunday.
int zeller_weekday(int year, int month, int day) {
  if (month < 3) {  // January and February count as months 13 and 14 of the year before
    month += 12;
    year -= 1;
  }
  const int K = year % 100, J = year / 100;
  const int h = (day + 13 * (month + 1) / 5 + K + K / 4 + J / 4 + 5 * J) % 7;  // 0 = Saturday
  return (h + 5) % 7;
}

int days_in_month(int year, int month) {
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return days[month - 1];
}

Date parse_iso(const std::string& iso) {
  REQUIRE(iso.size() == 10);
  REQUIRE(iso[4] == '-');
  REQUIRE(iso[7] == '-');
  return {std::stoi(iso.substr(0, 4)), std::stoi(iso.substr(5, 2)), std::stoi(iso.substr(8, 2))};
}

std::vector<std::string> lower_words(const std::string& text) {
  std::string cleaned;
  for (const char c : text) cleaned += c == ',' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::istringstream in(cleaned);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The day of the week a source names, -1 when it names none.
int named_weekday(const std::string& source) {
  const char* names[] = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"};
  for (const std::string& word : lower_words(source))
    for (int d = 0; d < 7; ++d)
      if (word == names[d] || word == std::string(names[d]).substr(0, 3)) return d;
  return -1;
}

const int64_t F = static_cast<int64_t>(date_formats().size());

}  // namespace

TEST_CASE("dates: weekdays from the calendar agree with Zeller's congruence on every day of 1950-2049") {
  CHECK(weekday({1998, 3, 3}) == 1);   // a Tuesday
  CHECK(weekday({2000, 1, 1}) == 5);   // a Saturday
  CHECK(weekday({1969, 7, 20}) == 6);  // a Sunday
  CHECK(weekday({2000, 2, 29}) == 1);  // a Tuesday
  int64_t days = 0;
  for (int year = 1950; year <= 2049; ++year)
    for (int month = 1; month <= 12; ++month)
      for (int day = 1; day <= days_in_month(year, month); ++day, ++days)
        REQUIRE(weekday({year, month, day}) == zeller_weekday(year, month, day));
  CHECK(days == 36525);  // 100 years, 25 of them leap years (2000 is one)
  CHECK(iso_date({1998, 3, 3}) == "1998-03-03");
  CHECK(iso_date({33, 12, 31}) == "0033-12-31");
  check_error([] { iso_date({1999, 2, 29}); }, {"date", "no day 29 in month 2 of 1999"});
  check_error([] { weekday({1999, 13, 1}); }, {"date", "month 13"});
}

TEST_CASE("dates: the formats write what people write") {
  CHECK(F >= 15);
  CHECK(F <= 25);
  const std::vector<std::string> expected = {
      "Tuesday, March 3, 1998", "March 3, 1998",   "March 3rd, 1998",  "MARCH 3, 1998",
      "Mar. 3, 1998",           "Mar 3 1998",      "tue, mar 3, '98",  "3 March 1998",
      "03 Mar 1998",            "3 mar 98",        "3-Mar-1998",       "3rd March 1998",
      "the 3rd of March 1998",  "Tuesday the 3rd of March, 1998",      "Tuesday 3 March 1998",
      "Tue 3 Mar 1998",         "Tue, 03 Mar 1998", "03.03.1998",      "3.3.98",
      "3/3/1998",               "03/03/98",        "1998/3/3",         "19980303"};
  REQUIRE(static_cast<int64_t>(expected.size()) == F);
  for (int64_t f = 0; f < F; ++f) CHECK(write_date({1998, 3, 3}, date_formats()[static_cast<size_t>(f)]) == expected[static_cast<size_t>(f)]);
  // Slashes with the year last are month first; dots are day first: 4 March 1998.
  CHECK(write_date({1998, 3, 4}, "{m}/{d}/{yyyy} {d}.{m}.{yy} {yyyy}/{m}/{d}") == "3/4/1998 4.3.98 1998/3/4");
  std::string ordinals;
  for (const int day : {1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 24, 30, 31}) ordinals += write_date({1998, 1, day}, "{dth} ");
  CHECK(ordinals == "1st 2nd 3rd 4th 11th 12th 13th 21st 22nd 23rd 24th 30th 31st ");
  CHECK(write_date({2049, 9, 5}, "{Wkd} {wkd} {Mon} {mon} {MONTH} '{yy}") == "Sun sun Sep sep SEPTEMBER '49");
  CHECK(write_date({2000, 1, 1}, "{yy}") == "00");
  check_error([] { write_date({1998, 3, 3}, "{day}"); }, {"write_date", "unknown field {day}", "{dth}"});
  check_error([] { write_date({1998, 3, 3}, "{d"); }, {"write_date", "\"{d\"", "{ without its }"});
  check_error([] { write_date({1998, 2, 30}, "{d}"); }, {"date", "no day 30 in month 2 of 1998"});
}

TEST_CASE("dates: every source means one date, and the count of distinct sources is exact") {
  // Over four years, every source string maps to a single date.
  std::map<std::string, std::string> meaning;
  for (int year = 1998; year <= 2001; ++year)
    for (int month = 1; month <= 12; ++month)
      for (int day = 1; day <= days_in_month(year, month); ++day)
        for (const std::string& pattern : date_formats()) {
          const auto [it, added] = meaning.emplace(write_date({year, month, day}, pattern), iso_date({year, month, day}));
          CHECK_MESSAGE(it->second == iso_date({year, month, day}), "\"", it->first, "\" means ", it->second, " and ",
                        iso_date({year, month, day}));
        }
  // Two formats write the same string on one kind of day: "13 May 1998" is both "{d} {Month} {yyyy}"
  // and "{dd} {Mon} {yyyy}" (May is its own abbreviation), for the 22 days May 10-31. Nothing else repeats.
  CHECK(static_cast<int64_t>(meaning.size()) == (365 * 3 + 366) * F - 4 * 22);
  const DateSourceCounts one_year = count_date_sources({.first_year = 1998, .last_year = 1998});
  CHECK(one_year.total == 365 * F - 22);
  CHECK(one_year.train + one_year.val + one_year.test == one_year.total);
  CHECK(count_date_sources({.first_year = 2000, .last_year = 2000}).total == 366 * F - 22);
  // The parts are about 80/10/10.
  CHECK(one_year.test > one_year.total / 20);
  CHECK(one_year.test < one_year.total * 3 / 20);
  CHECK(one_year.val > one_year.total / 20);
  CHECK(one_year.val < one_year.total * 3 / 20);
}

TEST_CASE("dates: the task is seeded, weekdays are right, and no source is in two parts") {
  const DateTaskOptions options{.first_year = 1998, .last_year = 1999, .train = 4000, .val = 500, .test = 500, .seed = 3};
  const PairSplits task = make_date_task(options);
  REQUIRE(task.train.size() == 4000);
  REQUIRE(task.val.size() == 500);
  REQUIRE(task.test.size() == 500);
  CHECK(task.description == "dates 1998-1999 in 23 formats (seed 3)");
  CHECK(make_date_task(options).train == task.train);
  DateTaskOptions other = options;
  other.seed = 4;
  CHECK(make_date_task(other).train != task.train);

  const auto train = sources_of(task.train), val = sources_of(task.val), test = sources_of(task.test);
  CHECK(train.size() == task.train.size());  // no source twice within a part either
  CHECK(test.size() == task.test.size());
  CHECK(shared(train, test) == 0);
  CHECK(shared(train, val) == 0);
  CHECK(shared(val, test) == 0);

  // The same date in another format may be in both: most test dates were seen in training.
  std::set<std::string> train_dates;
  for (const TextPair& pair : task.train) train_dates.insert(pair.target);
  int64_t seen_dates = 0, weekdays_named = 0;
  for (const std::vector<TextPair>* part : {&task.train, &task.val, &task.test})
    for (const TextPair& pair : *part) {
      const Date date = parse_iso(pair.target);
      REQUIRE(date.year >= 1998);
      REQUIRE(date.year <= 1999);
      REQUIRE(date.day <= days_in_month(date.year, date.month));
      if (const int named = named_weekday(pair.source); named >= 0) {
        ++weekdays_named;
        CHECK_MESSAGE(named == zeller_weekday(date.year, date.month, date.day), pair.source, " -> ", pair.target);
      }
    }
  for (const TextPair& pair : task.test) seen_dates += train_dates.count(pair.target);
  CHECK(seen_dates > 0);
  CHECK(weekdays_named > 500);  // 6 of the 23 formats name the day
  MESSAGE(seen_dates, " of 500 test dates also appear in training, written another way");
}

TEST_CASE("dates: a part gives exactly as many pairs as it has distinct sources") {
  const DateSourceCounts counts = count_date_sources({.first_year = 2001, .last_year = 2001});
  const DateTaskOptions all_test{.first_year = 2001, .last_year = 2001, .train = 1, .val = 0, .test = counts.test};
  CHECK(static_cast<int64_t>(make_date_task(all_test).test.size()) == counts.test);
  DateTaskOptions one_more = all_test;
  one_more.test += 1;
  check_error([&] { make_date_task(one_more); },
              {"make_date_task", cat("asked for ", counts.test + 1, " test pairs"),
               cat("have only ", counts.test, " distinct test sources"), "ask for fewer pairs or give more years"});
  DateTaskOptions too_many_train = all_test;
  too_many_train.train = counts.train + 1;
  check_error([&] { make_date_task(too_many_train); }, {cat("only ", counts.train, " distinct training sources")});
}

TEST_CASE("dates: filler words lengthen the sources around the unchanged date") {
  // No filler word can be read as part of a date.
  std::set<std::string> date_words = {"the", "of", "st", "nd", "rd", "th"};
  for (int month = 1; month <= 12; ++month)
    for (const std::string& w : lower_words(write_date({2001, month, 1}, "{Month} {mon} {Weekday} {wkd}")))
      date_words.insert(w);
  for (int day = 1; day <= 7; ++day)
    for (const std::string& w : lower_words(write_date({2001, 1, day}, "{Weekday} {wkd}"))) date_words.insert(w);
  CHECK(date_words.size() == 6 + 23 + 14);  // "may" is a month and its abbreviation
  const std::set<std::string> fillers(filler_words().begin(), filler_words().end());
  CHECK(fillers.size() == filler_words().size());
  for (const std::string& w : filler_words()) {
    CHECK_MESSAGE(date_words.count(w) == 0, w);
    CHECK_MESSAGE(std::none_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }), w);
  }

  const DateTaskOptions plain{.first_year = 1998, .last_year = 1999, .train = 300, .val = 50, .test = 50, .seed = 1};
  DateTaskOptions padded = plain;
  padded.pad_words = 12;
  const PairSplits a = make_date_task(plain), b = make_date_task(padded);
  CHECK(b.description == "dates 1998-1999 in 23 formats (seed 1, up to 12 filler words)");
  // The padding leaves the draw alone: inside each padded source is the plain task's source, found
  // by taking the filler words off both ends, somewhere among up to twelve words.
  int64_t at_start = 0, at_end = 0;
  std::set<size_t> counts;
  std::set<std::string> inner[3];
  const std::vector<TextPair>* plain_parts[3] = {&a.train, &a.val, &a.test};
  const std::vector<TextPair>* padded_parts[3] = {&b.train, &b.val, &b.test};
  for (size_t p = 0; p < 3; ++p) {
    REQUIRE(plain_parts[p]->size() == padded_parts[p]->size());
    for (size_t i = 0; i < padded_parts[p]->size(); ++i) {
      const TextPair& pair = (*padded_parts[p])[i];
      std::vector<std::string> words;
      std::istringstream in(pair.source);
      for (std::string w; in >> w;) words.push_back(w);
      size_t first = 0, last = words.size();
      while (first < last && fillers.count(words[first])) ++first;
      while (last > first && fillers.count(words[last - 1])) --last;
      const size_t fillers_here = first + (words.size() - last);
      REQUIRE(fillers_here <= 12);
      counts.insert(fillers_here);
      at_start += first == 0;
      at_end += last == words.size();
      std::string date = words[first];
      for (size_t w = first + 1; w < last; ++w) date += " " + words[w];
      CHECK(date == (*plain_parts[p])[i].source);
      CHECK(pair.target == (*plain_parts[p])[i].target);
      CHECK(pair.source.size() >= date.size() + 2 * fillers_here);  // each filler word adds a letter and a space at least
      inner[p].insert(date);
    }
  }
  CHECK(shared(inner[0], inner[2]) == 0);
  CHECK(shared(inner[0], inner[1]) == 0);
  CHECK(shared(inner[1], inner[2]) == 0);
  CHECK(at_start > 0);
  CHECK(at_end > 0);
  CHECK(at_start + at_end < 400);  // and mostly in between
  CHECK(counts.size() == 13);       // every count from 0 to 12 drawn
}

TEST_CASE("dates: bad options are refused with a message") {
  check_error([] { make_date_task({.first_year = 1900, .last_year = 2049}); },
              {"make_date_task", "1900-2049 span 150 years", "at most 100", "two-digit year"});
  check_error([] { make_date_task({.first_year = 2000, .last_year = 1999}); }, {"make_date_task", "run forwards", "2000-1999"});
  check_error([] { count_date_sources({.first_year = 9990, .last_year = 10010}); }, {"count_date_sources", "1-9999"});
  check_error([] { make_date_task({.train = 0}); }, {"make_date_task", "asked for 0 training", "at least 1"});
  check_error([] { make_date_task({.pad_words = 501}); }, {"make_date_task", "pad_words", "0-500, got 501"});
}
