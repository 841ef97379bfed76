// Running a program of the build (the compiler, ninja, a suite, a lesson) and keeping what it printed.
#pragma once

#include <filesystem>
#include <string>

namespace ladder::exercise {

struct Ran {
  int status = -1;     // the exit status; -1 when the program did not exit (a signal ended it)
  std::string output;  // its standard output and error, interleaved
};

// Runs `command` with /bin/sh, its output captured.
Ran run_command(const std::string& command);

// `path` quoted for /bin/sh: in single quotes, a quote inside written '\''.
std::string shell_quoted(const std::filesystem::path& path);

}  // namespace ladder::exercise
