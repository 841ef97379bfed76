#include "data/dates.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <unordered_set>

#include "core/error.h"
#include "core/random.h"

namespace ladder::data {

namespace {

namespace chrono = std::chrono;

const char* const kMonths[12] = {"January", "February", "March",     "April",   "May",      "June",
                                 "July",    "August",   "September", "October", "November", "December"};
const char* const kWeekdays[7] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

constexpr int64_t kMaxPadWords = 500;

chrono::year_month_day calendar_day(const Date& date) {
  const chrono::year_month_day ymd{chrono::year{date.year}, chrono::month{static_cast<unsigned>(date.month)},
                                   chrono::day{static_cast<unsigned>(date.day)}};
  if (!ymd.ok()) fail("date", "there is no day ", date.day, " in month ", date.month, " of ", date.year);
  return ymd;
}

std::string zero_padded(int value, int width) {
  char text[16];
  std::snprintf(text, sizeof text, "%0*d", width, value);
  return text;
}

// 1st 2nd 3rd 4th ... 11th 12th 13th ... 21st 22nd 23rd ... 31st
std::string ordinal(int n) {
  const bool teen = n % 100 >= 11 && n % 100 <= 13;
  const char* suffix = teen ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

std::string with_case(std::string text, bool upper) {
  for (char& c : text) c = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// One field of a pattern ("Month", "dth", ...) for a date.
std::string date_field(const Date& date, const std::string& name, const std::string& pattern) {
  const std::string month = kMonths[date.month - 1];
  const auto day_name = [&date] { return std::string(kWeekdays[weekday(date)]); };  // only when asked: it costs
  if (name == "d") return std::to_string(date.day);
  if (name == "dd") return zero_padded(date.day, 2);
  if (name == "dth") return ordinal(date.day);
  if (name == "m") return std::to_string(date.month);
  if (name == "mm") return zero_padded(date.month, 2);
  if (name == "Month") return month;
  if (name == "MONTH") return with_case(month, true);
  if (name == "Mon") return month.substr(0, 3);
  if (name == "mon") return with_case(month.substr(0, 3), false);
  if (name == "Weekday") return day_name();
  if (name == "Wkd") return day_name().substr(0, 3);
  if (name == "wkd") return with_case(day_name().substr(0, 3), false);
  if (name == "yyyy") return zero_padded(date.year, 4);
  if (name == "yy") return zero_padded(date.year % 100, 2);
  fail("write_date", "unknown field {", name, "} in the pattern \"", pattern,
       "\"; the fields are {d} {dd} {dth} {m} {mm} {Month} {MONTH} {Mon} {mon} {Weekday} {Wkd} {wkd} {yyyy} {yy}");
}

void check_options(const char* op, const DateTaskOptions& options) {
  if (options.first_year < 1 || options.last_year > 9999 || options.first_year > options.last_year)
    fail(op, "the years must run forwards within 1-9999 (ISO dates have four digits), got ",
         options.first_year, "-", options.last_year);
  if (options.last_year - options.first_year >= 100)
    fail(op, "the years ", options.first_year, "-", options.last_year, " span ",
         options.last_year - options.first_year + 1, " years; at most 100, or a two-digit year such as \"98\" ",
         "would name two years");
  if (options.train < 1 || options.val < 0 || options.test < 0)
    fail(op, "asked for ", options.train, " training, ", options.val, " validation and ", options.test,
         " test pairs; training needs at least 1, the others at least 0");
  if (options.pad_words < 0 || options.pad_words > kMaxPadWords)
    fail(op, "pad_words must be within 0-", kMaxPadWords, ", got ", options.pad_words);
}

// Every day of the years, in order.
std::vector<Date> days_of(int first_year, int last_year) {
  std::vector<Date> days;
  const chrono::sys_days last{chrono::year{last_year} / 12 / 31};
  for (chrono::sys_days day{chrono::year{first_year} / 1 / 1}; day <= last; day += chrono::days{1}) {
    const chrono::year_month_day ymd{day};
    days.push_back({static_cast<int>(ymd.year()), static_cast<int>(static_cast<unsigned>(ymd.month())),
                    static_cast<int>(static_cast<unsigned>(ymd.day()))});
  }
  return days;
}

// The part of a source, as an index of the arrays below.
size_t part_of(const std::string& source, uint64_t seed) { return static_cast<size_t>(generated_part(source, seed)); }

// The source at a random place among 0 to max_words filler words.
std::string with_filler(const std::string& source, int64_t max_words, Generator& gen) {
  const std::vector<std::string>& words = filler_words();
  const int64_t n = gen.randint(0, max_words + 1);
  std::vector<std::string> pieces;
  for (int64_t i = 0; i < n; ++i) pieces.push_back(words[static_cast<size_t>(gen.randint(0, static_cast<int64_t>(words.size())))]);
  pieces.insert(pieces.begin() + gen.randint(0, n + 1), source);
  std::string sentence = pieces[0];
  for (size_t i = 1; i < pieces.size(); ++i) sentence += " " + pieces[i];
  return sentence;
}

}  // namespace

std::string iso_date(const Date& date) {
  calendar_day(date);  // refuses a day that does not exist
  return zero_padded(date.year, 4) + "-" + zero_padded(date.month, 2) + "-" + zero_padded(date.day, 2);
}

int weekday(const Date& date) {
  return static_cast<int>(chrono::weekday{chrono::sys_days{calendar_day(date)}}.iso_encoding()) - 1;  // ISO: Monday 1
}

const std::vector<std::string>& date_formats() {
  static const std::vector<std::string> formats = {
      "{Weekday}, {Month} {d}, {yyyy}",  // Tuesday, March 3, 1998
      "{Month} {d}, {yyyy}",             // March 3, 1998
      "{Month} {dth}, {yyyy}",           // March 3rd, 1998
      "{MONTH} {d}, {yyyy}",             // MARCH 3, 1998
      "{Mon}. {d}, {yyyy}",              // Mar. 3, 1998
      "{Mon} {d} {yyyy}",                // Mar 3 1998
      "{wkd}, {mon} {d}, '{yy}",         // tue, mar 3, '98
      "{d} {Month} {yyyy}",              // 3 March 1998
      "{dd} {Mon} {yyyy}",               // 03 Mar 1998
      "{d} {mon} {yy}",                  // 3 mar 98
      "{d}-{Mon}-{yyyy}",                // 3-Mar-1998
      "{dth} {Month} {yyyy}",            // 3rd March 1998
      "the {dth} of {Month} {yyyy}",     // the 3rd of March 1998
      "{Weekday} the {dth} of {Month}, {yyyy}",  // Tuesday the 3rd of March, 1998
      "{Weekday} {d} {Month} {yyyy}",    // Tuesday 3 March 1998
      "{Wkd} {d} {Mon} {yyyy}",          // Tue 3 Mar 1998
      "{Wkd}, {dd} {Mon} {yyyy}",        // Tue, 03 Mar 1998
      "{dd}.{mm}.{yyyy}",                // 03.03.1998
      "{d}.{m}.{yy}",                    // 3.3.98
      "{m}/{d}/{yyyy}",                  // 3/3/1998
      "{mm}/{dd}/{yy}",                  // 03/03/98
      "{yyyy}/{m}/{d}",                  // 1998/3/3
      "{yyyy}{mm}{dd}",                  // 19980303
  };
  return formats;
}

std::string write_date(const Date& date, const std::string& pattern) {
  calendar_day(date);  // refuses a day that does not exist
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    const size_t close = pattern.find('}', i);
    if (close == std::string::npos) fail("write_date", "the pattern \"", pattern, "\" has a { without its }");
    out += date_field(date, pattern.substr(i + 1, close - i - 1), pattern);
    i = close;
  }
  return out;
}

const std::vector<std::string>& filler_words() {
  static const std::vector<std::string> words = {
      "please", "note",   "that",    "our",     "meeting", "moved",    "to",       "as",      "agreed", "we",
      "will",   "meet",   "on",      "see",     "you",     "then",     "call",     "me",      "before", "after",
      "lunch",  "thanks", "kind",    "regards", "team",    "office",   "party",    "starts",  "around", "noon",
      "bring",  "your",   "notes",   "again",   "remember", "deadline", "is",      "set",     "for",    "project",
      "review", "plan",   "trip",    "back",    "home",    "by",       "and",      "a",       "new",    "date"};
  return words;
}

DateSourceCounts count_date_sources(const DateTaskOptions& options) {
  check_options("count_date_sources", options);
  std::vector<std::string> sources[3];
  for (const Date& date : days_of(options.first_year, options.last_year))
    for (const std::string& pattern : date_formats()) {
      std::string source = write_date(date, pattern);
      sources[part_of(source, options.seed)].push_back(std::move(source));
    }
  const auto distinct = [&](PairPart part) {
    std::vector<std::string>& all = sources[static_cast<size_t>(part)];
    std::sort(all.begin(), all.end());
    return static_cast<int64_t>(std::unique(all.begin(), all.end()) - all.begin());
  };
  const int64_t train = distinct(PairPart::train), val = distinct(PairPart::val), test = distinct(PairPart::test);
  return {train + val + test, train, val, test};
}

PairSplits make_date_task(const DateTaskOptions& options) {
  check_options("make_date_task", options);
  const std::vector<Date> days = days_of(options.first_year, options.last_year);
  const std::vector<std::string>& formats = date_formats();
  const size_t F = formats.size();
  std::vector<uint32_t> candidates[3];  // day * F + format, for every source, by part
  for (size_t d = 0; d < days.size(); ++d)
    for (size_t f = 0; f < F; ++f)
      candidates[part_of(write_date(days[d], formats[f]), options.seed)].push_back(static_cast<uint32_t>(d * F + f));

  PairSplits out;
  out.description = cat("dates ", options.first_year, "-", options.last_year, " in ", F, " formats (seed ", options.seed,
                        options.pad_words > 0 ? cat(", up to ", options.pad_words, " filler words") : "", ")");
  Generator gen(options.seed);
  Generator filler = gen.child();  // its own sequence: padding does not change which sources are drawn
  for (const auto& [part, name, wanted, pairs] : parts_to_fill(out, options.train, options.val, options.test)) {
    std::vector<uint32_t>& mine = candidates[static_cast<size_t>(part)];
    shuffle(mine, gen);
    std::unordered_set<std::string> seen;
    for (const uint32_t index : mine) {
      if (static_cast<int64_t>(pairs.size()) == wanted) break;
      const Date& date = days[index / F];
      const std::string source = write_date(date, formats[index % F]);
      if (!seen.insert(source).second) continue;  // another format wrote this string already
      pairs.push_back({options.pad_words > 0 ? with_filler(source, options.pad_words, filler) : source, iso_date(date)});
    }
    if (static_cast<int64_t>(pairs.size()) < wanted)
      fail("make_date_task", "asked for ", wanted, " ", name, " pairs, but the years ", options.first_year, "-",
           options.last_year, " in ", F, " formats have only ", seen.size(), " distinct ", name,
           " sources; ask for fewer pairs or give more years");
  }
  return out;
}

}  // namespace ladder::data
