// The rules that tie a note to the code: every backticked path, name and flag must exist, and a
// name in a sentence that cites source files must be in one of them (an unqualified name may also
// be in the note's lesson). docs/architecture.md (Tests) states the rules for note writers.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "docs/markdown.h"
#include "docs/source_index.h"

namespace ladder::docs {

struct Problem {
  std::string where;  // "docs/05_rnn.md:31"
  std::string span;   // the backticked text, or the command line of a fenced block
  std::string why;
};

// What the lessons and the ladder script accept.
struct Interface {
  std::map<std::string, std::string> lesson_sources;         // "05" -> "lessons/05_rnn.cpp"
  std::map<std::string, std::set<std::string>> lesson_flags;  // "05" -> {"--steps", ...}, as --help lists them
  std::set<std::string> ladder_commands;                     // "build", "test", "lesson", ...
  std::set<std::string> bench_names;                         // "core", "cnn", ...
};

// The commands and benchmark names that `./ladder help` lists (read from the script's usage text).
void read_ladder_usage(const std::string& script, Interface& interface);

class DocsChecker {
 public:
  // `allowed`: spans that are neither code nor paths (a file outside the repository, a name
  // from another tool), each with the reason; compared whole.
  DocsChecker(const SourceIndex& index, Interface interface, std::map<std::string, std::string> allowed);

  // Every inline code span of the note, and every `./ladder` line of its non-C++ fenced blocks.
  std::vector<Problem> check(const Note& note);
  // Allow-list entries that no span has matched so far.
  std::vector<std::string> unused_allowances() const;

 private:
  struct Context {
    std::string lesson;                 // "05" for docs/05_rnn.md, "" for other notes
    std::set<std::string> cited_files;  // source files the span's sentence names by path
    std::string where;
    std::string span;
    std::vector<Problem>& problems;
  };

  void check_span(Context& c);
  void check_command(Context& c, const std::string& line);
  void check_flags(Context& c, const std::string& text);
  void check_path(Context& c, const std::string& path);
  void check_name(Context& c, const std::string& name, bool cited);
  void check_expression(Context& c, const std::string& text);
  std::set<std::string> files_cited(const Note& note, int sentence) const;
  std::set<std::string> flags_of(const std::string& lesson) const;

  const SourceIndex& index_;
  Interface interface_;
  std::map<std::string, std::string> allowed_;
  std::set<std::string> used_allowances_;
};

}  // namespace ladder::docs
