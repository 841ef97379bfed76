// The rules that tie a note to the code: every backticked path, name and flag must exist, and a
// name in a sentence that cites source files must be in one of them (an unqualified name may also
// be in the note's lesson). docs/architecture.md (Tests) states the rules for note writers.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
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

// Where a span points, for a reader to open: a file of the sources (or a note, docs/*.md) and a
// line in it (1-based). The book links every span to its target.
struct Target {
  std::string file;
  int line = 1;
};

struct Pointer {
  CodeSpan span;
  Target target;
};

// The one definition a reader means by `name`: its declarations all lie in one .h and its .cpp
// (the .cpp's preferred: the body); none when it has none, or several unrelated ones.
std::optional<Declaration> unique_definition(const SourceIndex& index, const std::string& name);

// What the lessons and the ladder script accept.
struct Interface {
  std::map<std::string, std::string> lesson_sources;         // "05" -> "lessons/05_rnn.cpp"
  std::map<std::string, std::set<std::string>> lesson_flags;  // "05" -> {"--steps", ...}, as --help lists them
  std::map<std::string, std::string> lesson_help;             // "05" -> its --help, whose defaults make a default run
  std::set<std::string> ladder_commands;                     // "build", "test", "lesson", ...
  std::set<std::string> bench_names;                         // "core", "cnn", ...
};

// The commands and benchmark names that `./ladder help` lists (read from the script's usage text).
void read_ladder_usage(const std::string& script, Interface& interface);
// The lessons' flags, as each built lesson (in `lesson_dir`) lists them in its --help, and the
// ./ladder commands of the script below `root`; throws std::runtime_error when a --help fails.
Interface read_interface(const std::filesystem::path& root, const std::string& lesson_dir);

// Backticked text that is neither ladder's code nor a path in it, and why it may stay: the docs
// test and the book allow the same.
const std::map<std::string, std::string>& allowed_spans();

class DocsChecker {
 public:
  // `allowed`: spans that are neither code nor paths (a file outside the repository, a name
  // from another tool), each with the reason; compared whole.
  DocsChecker(const SourceIndex& index, Interface interface, std::map<std::string, std::string> allowed);

  // Every inline code span of the note, and every `./ladder` line of its non-C++ fenced blocks.
  // `pointers`, when given, gets the target of every span that names a file, a name or a flag; a
  // name that exists but has no line to point at is a problem. A flag points at its declaration
  // in the files the lesson is built from (the note's lesson, or the one a ./ladder command runs):
  // the lesson's own first, then its folder's, its families', the harness's (the common flags).
  std::vector<Problem> check(const Note& note, std::vector<Pointer>* pointers = nullptr);
  // Allow-list entries that no span has matched so far.
  std::vector<std::string> unused_allowances() const;

 private:
  struct Context {
    std::string lesson;                 // "05" for docs/05_rnn.md, "" for other notes
    std::set<std::string> cited_files;  // source files the span's sentence names by path
    std::string where;
    std::string span;
    std::vector<Problem>& problems;
    std::optional<Target> target = {};  // set by the checks that find what the span names
    std::set<std::string> named = {};   // the cited files the sentence names itself (not their .h/.cpp pair)
  };

  void check_span(Context& c);
  void check_command(Context& c, const std::string& line);
  void check_flags(Context& c, const std::string& text);
  void check_path(Context& c, const std::string& path);
  void check_name(Context& c, const std::string& name, bool cited);
  void check_expression(Context& c, const std::string& text);
  void locate_name(Context& c, const std::string& name, const std::vector<Declaration>& matches);
  std::set<std::string> files_cited(const Note& note, int sentence) const;
  std::set<std::string> flags_of(const std::string& lesson) const;
  std::optional<Target> flag_target(const std::string& lesson, const std::string& flag) const;

  const SourceIndex& index_;
  Interface interface_;
  std::map<std::string, std::string> allowed_;
  std::set<std::string> used_allowances_;
  std::map<std::string, std::vector<std::string>> lesson_files_;  // "05" -> the files it is built from, nearest first
};

}  // namespace ladder::docs
