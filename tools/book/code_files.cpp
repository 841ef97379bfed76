#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "book.h"

namespace ladder::book {

namespace {

std::string language_of(const std::string& file) {
  if (file.ends_with(".py")) return "python";
  if (file.ends_with("CMakeLists.txt")) return "cmake";
  if (file == "ladder" || file.ends_with(".sh")) return "bash";
  return "cpp";
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where the comment or string literal that starts at `at` ends (a C++ file's // and /* */, a
// script's #; "..." with its escapes, up to the line's end); `at` itself when none starts there.
size_t unlinked_end(const std::string& text, size_t at, bool cpp) {
  const auto found_or_end = [&](size_t found, size_t past) { return found == std::string::npos ? text.size() : found + past; };
  if (cpp ? text.compare(at, 2, "//") == 0 : text[at] == '#') return found_or_end(text.find('\n', at), 0);
  if (cpp && text.compare(at, 2, "/*") == 0) return found_or_end(text.find("*/", at + 2), 2);
  if (text[at] != '"') return at;
  for (size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\') ++i;
    else if (text[i] == '"') return i + 1;
    else if (text[i] == '\n') return i;
  }
  return text.size();
}

}  // namespace

void write_code_files(const Book& book) {
  std::map<std::string, std::optional<docs::Declaration>> definitions;  // name -> its one definition, looked up once
  for (const std::string& file : book.index.files()) {
    std::ifstream in(book.root / file, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    std::string html;
    int line = 1;
    const bool cpp = language_of(file) == "cpp";
    for (size_t i = 0; i < text.size();) {
      const char c = text[i];
      if (const size_t end = unlinked_end(text, i, cpp); end > i) {  // a word in a comment or a literal names no code
        line += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(i), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
        html += escaped(text.substr(i, end - i));
        i = end;
        continue;
      }
      if (!word_char(c) || (i > 0 && word_char(text[i - 1])) || std::isdigit(static_cast<unsigned char>(c))) {
        if (c == '\n') ++line;
        html += escaped(std::string(1, c));
        ++i;
        continue;
      }
      size_t end = i;
      while (end < text.size() && word_char(text[end])) ++end;
      const std::string name = text.substr(i, end - i);
      i = end;
      auto found = definitions.find(name);
      if (found == definitions.end()) found = definitions.emplace(name, name.size() < 3 ? std::nullopt : docs::unique_definition(book.index, name)).first;
      const std::optional<docs::Declaration>& d = found->second;
      if (d && !(d->file == file && d->line == line))  // a name links to its definition, not to itself
        html += "<a href=\"#code=" + d->file + ":" + std::to_string(d->line) + "\">" + name + "</a>";
      else
        html += name;
    }
    const fs::path path = book.out / "code" / (file + ".js");
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    const auto json = [](const std::string& s) { return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
    out << "ladderBook.code(" << json(file) << ", " << json(language_of(file)) << ", " << json(html) << ");\n";
    if (!out) throw std::runtime_error("cannot write " + path.string());
  }
}

}  // namespace ladder::book
