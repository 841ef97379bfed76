#include "docs/next_pointers.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace ladder::docs {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The literal opening at source[at] ('"'), unescaped; `at` ends past its closing quote.
std::string read_literal(const std::string& source, size_t& at) {
  std::string out;
  for (++at; at < source.size() && source[at] != '"'; ++at) {
    if (source[at] != '\\' || at + 1 >= source.size()) {
      out += source[at];
      continue;
    }
    const char escaped = source[++at];
    out += escaped == 'n' ? '\n' : escaped;
  }
  ++at;
  return out;
}

// The text inside the parentheses opening at text[at], nested ones kept: "Part 2: an MLP fits sin(x)".
std::string parenthesised(const std::string& text, size_t at) {
  int depth = 0;
  for (size_t i = at; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return text.substr(at + 1, i - at - 1);
  }
  return "";
}

void parse_target(NextPointer& p) {
  const size_t end = p.text.find(".md");
  p.note = p.text.substr(0, end + 3);
  const std::string rest = p.text.substr(end + 3);
  if (rest.starts_with(", section ")) {
    size_t digits = 0;
    p.section = std::stoi(rest.substr(10), &digits);
    const size_t open = 10 + digits + 1;
    if (open < rest.size() && rest[open] == '(') p.title = parenthesised(rest, open);
  } else if (rest.starts_with(", \"")) {
    p.title = rest.substr(3, rest.find('"', 3) - 3);
  }
}

struct Heading {
  int number;  // 0 for a heading without "N. "
  std::string title;
};

std::vector<Heading> section_headings(const std::string& markdown) {
  std::vector<Heading> headings;
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("## ")) continue;
    std::string title = line.substr(3);
    int number = 0;
    size_t digits = 0;
    while (digits < title.size() && std::isdigit(static_cast<unsigned char>(title[digits]))) ++digits;
    if (digits > 0 && title.compare(digits, 2, ". ") == 0) {
      number = std::stoi(title.substr(0, digits));
      title = title.substr(digits + 2);
    }
    headings.push_back({number, title});
  }
  return headings;
}

bool starts_title(const Heading& heading, const std::string& title) { return lower(heading.title).starts_with(lower(title)); }

}  // namespace

std::vector<NextPointer> next_pointers(const std::string& file, const std::string& source) {
  std::vector<NextPointer> pointers;
  for (size_t at = source.find("\"docs/"); at != std::string::npos; at = source.find("\"docs/", at)) {
    NextPointer p;
    p.where = file + ":" + std::to_string(1 + std::count(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    while (at < source.size() && source[at] == '"') {
      p.text += read_literal(source, at);
      while (at < source.size() && std::isspace(static_cast<unsigned char>(source[at]))) ++at;
    }
    if (p.text.find(".md") == std::string::npos) continue;
    parse_target(p);
    pointers.push_back(p);
  }
  return pointers;
}

std::vector<Problem> check_next_pointer(const NextPointer& p, const std::string& note_markdown) {
  const std::vector<Heading> headings = section_headings(note_markdown);
  const auto problem = [&](const std::string& why) { return std::vector<Problem>{{p.where, p.text.substr(0, p.text.find(';')), why}}; };
  if (p.section > 0) {
    const auto numbered = std::find_if(headings.begin(), headings.end(), [&](const Heading& h) { return h.number == p.section; });
    if (numbered == headings.end()) return problem(p.note + " has no section " + std::to_string(p.section));
    if (!starts_title(*numbered, p.title))
      return problem(p.note + "'s section " + std::to_string(p.section) + " is \"" + numbered->title + "\", not \"" + p.title + "\"");
    return {};
  }
  if (!p.title.empty() && std::none_of(headings.begin(), headings.end(), [&](const Heading& h) { return starts_title(h, p.title); }))
    return problem(p.note + " has no section \"" + p.title + "\"");
  return {};
}

}  // namespace ladder::docs
