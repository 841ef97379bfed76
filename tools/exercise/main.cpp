// ladder_exercise: exercises the framework checks (./ladder exercise). Exit status 0 when the
// command did what was asked (a check: when every check passed), 1 when a check failed, 2 with
// one line for a command or a name it cannot take.
#include <cstdio>
#include <string>
#include <vector>

#include "catalog.h"
#include "check.h"
#include "core/error.h"
#include "data/visible_text.h"
#include "workspace.h"

namespace fs = std::filesystem;
using namespace ladder::exercise;

namespace {

constexpr const char* kUsage =
    "usage: ./ladder exercise list                 the exercises, by lesson, and where you are with each\n"
    "       ./ladder exercise start NAME           your copy of the region's file, the region to write, and its hint\n"
    "       ./ladder exercise check NAME           your code against the tests that hold it, then in its lesson\n"
    "                             [--no-lesson]    the tests alone\n"
    "       ./ladder exercise diff NAME            your region against the original\n"
    "       ./ladder exercise solution NAME        the original region: one answer\n"
    "       ./ladder exercise reset NAME           removes your copy, to start again\n";

void list(const Places& places) {
  std::printf("%-22s %-18s %-36s %s\n", "lesson", "exercise", "file", "status");
  for (const Exercise& exercise : catalog())
    std::printf("%-22s %-18s %-36s %s\n", exercise.lesson.c_str(), exercise.name.c_str(), exercise.file.c_str(),
                status(places, exercise).c_str());
  std::printf("start one with ./ladder exercise start NAME\n");
}

}  // namespace

int main(int argc, char** argv) {
  Places places;
  std::vector<std::string> words;
  bool lesson = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--root" || arg == "--build" || arg == "--workspace") && i + 1 < argc) {
      (arg == "--root" ? places.root : arg == "--build" ? places.build : places.workspace) = argv[++i];
    } else if (arg == "--no-lesson") {
      lesson = false;
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (arg.starts_with("--")) {
      std::fprintf(stderr, "exercise: unknown option %s\n%s", ladder::data::visible(arg).c_str(), kUsage);
      return 2;
    } else {
      words.push_back(arg);
    }
  }
  if (places.workspace.empty()) places.workspace = places.root / "exercises";
  const std::string command = words.empty() ? "list" : words[0];
  try {
    if (command == "list" && words.size() == 1) {
      list(places);
      return 0;
    }
    if (words.size() != 2 || (command != "start" && command != "check" && command != "diff" && command != "solution" &&
                              command != "reset" && command != "targets")) {
      std::fprintf(stderr, "exercise: cannot take '%s'\n%s", ladder::data::visible(command).c_str(), kUsage);
      return 2;
    }
    const Exercise& exercise = find_exercise(words[1]);
    if (command == "start") std::printf("%s", start(places, exercise).c_str());
    if (command == "reset") std::printf("%s", reset(places, exercise).c_str());
    if (command == "solution") std::printf("%s", solution(places, exercise).c_str());
    if (command == "diff") {
      const std::string changes = diff(places, exercise);
      std::printf("%s", changes.empty() ? "your region is the original's, line for line\n" : changes.c_str());
    }
    if (command == "targets")
      for (const std::string& target : targets(exercise)) std::printf("%s\n", fs::path(target).filename().c_str());
    if (command == "check") return check(places, exercise, {.lesson = lesson}) ? 0 : 1;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
