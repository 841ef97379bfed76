// ./ladder exercise check NAME: the learner's copy of the file compiled as the library compiles
// the original (the build's own command, from compile_commands.json, at -O1), the suites and the lesson
// that hold that code linked again with it into exercises/NAME/build/ (the build's own link
// commands, the learner's object first, so that it stands in for the original's), then each check
// run and the lesson's --quick run. The rest of ladder is never rebuilt and keeps working.
#pragma once

#include <string>
#include <vector>

#include "workspace.h"

namespace ladder::exercise {

// What a check links again, as the build's paths: the suites (tests/test_gradcheck), then the
// lesson (lessons/lesson_00_autograd). The file name is the CMake target's.
std::vector<std::string> targets(const Exercise& exercise);

// The first failure in a doctest suite's output, in words: where, and what was compared (the
// message a check logged, or the expression and its values, or the exception thrown). Empty
// when the output holds none.
std::string first_failure(const std::string& doctest_output);

struct CheckOptions {
  bool lesson = true;  // also the lesson's --quick run, once every check passes
};

// Checks the learner's copy, printing each step and its result; true when every one passed. The
// result is recorded for `list`. Throws ladder::Error when the exercise is not started or the
// build folder lacks what the check links.
bool check(const Places& places, const Exercise& exercise, const CheckOptions& options = {});

}  // namespace ladder::exercise
