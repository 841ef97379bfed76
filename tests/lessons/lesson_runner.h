// Running a lesson executable (or any command) from a test: its exit status and output, temporary
// folders, its summary.json.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace ladder::testing {

struct Ran {
  int status;
  std::string output;  // stdout and stderr together
};

// A file's whole text (empty when it cannot be read: the checks on it then fail).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline Ran run_command(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[4096];
  while (const size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// Output that goes to a pipe or a file is plain lines: no progress line redrawn with a carriage
// return or an escape code (harness/progress.h), which a log would keep.
inline void check_plain_lines(const std::string& program, const std::string& output) {
  CHECK_MESSAGE(output.find('\x1b') == std::string::npos, program, " printed an escape code into a pipe");
  CHECK_MESSAGE(output.find('\r') == std::string::npos, program, " printed a carriage return into a pipe");
}

inline Ran run_lesson(const std::string& name, const std::string& args) {
  Ran ran = run_command(std::string(LADDER_LESSON_DIR) + "/lesson_" + name + " " + args);
  check_plain_lines("lesson_" + name, ran.output);
  return ran;
}

// Whether `output` holds every one of `words` (the parts of a message that matter: the flag, the
// value, the fix), in any order, so that rewording the rest of the sentence breaks no test.
inline bool says_all(const std::string& output, const std::vector<std::string>& words) {
  for (const std::string& word : words)
    if (output.find(word) == std::string::npos) return false;
  return true;
}

// A lesson refuses bad input: exit status 2 and a message that holds each of `words`.
inline void check_refused(const std::string& name, const std::string& args, const std::vector<std::string>& words) {
  const Ran ran = run_lesson(name, args);
  INFO(name, " ", args, "\n", ran.output);
  CHECK(ran.status == 2);
  CHECK(says_all(ran.output, words));
}

// A folder under the temporary directory, removed before and after the test.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag)
      : path(std::filesystem::temp_directory_path() / ("ladder_" + tag + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

inline nlohmann::json summary_of(const std::filesystem::path& folder) {
  std::ifstream in(folder / "summary.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

}  // namespace ladder::testing
