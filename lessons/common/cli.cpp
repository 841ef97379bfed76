#include "lessons/common/cli.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "core/kernels/parallel.h"
#include "core/random.h"

namespace ladder::lessons {

double shortest_decimal(float value) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  return std::strtod(std::string(buf, end).c_str(), nullptr);
}

LessonCli::LessonCli(std::string lesson, const std::string& description, CommonFlags defaults)
    : common(std::move(defaults)), lesson_(std::move(lesson)), app_(description, "./ladder lesson " + lesson_.substr(0, 2)) {
  if (common.out.empty()) common.out = "runs/" + lesson_;
  option("--steps", common.steps, "training steps")->check(CLI::PositiveNumber);
  option("--lr", common.lr, "learning rate")->check(CLI::PositiveNumber);
  option("--batch", common.batch, "batch size")->check(CLI::PositiveNumber);
  option("--seed", common.seed, "random seed: the same seed and thread count give the same run");
  option("--threads", common.threads, "threads for loops and BLAS (0: all cores)")->check(CLI::NonNegativeNumber);
  option("--out", common.out, "folder for metrics.csv, plots, samples, checkpoint and summary.json");
  flag("--quick", common.quick, "shrink everything so that the lesson runs in a few seconds");
}

CLI::Option* LessonCli::flag(const std::string& name, bool& value, const std::string& help) {
  record(name, [&value] { return nlohmann::json(value); });
  return app_.add_flag(name, value, help);
}

void LessonCli::text_options(TextFlags& text, const std::string& default_data, bool default_lines) {
  text.data = default_data;
  text.lines = default_lines;
  option("--data", text.data, "training text file");
  option("--val", text.val, "validation text file (default: a seeded 90/10 split of --data)");
  record("--lines", [&text] { return nlohmann::json(text.lines); });
  app_.add_flag("--lines,!--stream", text.lines,
                std::string("--lines: each line is its own sequence; --stream: the text is one stream (default: ") +
                    (default_lines ? "lines)" : "stream)"));
}

void LessonCli::record(const std::string& name, std::function<nlohmann::json()> value) {
  recorded_.emplace_back(name.substr(2), std::move(value));
}

void LessonCli::parse(int argc, char** argv) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::exit(app_.exit(e));
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\nrun with --help to see every flag\n", e.what());
    std::exit(2);
  }
  if (common.threads > 0) set_num_threads(common.threads);
  manual_seed(common.seed);
}

nlohmann::json LessonCli::flags_json() const {
  nlohmann::json flags = nlohmann::json::object();
  for (const auto& [name, value] : recorded_) flags[name] = value();
  return flags;
}

}  // namespace ladder::lessons
