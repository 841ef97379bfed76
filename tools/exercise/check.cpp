#include "check.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command.h"
#include "core/error.h"
#include "io/small_file.h"
#include "region.h"

namespace fs = std::filesystem;

namespace ladder::exercise {

namespace {

// The build's compile command for the original file: the library's, not its sanitized twin's.
std::pair<std::string, std::string> original_compile(const Places& places, const Exercise& exercise) {
  const fs::path database = places.build / "compile_commands.json";
  if (!fs::exists(database)) fail("exercise", database.string(), " is missing: build ladder first (./ladder build)");
  const nlohmann::json entries = nlohmann::json::parse(io::read_small_file("exercise", database.string(), uint64_t{64} << 20));
  const fs::path original = fs::weakly_canonical(places.root / exercise.file);
  for (const nlohmann::json& entry : entries) {
    const std::string command = entry.value("command", "");
    if (fs::weakly_canonical(entry.value("file", "")) == original && command.find("_sanitized.dir/") == std::string::npos)
      return {entry.value("directory", ""), command};
  }
  fail("exercise", database.string(), " has no command that compiles ", exercise.file, ": build ladder first (./ladder build)");
}

// `command` with the word after `flag` (" -o ") replaced by `word`.
std::string replace_word_after(std::string command, const std::string& flag, const std::string& word) {
  const size_t at = command.find(flag);
  if (at == std::string::npos) fail("exercise", "the build's command has no '", flag, "': ", command);
  const size_t begin = at + flag.size(), end = std::min(command.find(' ', begin), command.size());
  return command.replace(begin, end - begin, word);
}

// The learner's copy compiled with the original's command into build/, at -O1 (half the time of
// -O3: a check is waiting, and its figures are not the lesson's); warnings never stop it.
std::string compile(const Places& places, const Exercise& exercise, const fs::path& object) {
  auto [directory, command] = original_compile(places, exercise);
  command = replace_word_after(command, " -o ", shell_quoted(object));
  const size_t source = command.rfind(" -c ");  // the source ends the command: a path with a space is quoted
  if (source == std::string::npos) fail("exercise", "the build's command has no ' -c ': ", command);
  command = command.substr(0, source + 4) + shell_quoted(learner_file(places, exercise));
  for (size_t at; (at = command.find(" -Werror")) != std::string::npos;) command.erase(at, std::string(" -Werror").size());
  command += " -O1";
  const Ran ran = run_command("cd " + shell_quoted(directory) + " && " + command);
  return ran.status == 0 ? "" : ran.output;
}

// The build's link command for `target` (tests/test_gradcheck), the learner's object first, into `out`.
std::string link(const Places& places, const std::string& target, const fs::path& object, const fs::path& out) {
  const Ran commands = run_command(std::string(LADDER_NINJA) + " -C " + shell_quoted(places.build) + " -t commands " + target);
  std::string command = commands.output.substr(commands.output.find_last_of('\n', commands.output.size() - 2) + 1);
  const std::string output = " -o " + target + " ";
  const size_t at = command.find(output);
  if (commands.status != 0 || at == std::string::npos)
    fail("exercise", "the build has no link command for ", target, ": build ladder first (./ladder build)\n", commands.output);
  command.replace(at, output.size(), " -o " + shell_quoted(out) + " " + shell_quoted(object) + " ");
  const Ran ran = run_command("cd " + shell_quoted(places.build) + " && " + command);
  return ran.status == 0 ? "" : ran.output;
}

// The last `count` lines of `text` (the first, with `first`), indented.
std::string last_lines(const std::string& text, size_t count, bool first = false) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const size_t from = first || lines.size() <= count ? 0 : lines.size() - count;
  std::string out;
  for (size_t i = from; i < std::min(lines.size(), from + count); ++i) out += "      " + lines[i] + "\n";
  return out;
}

// The compiler's output from its first error on: a stub's unused names warn before it.
std::string from_first_error(const std::string& output) {
  const size_t error = output.find("error:");
  if (error == std::string::npos) return output;
  const size_t line = output.rfind('\n', error);
  return output.substr(line == std::string::npos ? 0 : line + 1);
}

// How many test cases and assertions a doctest run counted ("[doctest] test cases: 2 | ...").
int64_t doctest_count(const std::string& output, const std::string& what) {
  const size_t at = output.rfind("[doctest] " + what + ":");
  return at == std::string::npos ? -1 : std::stoll(output.substr(at + what.size() + 11));
}

void report(const std::string& step, bool passed, const std::string& failure = "") {
  std::printf("  %-72s %s\n", step.c_str(), passed ? "ok" : "FAILED");
  if (!failure.empty()) std::printf("%s", failure.c_str());
  std::fflush(stdout);
}

}  // namespace

