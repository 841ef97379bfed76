// What the docs test reads in a Markdown note: the inline code spans (`...`) with the line and
// sentence they sit in, and the fenced blocks (```cpp ... ```) with their info string.
#pragma once

#include <string>
#include <vector>

namespace ladder::docs {

struct CodeSpan {
  std::string text;  // the content, trimmed; a span that runs over lines has its newlines as spaces
  int line;          // 1-based line where the span starts
  int sentence;      // sentences are numbered through the whole note; a table row or heading is one
};

struct Fence {
  std::string info;                // the word after the opening backticks: "cpp", "text", or ""
  int first_line;                  // 1-based line of the first content line
  std::vector<std::string> lines;  // the content, without the fence's own indentation
};

struct Note {
  std::string path;  // relative to the repository root, e.g. "docs/05_rnn.md"
  std::vector<CodeSpan> spans;
  std::vector<Fence> fences;
};

Note parse_note(const std::string& path, const std::string& text);

}  // namespace ladder::docs
