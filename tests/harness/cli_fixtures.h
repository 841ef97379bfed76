// What the lesson kit's test files share: a LessonCli parsed as a lesson's main() would, and what
// a piece of code prints on stdout.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "harness/cli.h"

namespace ladder::testing {

// What `body` prints on stdout.
inline std::string captured_stdout(const std::function<void()>& body) {
  std::fflush(stdout);
  FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  const int saved = dup(1);
  dup2(fileno(file), 1);
  body();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::rewind(file);
  std::string out;
  char buf[4096];
  while (const size_t n = std::fread(buf, 1, sizeof buf, file)) out.append(buf, n);
  std::fclose(file);
  return out;
}

// A LessonCli parsed from `args`, as a lesson's main() would.
struct ParsedCli {
  harness::LessonCli cli;
  // `declare` adds flags before parsing, as a lesson adds its own.
  explicit ParsedCli(std::vector<std::string> args, const std::function<void(harness::LessonCli&)>& declare = {})
      : cli("99_kit", "kit test", {.steps = 10, .lr = 0.5f}) {
    if (declare) declare(cli);
    args.insert(args.begin(), "lesson_99_kit");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    cli.parse(static_cast<int>(argv.size()), argv.data());
  }
};

}  // namespace ladder::testing