std::vector<std::string> targets(const Exercise& exercise) {
  std::vector<std::string> paths;
  for (const Check& c : exercise.checks)
    if (std::find(paths.begin(), paths.end(), c.suite) == paths.end()) paths.push_back(c.suite);
  paths.push_back("lessons/lesson_" + exercise.lesson);
  return paths;
}

std::string first_failure(const std::string& doctest_output) {
  std::istringstream in(doctest_output);
  std::string where, error, logged, values;
  for (std::string line; std::getline(in, line);) {
    if (where.empty()) {
      const size_t at = line.find("ERROR: ");
      // doctest names an exception thrown in a subcase only in a later block, once the case has exited
      if (at == std::string::npos || line.find("exception thrown in subcase - will translate later") != std::string::npos) continue;
      where = line.substr(0, line.rfind(": ", at));
      error = line.substr(at + 7);
    } else if (line.starts_with("  logged: ")) {
      logged += line.substr(10);
    } else if (line.starts_with("  values: ")) {
      values = line.substr(10);
    } else if (line.empty() || line.starts_with("===")) {
      break;
    } else if (!logged.empty()) {
      logged += " " + line.substr(line.find_first_not_of(' '));  // a logged message's next line
    }
  }
  if (where.empty()) return "";
  // An exception that ended the process (thrown where none may leave: a noexcept function, an
  // OpenMP simd loop) is printed by the C++ runtime before doctest reports the crash.
  const size_t what = doctest_output.find("what():  ");
  if (error.starts_with("test case CRASHED") && what != std::string::npos)
    error += ", after " + doctest_output.substr(what + 9, doctest_output.find('\n', what) - what - 9);
  // An exception or a crash says what went wrong itself; a check with a message says what it
  // compared; one without, its expression and the values in it.
  if (error.starts_with("test case ")) return where + ": " + error + (logged.empty() ? "" : " (" + logged + ")");
  if (!logged.empty()) return where + ": " + logged;
  if (!values.empty()) return where + ": " + error.substr(0, error.rfind(" is NOT correct!")) + ", which was " + values;
  return where + ": " + error;
}

bool check(const Places& places, const Exercise& exercise, const CheckOptions& options) {
  const fs::path file = learner_file(places, exercise), folder = exercise_folder(places, exercise) / "build";
  learner_region(places, exercise);  // started, and its markers still there
  fs::create_directories(folder);
  std::printf("check %s: %s, in place of %s\n", exercise.name.c_str(), file.string().c_str(), exercise.file.c_str());
  const fs::path object = folder / (file.filename().string() + ".o");
  const std::string errors = compile(places, exercise, object);
  report("compiled", errors.empty(), last_lines(from_first_error(errors), 12, true));
  bool passed = errors.empty();
  if (passed) {
    for (const std::string& target : targets(exercise)) {
      const std::string name = fs::path(target).filename().string();
      const std::string failed = link(places, target, object, folder / name);
      if (!failed.empty()) {
        report("linked with " + name, false, last_lines(failed, 8));
        passed = false;
      }
    }
  }
  size_t failures = 0;
  for (const Check& c : passed ? exercise.checks : std::vector<Check>{}) {
    const Ran ran = run_command(shell_quoted(folder / fs::path(c.suite).filename()) + " -tc=" + shell_quoted(c.test_case) +
                                (c.subcase.empty() ? "" : " -sc=" + shell_quoted(c.subcase)));
    std::string failure = first_failure(ran.output);
    if (ran.status == 0 && (doctest_count(ran.output, "test cases") < 1 || doctest_count(ran.output, "assertions") < 1))
      failure = "the filter selects no test case of " + c.suite + ": the exercise's catalogue is out of date";
    if (ran.status != 0 && failure.empty()) failure = "the suite ended without a result:\n" + last_lines(ran.output, 6);
    report(c.what, failure.empty(), failure.empty() ? "" : "      " + failure + "\n");
    failures += failure.empty() ? 0 : 1;
  }
  passed = passed && failures == 0;
  if (passed && options.lesson) {
    const fs::path run = folder / "run";
    fs::remove_all(run);
    const Ran ran = run_command(shell_quoted(folder / ("lesson_" + exercise.lesson)) + " --quick " + exercise.lesson_flags +
                                " --out " + shell_quoted(run));
    report("lesson " + exercise.lesson + " --quick, with your code", ran.status == 0,
           ran.status == 0 ? "" : last_lines(ran.output, 6));
    passed = ran.status == 0;
  }
  record_check(places, exercise, passed);
  if (passed)
    std::printf("check %s: passed\n", exercise.name.c_str());
  else
    std::printf("check %s: FAILED%s (./ladder exercise diff %s shows your region against the original)\n", exercise.name.c_str(),
                failures ? cat(", ", failures, " of ", exercise.checks.size(), " checks").c_str() : "", exercise.name.c_str());
  return passed;
}

}  // namespace ladder::exercise
