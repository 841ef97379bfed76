// The repository's sources as the docs test needs them: which names each file uses in its code,
// which names are declared where and inside which namespaces and classes, and the words of the
// string literals. Read with a small C++ tokenizer, not a compiler: declarations are found by
// their shape (a type before the name, `class X {`, an enumerator in an enum's braces).
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ladder::docs {

struct Declaration {
  std::string file;                // relative to the repository root
  std::vector<std::string> scope;  // enclosing named namespaces, classes and enums, outermost first,
                                   // then the qualifiers of an out-of-line definition (Module::)
  int line = 0;                    // 1-based
};

class SourceIndex {
 public:
  // Reads the C++ sources (.h, .cpp) below `root`, and as plain text the build and entry scripts
  // (CMakeLists.txt, ladder) and the Python scripts. Skips build folders, runs/, .git and the
  // folders in `skip` (relative to root).
  SourceIndex(const std::filesystem::path& root, const std::vector<std::string>& skip);

  const std::filesystem::path& root() const { return root_; }
  const std::vector<std::string>& files() const { return files_; }
  // Some file of the repository (of any kind) has this name, e.g. "gru.json".
  bool has_file_named(const std::string& name) const { return file_names_.count(name) > 0; }

  // `name` appears in the code of some file (outside comments), or as a word of a string literal.
  bool mentions(const std::string& name) const;
  // The same within `file`.
  bool mentions(const std::string& file, const std::string& name) const;
  // `name` appears in the code of `file` (outside comments and string literals).
  bool uses(const std::string& file, const std::string& name) const;
  // `literal` is the whole content of a string literal in `file`.
  bool has_literal(const std::string& file, const std::string& literal) const;
  // Some file's text contains `text` anywhere (comments and literals included).
  bool text_contains(const std::string& text) const;
  // The first line of `file` where `text` is a name in the code, a word of a string literal or a
  // literal's whole content; 0 when it is none of these.
  int first_line(const std::string& file, const std::string& text) const;
  // Every declaration of `name` (for a destructor, "~Name").
  const std::vector<Declaration>& declarations(const std::string& name) const;
  // Where `flag` ("--steps") is declared: a literal naming it as the first argument of option(,
  // choice(, flag(, add_flag( or set_help_flag( (the harness's and the lessons' flags), or as a
  // kind setting's `.flag =` (nn/attention/); in the order of the files, then of their lines.
  const std::vector<Declaration>& flag_declarations(const std::string& flag) const;
  // The files of the index that `file` includes with #include "...", in its order (a path is
  // looked up from the root, then beside the file).
  const std::vector<std::string>& includes(const std::string& file) const;

 private:
  void read_file(const std::string& relative);
  void resolve_includes(const std::string& file, const std::vector<std::string>& written);

  std::filesystem::path root_;
  std::vector<std::string> files_;
  std::set<std::string> file_names_;
  std::map<std::string, std::set<std::string>> code_names_;  // file -> identifiers in its code
  std::map<std::string, std::set<std::string>> literals_;    // file -> string literal contents
  std::map<std::string, std::set<std::string>> words_;       // file -> words of its string literals
  std::set<std::string> all_names_;                          // identifiers in any code, words of any literal
  std::map<std::string, std::vector<Declaration>> declarations_;
  std::map<std::string, std::vector<Declaration>> flag_declarations_;  // "--steps" -> where declared
  std::map<std::string, std::vector<std::string>> includes_;           // file -> the files it includes
  std::map<std::string, std::map<std::string, int>> first_lines_;  // file -> text -> first line
  std::vector<std::string> texts_;
};

}  // namespace ladder::docs
