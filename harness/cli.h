// The lesson command line (on CLI11): the common flags of every lesson, the text flags of the
// language-model lessons, and each lesson's own. --help shows every flag with its default.
// Number flags are read here, not by CLI11: each has a range, and a value outside it, NaN, infinity
// or text that is not a number is refused with one short line before the lesson does any work.
// CLI11 itself is included only by cli.cpp: it is a large header, and every lesson includes this one.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace CLI {
class App;
}

namespace ladder::harness {

struct CommonFlags {
  int64_t steps = 1000;
  float lr = 1e-3f;
  int64_t batch = 32;
  uint64_t seed = 0;
  int threads = 0;    // 0: as many as cores are free; N: exactly N, at most the cores
  std::string out;    // default runs/<lesson>
  bool quick = false;  // shrink everything to run in seconds (the smoke tests use it)
  std::string resume;  // a run folder to continue from its checkpoints (harness/resume.h)
  int64_t stop_after = 0;  // stop after this many checkpoints, as an interruption would; 0: never
};

struct TextFlags {
  std::string data;   // training text
  std::string val;    // validation text; empty: a seeded 90/10 split of data
  bool lines = false;  // each line its own sequence, instead of one character stream
};

// The machine's load average over the last minute (/proc/loadavg), or -1 when it cannot be read.
double load_average();

// A float as the shortest decimal that reads back as the same float: 0.01f -> 0.01.
double shortest_decimal(float value);

// A flag's value for summary.json (floats shortest, so that 0.01 is not 0.009999999776482582).
template <class T>
nlohmann::json as_json(const T& value) {
  if constexpr (std::is_same_v<T, float>) return shortest_decimal(value);
  else return value;
}

template <class T>
concept Number = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

// The values a number flag accepts: min to max, min itself refused when `above_min` (a learning
// rate above 0), and for whole numbers only multiples of `multiple_of` when it is set (a width
// shared by 4 heads). The default is every value of the type; a float must always be finite.
template <Number T>
struct Range {
  T min = std::numeric_limits<T>::lowest();
  T max = std::numeric_limits<T>::max();
  bool above_min = false;
  T multiple_of = 0;  // whole numbers: only multiples of this (0: any)
};

// Ranges named where a flag is declared: cli.option("--hidden", hidden, "hidden units", harness::positive).
inline constexpr struct Positive {
  template <Number T>
  constexpr operator Range<T>() const {  // NOLINT: converts to the flag's own type
    if constexpr (std::is_floating_point_v<T>) return {0, std::numeric_limits<T>::max(), true};
    else return {1, std::numeric_limits<T>::max()};
  }
} positive;

inline constexpr struct NonNegative {
  template <Number T>
  constexpr operator Range<T>() const {  // NOLINT: converts to the flag's own type
    return {0, std::numeric_limits<T>::max()};
  }
} non_negative;

// How a range reads in a message or in --help.
struct RangeText {
  std::string rule;   // "a positive whole number"
  std::string exact;  // "a whole number from 1 to 9223372036854775807": said when the text overflows the type
  std::string help;   // "INT>0"
};

template <Number T>
RangeText range_text(const Range<T>& range);

// The value of a number flag's text, or an Error such as
// "--steps must be a positive whole number, got 0" or "--lr must be a positive finite number, got nan".
template <Number T>
T parse_number(const std::string& flag, const std::string& text, const Range<T>& range);

// A lesson's limit that depends on its data, checked before the run starts rather than found
// after minutes of training: fails unless `ids` (the stream `what`, "the validation text") fills
// `rows` rows of at least one window of `window` tokens and the token after it. `fix` says what to
// change: "give a smaller --block or a longer --val".
void check_windows_fit(const std::string& lesson, const std::vector<int>& ids, const std::string& what, int64_t rows,
                       int64_t window, const std::string& fix);

class LessonCli {
 public:
  // `defaults` holds this lesson's defaults for the common flags.
  LessonCli(std::string lesson, const std::string& description, CommonFlags defaults);
  ~LessonCli();

