#include "harness/cli.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "core/kernels/parallel.h"
#include "core/random.h"
#include "data/visible_text.h"
#include "harness/load_policy.h"
#include "harness/resume.h"

namespace ladder::harness {

double shortest_decimal(float value) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  return std::strtod(std::string(buf, end).c_str(), nullptr);
}

double load_average() {
  FILE* file = std::fopen("/proc/loadavg", "r");
  if (!file) return -1;
  double load = -1;
  if (std::fscanf(file, "%lf", &load) != 1) load = -1;
  std::fclose(file);
  return load;
}

namespace {

// --threads N: refused above the machine's cores (threads beyond them only wait for one another,
// many times slower); above the cores other programs leave free, a line says so.
void check_threads(const std::string& lesson, int threads) {
  const int cores = omp_get_num_procs();
  if (threads > cores)
    fail(lesson.c_str(), "--threads ", threads, " is more than the ", cores, " cores of this machine, and threads beyond them only ",
         "wait for one another; give --threads ", cores, " or fewer, or leave it out to use the cores that are free");
  const double load = load_average();
  const double free_cores = load < 0 ? cores : std::max(0.0, cores - load);
  if (threads > 1 && free_cores < threads)
    std::printf("(--threads %d, but other programs keep the machine busy (load average %.2f on %d cores): pinned threads wait for "
                "busy cores, so this run may be much slower; leave --threads out to use only the free ones)\n",
                threads, load, cores);
}

// The flags that name a file or a folder: given empty, they would silently mean "not given".
const char* const kPathFlags[] = {"--data", "--val", "--load", "--compare", "--phrasebook", "--out", "--resume"};

template <Number T>
std::string number_text(T value) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, value).ptr);
}

// What --help's usage line starts with: a lesson runs as ./ladder lesson NN, a program of one's own
// (./ladder new) by its name.
std::string usage_name(const std::string& lesson) {
  const bool numbered = lesson.size() > 2 && std::isdigit(static_cast<unsigned char>(lesson[0])) &&
                        std::isdigit(static_cast<unsigned char>(lesson[1])) && lesson[2] == '_';
  return numbered ? "./ladder lesson " + lesson.substr(0, 2) : lesson;
}

// "--steps must be a positive whole number, got 0 (not a number)"
[[noreturn]] void refuse(const std::string& flag, const std::string& text, const std::string& rule, const char* why = "") {
  throw Error(cat(flag, " must be ", rule, ", got ", text.empty() ? "nothing" : data::visible(text), why));
}

}  // namespace

template <Number T>
RangeText range_text(const Range<T>& range) {
  constexpr bool whole = std::is_integral_v<T>;
  const std::string kind = whole ? "whole number" : "finite number", type = whole ? "INT" : "FLOAT";
  const std::string from = number_text(range.min), to = number_text(range.max);
  const std::string exact = cat("a ", whole ? "whole number" : "number", " from ", from, range.above_min ? " (excluded)" : "",
                                " to ", to);
  const bool open_top = range.max == std::numeric_limits<T>::max();
  if (range.multiple_of != 0) {
    const std::string multiple = cat("a multiple of ", number_text(range.multiple_of), " from ", from, " to ", to);
    return {multiple, multiple, cat(type, " in [", from, ", ", to, "], a multiple of ", number_text(range.multiple_of))};
  }
  if (open_top && range.min == std::numeric_limits<T>::lowest()) return {"a " + kind, exact, type};
  if (open_top && ((range.min == 0 && range.above_min) || (whole && range.min == 1)))
    return {"a positive " + kind, exact, type + ">0"};
  if (open_top && range.min == 0) return {"a " + kind + " >= 0", exact, type + ">=0"};
  return {exact, exact, cat(type, " in ", range.above_min ? "(" : "[", from, ", ", to, "]")};
}

