// The `next:` line every lesson prints at the end (Run::finish): "docs/10_transformer.md, section 7
// (Reading the attention maps); then ...". The docs test checks that the note exists and that its
// section has that number and title, so that renumbering a note breaks the test, not the learner.
#pragma once

#include <string>
#include <vector>

#include "docs/rules.h"

namespace ladder::docs {

struct NextPointer {
  std::string where;  // "lessons/10_transformer.cpp:276"
  std::string text;   // the whole string, its literals joined
  std::string note;   // "docs/10_transformer.md"
  int section = 0;    // 7 in "section 7 (...)"; 0 when none is named
  std::string title;  // "Reading the attention maps" (also from a quoted heading: "\"The estimators\"")
};

// Every string of `source` (a C++ file's text) that starts with "docs/<note>.md", its adjacent
// literals joined as the compiler joins them.
std::vector<NextPointer> next_pointers(const std::string& file, const std::string& source);

// What is wrong with `pointer` against its note's Markdown: a missing section number, a title that
// is not the start of that section's heading (case aside), a title no heading starts with.
std::vector<Problem> check_next_pointer(const NextPointer& pointer, const std::string& note_markdown);

}  // namespace ladder::docs
