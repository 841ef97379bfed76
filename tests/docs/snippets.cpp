#include "docs/snippets.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>

namespace ladder::docs {

bool at_namespace_scope(const Fence& fence) {
  static const std::regex declaration(R"(^(template|struct|class|enum|namespace|using)\b.*)");
  // a type, then the name and its parameters, then the opening brace: Tensor tanh(const Tensor& x) {
  static const std::regex function_head(R"(^[A-Za-z_][\w:<>, *&]*[ *&]~?[A-Za-z_][\w:]*\(.*\)\s*(const\s*)?\{\s*(//.*)?$)");
  for (const std::string& line : fence.lines) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, 2, "//") == 0) continue;
    const std::string code = line.substr(start);
    return std::regex_match(code, declaration) || std::regex_match(code, function_head);
  }
  return false;
}

std::string snippet_unit(const std::vector<Note>& notes, const std::vector<std::string>& headers) {
  std::string blocks;
  int functions = 0;
  for (const Note& note : notes) {
    std::string body;
    for (const Fence& fence : note.fences) {
      if (fence.info != "cpp") continue;
      const bool outside = at_namespace_scope(fence);
      if (!outside) body += "[[maybe_unused]] void snippet_" + std::to_string(++functions) + "() {\n";
      body += "#line " + std::to_string(fence.first_line) + " \"" + note.path + "\"\n";
      for (const std::string& line : fence.lines) body += line + "\n";
      if (!outside) body += "}\n";
    }
    if (body.empty()) continue;
    std::string name = "note_" + std::filesystem::path(note.path).stem().string();
    std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    blocks += "namespace " + name + " {\nusing namespace ladder;\n" + body + "}  // namespace " + name + "\n";
  }
  if (blocks.empty()) return "";
  std::string unit = "// The ```cpp blocks of the notes, written by the docs test.\n";
  for (const std::string& header : headers) unit += "#include \"" + header + "\"\n";
  return unit + blocks;
}

}  // namespace ladder::docs
