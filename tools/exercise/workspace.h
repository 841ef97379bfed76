// The learner's side of an exercise: its folder, exercises/NAME/, outside the build and untracked
// by git (so that ./ladder build and git pull leave it alone), with the learner's copy of the
// region's file, the note's hint, the last check's result and the check's own build folder.
#pragma once

#include <filesystem>
#include <string>

#include "catalog.h"

namespace ladder::exercise {

struct Places {
  std::filesystem::path root;       // the repository
  std::filesystem::path build;      // ladder's build folder, whose suites and lessons a check links again
  std::filesystem::path workspace;  // the learner's exercises/
};

std::filesystem::path exercise_folder(const Places& places, const Exercise& exercise);  // exercises/NAME/
std::filesystem::path learner_file(const Places& places, const Exercise& exercise);     // exercises/NAME/unary.cpp

// The original file's text, and its region's code: one answer.
std::string original_text(const Places& places, const Exercise& exercise);
std::string solution(const Places& places, const Exercise& exercise);

// The region as the learner wrote it. Throws ladder::Error when the exercise is not started or a
// marker of the learner's copy is missing.
std::string learner_region(const Places& places, const Exercise& exercise);

// The hint of the exercise's lesson note (docs/NN_name.md): the item that holds
// `./ladder exercise start NAME`. Throws ladder::Error when the note has none.
std::string hint(const Places& places, const Exercise& exercise);

// "not started", "started", "passed" or "failed" (the last check's result).
std::string status(const Places& places, const Exercise& exercise);
void record_check(const Places& places, const Exercise& exercise, bool passed);

// Writes the learner's copy (the region replaced by the stub) and HINT.md; returns what it wrote,
// to print. Throws ladder::Error when the exercise is started already.
std::string start(const Places& places, const Exercise& exercise);

// Removes the exercise's folder; returns what it did.
std::string reset(const Places& places, const Exercise& exercise);

// The learner's region against the original's, as a unified diff (empty when they are the same).
std::string diff(const Places& places, const Exercise& exercise);

}  // namespace ladder::exercise