  // A lesson's own flag; its value goes into summary.json too. A number flag takes the range it
  // accepts (every finite value of its type if none is given) and is checked by parse().
  template <Number T>
  void option(const std::string& name, T& value, const std::string& help, std::type_identity_t<Range<T>> range = {}) {
    record(name, [&value] { return as_json(value); });
    add_number_option(name, help, range_text(range).help, as_json(value).dump(),
                      [&value, name, range](const std::string& text) { value = parse_number(name, text, range); });
  }
  // A text flag: a path, a name; `type` is what --help calls its value.
  void option(const std::string& name, std::string& value, const std::string& help, const std::string& type = "TEXT");
  // A text flag that must be one of `choices`.
  void choice(const std::string& name, std::string& value, const std::string& help, const std::vector<std::string>& choices);
  // Whole numbers separated by commas (--capacity-pairs 4,8,16), at least one, each within `range`.
  void option(const std::string& name, std::vector<int64_t>& value, const std::string& help, Range<int64_t> range = {});
  void flag(const std::string& name, bool& value, const std::string& help);
  // Rules between two number flags, declared beside them and checked by parse() once every flag is
  // read, before any work: `divisor` must divide `value` ("--heads 3 does not divide --embd 128:
  // <why>"), `low` must not be above `high` (below it, when `strictly`).
  void divides(const std::string& divisor_flag, const int64_t& divisor, const std::string& value_flag, const int64_t& value,
               const std::string& why);
  void at_most(const std::string& low_flag, const int64_t& low, const std::string& high_flag, const int64_t& high,
               const std::string& why, bool strictly = false);
  // --data, --val, --lines / --stream; `default_data` is the corpus used without --data.
  void text_options(TextFlags& text, const std::string& default_data, bool default_lines = false);

  // Exits 0 after printing --help; on an unknown flag, a bad value or an empty path (--load "")
  // prints why in one line and exits 2. With --resume RUN_DIR, the flags not given take the values the run started with, and
  // a flag given with another value (--threads and --stop-after aside) is refused in one line.
  // Then sets the thread count (--threads above the cores is refused; above the free cores, said
  // in one line; without --threads, fewer run while cores are busy: harness/load_policy.h) and
  // seeds the default generator.
  void parse(int argc, char** argv);

  const std::string& lesson() const { return lesson_; }
  bool given(const std::string& flag) const;  // on the command line, after parse()
  // The name the command line gave `flag` by, for messages: "--stream" for --lines given as --stream.
  std::string typed(const std::string& flag) const;
  nlohmann::json flags_json() const;  // every flag and its value, for summary.json
  // The flags as parse() left them, before a lesson shortened anything for --quick: what a resumed
  // run must be started with again (resume/flags.json).
  const nlohmann::json& flags_at_start() const { return flags_at_start_; }
  CommonFlags common;

 private:
  void record(const std::string& name, std::function<nlohmann::json()> value);
  // A number flag for CLI11: `set` reads the given text into the flag's variable (parse_number).
  void add_number_option(const std::string& name, const std::string& help, const std::string& type,
                         const std::string& default_text, std::function<void(const std::string&)> set);
  void parse_arguments(const std::vector<std::string>& args);  // CLI11's parse, and its errors in one line
  // --resume RUN_DIR: the flags the run recorded, where the command line gives none; refuses changed ones.
  void adopt_resumed_flags(const std::vector<std::string>& args, const nlohmann::json& defaults);
  void resume_from(const std::string& given_out);
  nlohmann::json flags_at_start_;
  std::vector<std::string> args_;  // the command line, as given
  std::string lesson_;
  std::unique_ptr<CLI::App> app_;
  std::vector<std::pair<std::string, std::function<nlohmann::json()>>> recorded_;
  std::vector<std::function<void()>> rules_;  // divides, at_most: each throws when broken
};

// The names a flag that picks several of `choices` gave, in its order: `given` is "all" (every
// choice) or names separated by commas, each one of the choices and none named twice. Anything else
// fails naming `lesson`, the flag and the choices; a name that is none of them is "not a <noun>",
// 'all' among other names "cannot be combined".
std::vector<std::string> chosen_names(const std::string& lesson, const std::string& flag, const std::string& given,
                                      const std::vector<std::string>& choices, const std::string& noun);

}  // namespace ladder::harness