template <Number T>
T parse_number(const std::string& flag, const std::string& text, const Range<T>& range) {
  const RangeText rule = range_text(range);
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  // from_chars takes no minus sign for an unsigned type: "-1" is a number, out of its range.
  const bool negative_unsigned = std::is_unsigned_v<T> && !text.empty() && text[0] == '-';
  if (error == std::errc::result_out_of_range || negative_unsigned)
    refuse(flag, text, rule.exact, std::is_integral_v<T> ? "" : " (too large or too small to store)");
  if (error != std::errc() || stop != end) {
    T whole_part{};
    const bool fraction = std::is_integral_v<T> && std::from_chars(text.data(), end, whole_part).ptr != text.data();
    refuse(flag, text, rule.rule, fraction ? " (not a whole number)" : " (not a number)");
  }
  if constexpr (std::is_floating_point_v<T>)
    if (!std::isfinite(value)) refuse(flag, text, rule.rule);
  if (value < range.min || value > range.max || (range.above_min && value == range.min)) refuse(flag, text, rule.rule);
  if constexpr (std::is_integral_v<T>)
    if (range.multiple_of != 0 && value % range.multiple_of != 0) refuse(flag, text, rule.rule);
  return value;
}

// The number types flags come in.
#define LADDER_NUMBER_FLAG(T)                                     \
  template RangeText range_text<T>(const Range<T>&);              \
  template T parse_number<T>(const std::string&, const std::string&, const Range<T>&);
LADDER_NUMBER_FLAG(int)
LADDER_NUMBER_FLAG(long)
LADDER_NUMBER_FLAG(long long)
LADDER_NUMBER_FLAG(unsigned)
LADDER_NUMBER_FLAG(unsigned long)
LADDER_NUMBER_FLAG(unsigned long long)
LADDER_NUMBER_FLAG(float)
LADDER_NUMBER_FLAG(double)
#undef LADDER_NUMBER_FLAG

void check_windows_fit(const std::string& lesson, const std::vector<int>& ids, const std::string& what, int64_t rows,
                       int64_t window, const std::string& fix) {
  const auto tokens = static_cast<int64_t>(ids.size());
  if (tokens / rows < window + 1)
    fail(lesson.c_str(), what, " has ", tokens, " tokens, too few for ", rows == 1 ? "" : cat(rows, " rows of "), "a window of ",
         window, " and the token after it; ", fix);
}

LessonCli::LessonCli(std::string lesson, const std::string& description, CommonFlags defaults)
    : common(std::move(defaults)), lesson_(std::move(lesson)), app_(std::make_unique<CLI::App>(description, usage_name(lesson_))) {
  if (common.out.empty()) common.out = "runs/" + lesson_;
  app_->footer("Exit status: 0 when the run ends, 2 when an input is refused or fails, 3 when training diverges.");
  app_->set_help_flag("-h,--help", "print every flag with its default and what it accepts, then exit");
  option("--steps", common.steps, "training steps", positive);
  option("--lr", common.lr, "learning rate", positive);
  option("--batch", common.batch, "batch size", {1, 1 << 20});
  option("--seed", common.seed, "random seed: the same seed and thread count give the same run");
  option("--threads", common.threads, "threads for loops and BLAS (0: as many as cores are free; N: exactly N)",
         {0, 1024});
  option("--out", common.out, "folder for metrics.csv, plots, samples, checkpoint and summary.json");
  flag("--quick", common.quick, "shrink everything so that the lesson runs in a few seconds");
  option("--resume", common.resume,
         "continue the run in this folder from its last checkpoint, with the flags it started with (see README: stop and resume)");
  option("--stop-after", common.stop_after, "stop after this many checkpoints (one per evaluation), as an interruption would; 0: never",
         non_negative);
}

LessonCli::~LessonCli() = default;

void LessonCli::add_number_option(const std::string& name, const std::string& help, const std::string& type,
                                  const std::string& default_text, std::function<void(const std::string&)> set) {
  app_->add_option(
          name,
          [set = std::move(set)](const CLI::results_t& results) {
            set(results.back());
            return true;
          },
          help)
      ->type_name(type)
      ->default_str(default_text);
}

