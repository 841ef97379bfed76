// The book: every note of docs/ as a page, its code pointers opening the code beside the text,
// its plots from the learner's own run; built by ladder_book (main.cpp) into build/book/.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "docs/rules.h"
#include "docs/source_index.h"

namespace ladder::book {

namespace fs = std::filesystem;

struct Book {
  fs::path root;  // the repository
  fs::path runs;  // the learner's runs (runs/NN_name/)
  fs::path out;   // build/book
  const docs::SourceIndex& index;
  const docs::Interface& interface;
};

// A page's file name in the book: docs/06_gated_rnn.md -> 06_gated_rnn.html, README.md -> index.html.
std::string page_of(const std::string& note_path);

// A note rendered as the body of its page: Markdown by md4c, math as <x-equation> for KaTeX, each
// pointer a link that opens its code (#code=FILE:LINE), each plot it names shown from the
// learner's run of its lesson (shown_run). `pointers` are the note's, from the resolver.
// The project's notes may hold HTML (comments, markers); Markdown a run folder holds
// (comparison.md) is anyone's, so any HTML in it shows as text.
enum class Author { project, run_folder };
std::string note_body(const Book& book, const std::string& note_path, const std::string& markdown,
                      const std::vector<docs::Pointer>& pointers, Author author = Author::project);

// The run of a lesson ("06") the book shows: the folder the lesson writes by default,
// runs/06_gated_rnn/ (the --runs folder's), with what kind of run it holds in words.
struct ShownRun {
  fs::path folder;    // empty when it holds no run
  std::string label;  // "your default run", "your --quick run: a smoke test, ...", "your run with --cell rnn ..."
  nlohmann::json summary;   // its summary.json, an object
  std::string unreadable;   // why summary.json is no run's summary; empty when it is
};
ShownRun shown_run(const Book& book, const std::string& lesson);
// The box beside a lesson's note: the run's figures from summary.json, or the command that makes them.
std::string run_panel(const Book& book, const std::string& lesson);

// A whole page around a body: the text, the code pane, KaTeX and highlight.js.
std::string page(const std::string& title, const std::string& nav, const std::string& body);

// build/book/code/FILE.js for every file of the index: its text, each name with one definition a
// link to it, for the code pane to show.
void write_code_files(const Book& book);

// The HTML text of `text`, escaped.
std::string escaped(const std::string& text);
// `path` as the address in an src or href attribute: every byte but letters, digits, - . _ ~ and
// / percent-encoded, so that a folder's name (a quote, a $, a space) stays one path; escape it too.
std::string url_path(const std::string& path);
// Whether `path` is a regular file and not a symbolic link: the book copies nothing a link points at.
bool plain_file(const std::filesystem::path& path);

}  // namespace ladder::book
