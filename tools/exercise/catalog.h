// The exercises: each a region of real library code (region.h) that a learner writes again, and
// the tests that hold that code, which `./ladder exercise check` runs against the learner's copy.
#pragma once

#include <string>
#include <vector>

namespace ladder::exercise {

// One check of an exercise: a doctest case of one suite (and one of its subcases, when given).
struct Check {
  std::string what;       // what it checks, in words: "tanh's backward against finite differences"
  std::string suite;      // the executable, tests/test_gradcheck
  std::string test_case;  // doctest's -tc filter (wildcards, no commas)
  std::string subcase;    // doctest's -sc filter, or empty for the whole case
};

struct Exercise {
  std::string name;    // tanh_backward: the markers' name and the command's
  std::string lesson;  // 00_autograd: the lesson whose note gives the hint and whose --quick run ends the check
  std::string file;    // core/ops/unary.cpp, from the repository's root
  // What replaces the region when the exercise starts: code of the region's shape whose NOT_WRITTEN
  // fails naming the exercise (a ladder::Error thrown).
  std::string stub;
  std::vector<Check> checks;
  std::string lesson_flags;  // added to --quick for the lesson's run, e.g. "--part 1"
};

// Every exercise, in lesson order.
const std::vector<Exercise>& catalog();

// The exercise called `name`; throws ladder::Error listing the names when there is none.
const Exercise& find_exercise(const std::string& name);

// The stub with its NOT_WRITTEN replaced by the call that fails naming the exercise and the file to edit.
std::string stub_code(const Exercise& exercise);

}  // namespace ladder::exercise