void LessonCli::option(const std::string& name, std::string& value, const std::string& help, const std::string& type) {
  record(name, [&value] { return nlohmann::json(value); });
  app_->add_option(name, value, help)->capture_default_str()->type_name(type);
}

void LessonCli::choice(const std::string& name, std::string& value, const std::string& help,
                       const std::vector<std::string>& choices) {
  record(name, [&value] { return nlohmann::json(value); });
  app_->add_option(name, value, help)->capture_default_str()->check(CLI::IsMember(choices));
}

void LessonCli::option(const std::string& name, std::vector<int64_t>& value, const std::string& help, Range<int64_t> range) {
  record(name, [&value] { return nlohmann::json(value); });
  app_->add_option(name, value, help)->capture_default_str()->delimiter(',');
  rules_.push_back([&value, name, range] {
    if (value.empty()) throw Error(cat(name, " needs at least one number"));
    for (const int64_t v : value) parse_number(name, std::to_string(v), range);  // refuses one outside the range
  });
}

void LessonCli::divides(const std::string& divisor_flag, const int64_t& divisor, const std::string& value_flag, const int64_t& value,
                        const std::string& why) {
  rules_.push_back([&, divisor_flag, value_flag, why] {
    if (value % divisor != 0)
      throw Error(cat(divisor_flag, " ", divisor, " does not divide ", value_flag, " ", value, ": ", why));
  });
}

void LessonCli::at_most(const std::string& low_flag, const int64_t& low, const std::string& high_flag, const int64_t& high,
                        const std::string& why, bool strictly) {
  rules_.push_back([&, low_flag, high_flag, why, strictly] {
    if (strictly ? low >= high : low > high)
      throw Error(cat(low_flag, " ", low, strictly ? " must be below " : " is above ", high_flag, " ", high, ": ", why));
  });
}

void LessonCli::flag(const std::string& name, bool& value, const std::string& help) {
  record(name, [&value] { return nlohmann::json(value); });
  app_->add_flag(name, value, help);
}

bool LessonCli::given(const std::string& flag) const { return app_->count(flag) > 0; }

void LessonCli::text_options(TextFlags& text, const std::string& default_data, bool default_lines) {
  text.data = default_data;
  text.lines = default_lines;
  option("--data", text.data, "training text file");
  option("--val", text.val, "validation text file (default: a seeded 90/10 split of --data)");
  record("--lines", [&text] { return nlohmann::json(text.lines); });
  app_->add_flag("--lines,!--stream", text.lines,
                std::string("--lines: each line is its own sequence; --stream: the text is one stream (default: ") +
                    (default_lines ? "lines)" : "stream)"));
}

void LessonCli::record(const std::string& name, std::function<nlohmann::json()> value) {
  recorded_.emplace_back(name.substr(2), std::move(value));
}

void LessonCli::parse_arguments(const std::vector<std::string>& args) {
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    app_->parse(reversed);
    for (const char* name : kPathFlags) {
      const CLI::Option* path = app_->get_option_no_throw(name);
      if (path && path->count() > 0 && path->results().back().empty())
        throw Error(cat(name, " was given an empty path; give a file or folder, or leave ", name, " out"));
    }
  } catch (const CLI::CallForHelp& e) {
    std::exit(app_->exit(e));
  } catch (const CLI::ParseError& e) {  // CLI11's own: an unknown flag, a missing value, ... (it quotes values raw)
    std::fprintf(stderr, "error: %s (--help lists every flag)\n", data::visible(e.what()).c_str());
    std::exit(2);
  } catch (const Error& e) {  // a number flag's value, refused by parse_number
    std::fprintf(stderr, "error: %s\n", e.what());
    std::exit(2);
  }
}

