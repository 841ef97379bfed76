#include "docs/markdown.h"

#include <cctype>
#include <sstream>

#include "tools/trim.h"

namespace ladder::docs {
namespace {

using text::trim;

size_t indentation(const std::string& line) { return line.find_first_not_of(' ') == std::string::npos ? line.size() : line.find_first_not_of(' '); }

// Number of backticks opening a fence on this line (3 or more after the indentation), else 0.
size_t fence_ticks(const std::string& line) {
  size_t at = indentation(line), n = 0;
  while (at + n < line.size() && line[at + n] == '`') ++n;
  return n >= 3 ? n : 0;
}

// A line that starts a block of its own: heading, list item, table row, quote.
bool starts_block(const std::string& line) {
  const std::string t = trim(line);
  if (t.empty()) return false;
  if (t[0] == '#' || t[0] == '|' || t[0] == '>') return true;
  if ((t[0] == '-' || t[0] == '*') && t.size() > 1 && t[1] == ' ') return true;
  size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  return digits > 0 && digits + 1 < t.size() && t[digits] == '.' && t[digits + 1] == ' ';
}

// Splits one paragraph (its lines joined by '\n') into code spans and sentences.
class ParagraphReader {
 public:
  explicit ParagraphReader(Note& note) : note_(note) {}

  void read(const std::vector<std::pair<int, std::string>>& lines) {
    std::string text;
    std::vector<int> line_of;  // line_of[i]: the note line of text[i]
    for (const auto& [number, line] : lines) {
      if (!text.empty()) {
        text += '\n';
        line_of.push_back(number);
      }
      text += line;
      line_of.insert(line_of.end(), line.size(), number);
    }
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '\\') {
        ++i;  // an escaped character is plain text
      } else if (c == '`') {
        i = span(text, line_of, i);
      } else if ((c == '.' || c == '?' || c == '!') && i + 1 < text.size() && std::isspace(static_cast<unsigned char>(text[i + 1]))) {
        ++sentence_;
      }
    }
    ++sentence_;
  }

 private:
  // Reads the span whose opening backticks start at `at`; returns the index of its last character.
  size_t span(const std::string& text, const std::vector<int>& line_of, size_t at) {
    size_t ticks = 0;
    while (at + ticks < text.size() && text[at + ticks] == '`') ++ticks;
    const size_t content = at + ticks;
    for (size_t close = text.find('`', content); close != std::string::npos; close = text.find('`', close)) {
      size_t run = 0;
      while (close + run < text.size() && text[close + run] == '`') ++run;
      if (run == ticks) {
        std::string inside = text.substr(content, close - content);
        for (char& ch : inside)
          if (ch == '\n') ch = ' ';
        note_.spans.push_back({trim(inside), line_of[at], sentence_});
        return close + run - 1;
      }
      close += run;
    }
    return content - 1;  // no closing run: the backticks are plain text
  }

  Note& note_;
  int sentence_ = 0;
};

}  // namespace

Note parse_note(const std::string& path, const std::string& text) {
  Note note{path, {}, {}};
  ParagraphReader reader(note);
  std::vector<std::pair<int, std::string>> paragraph;
  auto finish_paragraph = [&] {
    if (!paragraph.empty()) reader.read(paragraph);
    paragraph.clear();
  };

  std::istringstream in(text);
  std::string line;
  int number = 0;
  Fence* fence = nullptr;
  size_t fence_open = 0, fence_indent = 0;
  while (std::getline(in, line)) {
    ++number;
    if (fence) {
      if (fence_ticks(line) >= fence_open && trim(line).find_first_not_of('`') == std::string::npos) {
        fence = nullptr;
      } else {
        fence->lines.push_back(line.substr(std::min(fence_indent, indentation(line))));
      }
      continue;
    }
    if (const size_t ticks = fence_ticks(line)) {
      finish_paragraph();
      fence_open = ticks;
      fence_indent = indentation(line);
      note.fences.push_back({trim(line.substr(fence_indent + ticks)), number + 1, {}});
      fence = &note.fences.back();
      continue;
    }
    if (trim(line).empty() || starts_block(line)) finish_paragraph();
    if (!trim(line).empty()) paragraph.emplace_back(number, line);
    if (!trim(line).empty() && (trim(line)[0] == '#' || trim(line)[0] == '|')) finish_paragraph();  // one line each
  }
  finish_paragraph();
  return note;
}

}  // namespace ladder::docs
