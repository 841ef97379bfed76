// The date translation task of lessons 07, 09 and 10, generated and seeded: a date as people write it
// becomes the same date in ISO form, character by character.
//   "Tuesday, March 3, 1998" -> "1998-03-03"      "3 mar 98" -> "1998-03-03"      "19980303" -> "1998-03-03"
// With pad_words N the date sits inside a sentence of up to N filler words, so that sources get long:
//   "please note that our meeting moved to 3 mar 98 as agreed" -> "1998-03-03"
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/pairs.h"

namespace ladder::data {

struct Date {
  int year, month, day;  // month 1-12, day 1-31
};

// "1998-03-03": the target side.
std::string iso_date(const Date& date);
// The day of the week, computed from the (proleptic Gregorian) calendar: 0 = Monday ... 6 = Sunday.
int weekday(const Date& date);

// The ways of writing a date, as patterns whose fields are, for Tuesday 3 March 1998:
//   {d} 3   {dd} 03   {dth} 3rd   {m} 3   {mm} 03   {Month} March   {MONTH} MARCH   {Mon} Mar   {mon} mar
//   {Weekday} Tuesday   {Wkd} Tue   {wkd} tue   {yyyy} 1998   {yy} 98
// Numbers with slashes are month first when the year is last ("3/4/1998" is March 4th, as in the US),
// with dots day first ("4.3.1998" is March 4th, as in Europe), so that no source means two dates.
const std::vector<std::string>& date_formats();
// The date written by a pattern. Throws ladder::Error for an unknown field or a day that does not exist.
std::string write_date(const Date& date, const std::string& pattern);

// The words that pad_words puts around a date: none is a number, a month, a day or a word of a format.
const std::vector<std::string>& filler_words();

struct DateTaskOptions {
  int first_year = 1950, last_year = 2049;  // every day of these years; at most 100 years, so that a
                                            // two-digit year names one year ("98" is 1998, "03" 2003)
  int64_t train = 20000, val = 1000, test = 1000;  // pairs in each part, each source once
  int64_t pad_words = 0;  // at most this many filler words around each date, the count drawn for each
                          // pair from 0 to pad_words, so that source lengths spread (0: the date alone)
  uint64_t seed = 0;      // which sources fall in which part, which are drawn, the filler words
};

// How many distinct sources (dates as written, without filler) the years and formats make, and how
// many of them fall in each part. A string that two formats both make counts once: "13 May 1998" is
// "{d} {Month} {yyyy}" and "{dd} {Mon} {yyyy}".
struct DateSourceCounts {
  int64_t total = 0, train = 0, val = 0, test = 0;
};
DateSourceCounts count_date_sources(const DateTaskOptions& options);

// The pairs (source, ISO target) of each part, drawn at random without repeating a source. Every
// distinct source (before the filler) belongs to one part, decided by a seeded hash of the string:
// about 80% train, 10% validation, 10% test. So the exact same source is never in two parts, while
// the same date written in another format may be. Throws ladder::Error for a bad year range, and when
// a part is asked for more pairs than it has sources (count_date_sources says how many it has).
PairSplits make_date_task(const DateTaskOptions& options);

}  // namespace ladder::data