namespace {

// The flags on a command line, without "--" ("--stream" is the flag "lines").
std::vector<std::string> flags_named(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const std::string& arg : args)
    if (arg.starts_with("--")) {
      const std::string name = arg.substr(2, arg.find('=') - 2);
      names.push_back(name == "stream" ? "lines" : name);
    }
  return names;
}

}  // namespace

std::string LessonCli::typed(const std::string& flag) const {
  const CLI::Option* option = app_->get_option_no_throw(flag);
  std::string name = flag;
  for (const std::string& arg : args_) {  // the last one counts, as in parsing
    const std::string written = arg.substr(0, arg.find('='));
    if (option && written.starts_with("--") && option->check_name(written)) name = written;
  }
  return name;
}

void LessonCli::parse(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  args_ = args;
  const nlohmann::json defaults = flags_json();
  parse_arguments(args);
  try {
    if (!common.resume.empty()) adopt_resumed_flags(args, defaults);
    for (const auto& rule : rules_) rule();
    if (common.threads > 0) check_threads(lesson_, common.threads);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    std::exit(2);
  }
  flags_at_start_ = flags_json();
  if (common.threads > 0) set_num_threads(common.threads);
  else harness::adapt_threads_to_load();
  manual_seed(common.seed);
}

void LessonCli::adopt_resumed_flags(const std::vector<std::string>& args, const nlohmann::json& defaults) {
  const nlohmann::json recorded = recorded_flags(common.resume, lesson_);
  std::vector<std::string> adopted = arguments_for(recorded, defaults, flags_named(args));
  const std::string given_out = given("--out") ? common.out : "";
  adopted.insert(adopted.end(), args.begin(), args.end());  // the command line's own flags last
  parse_arguments(adopted);
  resume_from(given_out);
  const std::vector<std::string> changed = changed_flags(recorded, flags_json());
  if (!changed.empty()) {
    std::string list;
    for (const std::string& c : changed) list += (list.empty() ? "" : ", ") + c;
    fail("--resume", common.resume, ": ", list, ": a resumed run goes on with the model, data and training it started with; ",
         "leave ", changed.size() == 1 ? "this flag" : "these flags", " out (only --threads, --stop-after and --verbose may change)");
  }
}

void LessonCli::resume_from(const std::string& given_out) {
  namespace fs = std::filesystem;
  if (!given_out.empty() && fs::weakly_canonical(given_out) != fs::weakly_canonical(common.resume))
    fail("--resume", common.resume, " continues the run in that folder; --out ", given_out, " names another: leave --out out");
  common.out = common.resume;
}

nlohmann::json LessonCli::flags_json() const {
  nlohmann::json flags = nlohmann::json::object();
  for (const auto& [name, value] : recorded_) flags[name] = value();
  return flags;
}

std::vector<std::string> chosen_names(const std::string& lesson, const std::string& flag, const std::string& given,
                                      const std::vector<std::string>& choices, const std::string& noun) {
  if (given == "all") return choices;
  std::string listed;
  for (const std::string& choice : choices) listed += (listed.empty() ? "" : ",") + choice;
  std::vector<std::string> names;
  for (size_t at = 0; at <= given.size();) {
    const size_t end = std::min(given.find(',', at), given.size());
    const std::string name = given.substr(at, end - at);
    if (name == "all")
      fail(lesson.c_str(), flag, ": 'all' already names every ", noun, " and cannot be combined with others; give 'all' alone ",
           "or some of ", listed, " separated by commas");
    if (std::find(choices.begin(), choices.end(), name) == choices.end())
      fail(lesson.c_str(), flag, ": '", data::visible(name), "' is not a ", noun, "; give 'all' or some of ", listed, " separated by commas");
    if (std::find(names.begin(), names.end(), name) != names.end())
      fail(lesson.c_str(), flag, ": '", data::visible(name), "' is named twice; name each ", noun, " once");
    names.push_back(name);
    at = end + 1;
  }
  return names;
}

}  // namespace ladder::harness
