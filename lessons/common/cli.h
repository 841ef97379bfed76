// The lesson command line (on CLI11): the common flags of every lesson, the text flags of the
// language-model lessons, and each lesson's own. --help shows every flag with its default.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace ladder::lessons {

struct CommonFlags {
  int64_t steps = 1000;
  float lr = 1e-3f;
  int64_t batch = 32;
  uint64_t seed = 0;
  int threads = 0;    // 0: all cores
  std::string out;    // default runs/<lesson>
  bool quick = false;  // shrink everything to run in seconds (the smoke tests use it)
};

struct TextFlags {
  std::string data;   // training text
  std::string val;    // validation text; empty: a seeded 90/10 split of data
  bool lines = false;  // each line its own sequence, instead of one character stream
};

// A float as the shortest decimal that reads back as the same float: 0.01f -> 0.01.
double shortest_decimal(float value);

// A flag's value for summary.json (floats shortest, so that 0.01 is not 0.009999999776482582).
template <class T>
nlohmann::json as_json(const T& value) {
  if constexpr (std::is_same_v<T, float>) return shortest_decimal(value);
  else return value;
}

class LessonCli {
 public:
  // `defaults` holds this lesson's defaults for the common flags.
  LessonCli(std::string lesson, const std::string& description, CommonFlags defaults);

  // A lesson's own flag; its value goes into summary.json too.
  template <class T>
  CLI::Option* option(const std::string& name, T& value, const std::string& help) {
    record(name, [&value] { return as_json(value); });
    return app_.add_option(name, value, help)->capture_default_str();
  }
  CLI::Option* flag(const std::string& name, bool& value, const std::string& help);
  // --data, --val, --lines / --stream; `default_data` is the corpus used without --data.
  void text_options(TextFlags& text, const std::string& default_data, bool default_lines = false);

  // Exits 0 after printing --help; on an unknown flag or a bad value prints why and exits 2.
  // Then sets the thread count and seeds the default generator.
  void parse(int argc, char** argv);

  const std::string& lesson() const { return lesson_; }
  nlohmann::json flags_json() const;  // every flag and its value, for summary.json
  CommonFlags common;

 private:
  void record(const std::string& name, std::function<nlohmann::json()> value);
  std::string lesson_;
  CLI::App app_;
  std::vector<std::pair<std::string, std::function<nlohmann::json()>>> recorded_;
};

}  // namespace ladder::lessons
