// ladder_book: builds the book (./ladder book): every note beside its code and the learner's runs.
//   ladder_book --root REPO --lessons BUILD/lessons [--runs REPO/runs] [--out BUILD/book]
// A code pointer that does not resolve stops the build, naming it (the docs test fails on it too).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "book.h"
#include "core/error.h"
#include "data/visible_text.h"
#include "docs/markdown.h"
#include "io/small_file.h"
#include "note_regions.h"

using namespace ladder;
using namespace ladder::book;

namespace {

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// KaTeX and highlight.js from Debian's packages, and the book's own script and style: the book
// opens from the file system, offline.
void copy_assets(const Book& book) {
  const fs::path assets = book.out / "assets";
  const fs::path katex = "/usr/share/javascript/katex", highlight = "/usr/share/javascript/highlight.js";
  for (const fs::path& needed : {katex / "katex.min.js", highlight / "highlight.min.js"})
    if (!fs::exists(needed)) throw std::runtime_error(needed.string() + " is missing: ./ladder setup installs libjs-katex and libjs-highlight.js");
  fs::create_directories(assets / "highlight");
  fs::copy(katex, assets / "katex", fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  fs::copy_file(highlight / "highlight.min.js", assets / "highlight" / "highlight.min.js", fs::copy_options::overwrite_existing);
  fs::copy_file(highlight / "styles" / "github.css", assets / "highlight" / "github.css", fs::copy_options::overwrite_existing);
  for (const char* own : {"book.js", "book.css"})
    fs::copy_file(book.root / "tools" / "book" / "assets" / own, assets / own, fs::copy_options::overwrite_existing);
}

std::string title_of(const std::string& markdown) {
  const size_t hash = markdown.find("# ");
  if (hash == std::string::npos) return "ladder";
  return markdown.substr(hash + 2, markdown.find('\n', hash) - hash - 2);
}

// `box` below the page's title, across the text: floated beside it, the run's box split the title
// in two and squeezed the commands below it.
std::string under_title(const std::string& body, const std::string& box) {
  const size_t title_end = body.find("</h1>");
  if (title_end == std::string::npos) return box + body;
  return body.substr(0, title_end + 5) + "\n" + box + body.substr(title_end + 5);
}

// The comparisons `./ladder compare` wrote (a folder of runs/ with comparison.md): a page each.
std::vector<std::pair<std::string, std::string>> comparison_pages(const Book& book, const std::string& nav) {
  std::vector<std::pair<std::string, std::string>> pages;  // page, title
  std::error_code error;  // a link loop or an unreadable entry is no comparison, never the end of the book
  if (!fs::is_directory(book.runs, error)) return pages;
  for (const auto& entry : fs::directory_iterator(book.runs, error)) {
    const fs::path markdown = entry.path() / "comparison.md";
    if (!fs::exists(fs::symlink_status(markdown, error))) continue;
    std::string text;
    try {  // bounded: a comparison.md that is a named pipe or a device is skipped, not waited on
      text = io::read_small_file("book", markdown.string());
    } catch (const ladder::Error& e) {
      std::printf("ladder_book: skipped %s\n", ladder::data::visible(e.what()).c_str());
      continue;
    }
    const std::string folder = entry.path().filename().string();
    fs::create_directories(book.out / "runs" / folder);
    for (const auto& file : fs::directory_iterator(entry.path(), error))
      if ((file.path().extension() == ".png" || file.path().extension() == ".svg") && plain_file(file.path()))
        fs::copy_file(file.path(), book.out / "runs" / folder / file.path().filename(), fs::copy_options::overwrite_existing);
    std::string body = note_body(book, "runs/" + folder + "/comparison.md", text, {}, Author::run_folder);
    // The plots' addresses, beside the copies; url_path leaves no $ or quote for the replacement to read.
    body = std::regex_replace(body, std::regex(R"re(src="([^"/]+)")re"), "src=\"" + escaped(url_path("runs/" + folder)) + "/$1\"");
    const std::string name = (folder.starts_with("compare_") ? folder : "compare_" + folder) + ".html";
    write(book.out / name, page(title_of(text), nav, body));
    pages.emplace_back(name, title_of(text));
  }
  std::sort(pages.begin(), pages.end());
  return pages;
}

int build(int argc, char** argv) {
  std::map<std::string, std::string> args = {{"--root", "."}, {"--lessons", "build/lessons"}, {"--runs", ""}, {"--out", ""}};
  for (int i = 1; i < argc; i += 2) {
    if (!args.count(argv[i]) || i + 1 >= argc) {
      std::fprintf(stderr, "usage: ladder_book --root REPO --lessons BUILD/lessons [--runs REPO/runs] [--out BUILD/book]\n");
      return 2;
    }
    args[argv[i]] = argv[i + 1];
  }
  const fs::path root = fs::absolute(args["--root"]);
  const docs::SourceIndex index(root, {"tests/docs"});  // as the docs test reads the sources
  const docs::Interface interface = docs::read_interface(root, args["--lessons"]);
  const Book book{root, args["--runs"].empty() ? root / "runs" : fs::absolute(args["--runs"]),
                  args["--out"].empty() ? root / "build" / "book" : fs::absolute(args["--out"]), index, interface};

  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(root / "docs"))
    if (entry.path().extension() == ".md") paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  docs::DocsChecker checker(index, interface, docs::allowed_spans());
  std::vector<std::pair<docs::Note, std::vector<docs::Pointer>>> notes;
  size_t problems = 0;
  for (const fs::path& path : [&] { auto all = paths; all.insert(all.begin(), root / "README.md"); return all; }()) {
    const std::string relative = fs::relative(path, root).generic_string();
    std::vector<docs::Pointer> pointers;
    docs::Note note = docs::parse_note(relative, read(path));
    for (const docs::Problem& p : checker.check(note, &pointers)) {
      std::fprintf(stderr, "%s: `%s`: %s\n", p.where.c_str(), p.span.c_str(), p.why.c_str());
      ++problems;
    }
    notes.emplace_back(std::move(note), std::move(pointers));
  }
  if (problems > 0) {
    std::fprintf(stderr, "ladder_book: %zu code pointers do not resolve (the docs test fails on them too): the book is not built\n", problems);
    return 2;
  }

  fs::create_directories(book.out);
  copy_assets(book);
  std::string nav = "<a href=\"index.html\">ladder</a>";
  const auto comparisons = comparison_pages(book, nav);
  for (size_t i = 0; i < notes.size(); ++i) {
    const auto& [note, pointers] = notes[i];
    const std::string text = read(root / note.path);
    std::string links = nav;
    if (i > 1) links += " · <a href=\"" + page_of(notes[i - 1].first.path) + "\">previous</a>";
    if (i > 0 && i + 1 < notes.size()) links += " · <a href=\"" + page_of(notes[i + 1].first.path) + "\">next</a>";
    if (i == 0 && notes.size() > 1) links += " · <a href=\"" + page_of(notes[1].first.path) + "\">first note</a>";
    // A note's exercises get their regions, folded under their items (tools/exercise/note_regions.h).
    std::string body = note_body(book, note.path, exercise::with_regions({.root = root}, text), pointers);
    const std::string stem = fs::path(note.path).stem().string();
    if (stem.size() > 2 && std::isdigit(static_cast<unsigned char>(stem[0])) && interface.lesson_sources.count(stem.substr(0, 2)))
      body = under_title(body, run_panel(book, stem.substr(0, 2)));
    if (note.path == "README.md" && !comparisons.empty()) {
      body += "<h2>Your comparisons</h2>\n<ul>\n";
      for (const auto& [name, title] : comparisons)
        body += "<li><a href=\"" + escaped(url_path(name)) + "\">" + escaped(title) + "</a></li>\n";
      body += "</ul>\n";
    }
    write(book.out / page_of(note.path), page(title_of(text), links, body));
  }
  write_code_files(book);
  std::printf("ladder_book: %zu pages and the code of %zu files in %s; open %s\n", notes.size() + comparisons.size(), index.files().size(),
              book.out.string().c_str(), (book.out / "index.html").string().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return build(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ladder_book: %s\n", e.what());
    return 2;
  }
}
