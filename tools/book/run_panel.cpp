#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "book.h"
#include "core/error.h"
#include "data/visible_text.h"
#include "io/small_file.h"

namespace ladder::book {

fs::path latest_run(const Book& book, const std::string& lesson) {
  fs::path latest;
  fs::file_time_type newest{};
  if (!fs::is_directory(book.runs)) return latest;
  for (const auto& entry : fs::directory_iterator(book.runs)) {
    const std::string name = entry.path().filename().string();
    const fs::path summary = entry.path() / "summary.json";
    if (!name.starts_with(lesson + "_") || !fs::exists(summary)) continue;
    if (latest.empty() || fs::last_write_time(summary) > newest) latest = entry.path(), newest = fs::last_write_time(summary);
  }
  return latest;
}

namespace {

// A metric as the box shows it: 4 significant digits.
std::string figure_text(const nlohmann::json& value) {
  if (!value.is_number()) return value.dump();
  std::ostringstream out;
  out.precision(4);
  out << value.get<double>();
  return out.str();
}

}  // namespace

std::string run_panel(const Book& book, const std::string& lesson) {
  const fs::path run = latest_run(book, lesson);
  std::string command;
  for (const auto& [number, source] : book.interface.lesson_sources)
    if (number == lesson) command = "./ladder lesson " + number;
  if (run.empty())
    return "<aside class=\"run-panel\"><h3>Your run</h3><p>No run of this lesson yet: <code>" + command +
           "</code> (or with <code>--quick</code>) writes its plots and figures into runs/, and the book shows them here "
           "after <code>./ladder book</code>.</p></aside>\n";
  // A run folder is anyone's: its summary is read bounded (a named pipe or a device is refused, not
  // waited on), and one that is not a run's says so in the box instead of stopping the book.
  nlohmann::json summary;
  std::string unreadable;
  try {
    summary = nlohmann::json::parse(io::read_small_file("book", (run / "summary.json").string()), nullptr, false);
    if (!summary.is_object()) unreadable = (run / "summary.json").string() + " is not a run's summary (a JSON object)";
  } catch (const Error& e) {
    unreadable = e.what();
  }
  if (!unreadable.empty()) {
    std::printf("ladder_book: lesson %s's run panel: %s\n", lesson.c_str(), data::visible(unreadable).c_str());
    return "<aside class=\"run-panel\"><h3>Your run</h3><p>" + escaped(unreadable) + "</p></aside>\n";
  }
  const auto object = [&](const char* key) {
    const nlohmann::json part = summary.value(key, nlohmann::json::object());
    return part.is_object() ? part : nlohmann::json::object();
  };
  const nlohmann::json metrics = object("metrics"), run_flags = object("flags");
  std::string rows;
  for (const auto& [name, value] : metrics.items())
    rows += "<tr><td>" + escaped(name) + "</td><td>" + escaped(figure_text(value)) + "</td></tr>";
  std::string flags;
  for (const auto& [name, value] : run_flags.items())
    flags += (flags.empty() ? "" : " ") + ("--" + name + " " + (value.is_string() ? value.get<std::string>() : value.dump()));
  return "<aside class=\"run-panel\"><h3>Your run</h3><p class=\"run-folder\">" + escaped(run.string()) + "</p><table>" + rows +
         "</table><details><summary>flags</summary><p>" + escaped(flags) + "</p></details></aside>\n";
}

std::string page(const std::string& title, const std::string& nav, const std::string& body) {
  return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escaped(title) +
         "</title>\n<link rel=\"stylesheet\" href=\"assets/katex/katex.min.css\">\n"
         "<link rel=\"stylesheet\" href=\"assets/highlight/github.css\">\n<link rel=\"stylesheet\" href=\"assets/book.css\">\n"
         "</head><body>\n<nav>" + nav + "</nav>\n<div id=\"desk\"><main id=\"note\">\n" + body +
         "</main>\n<section id=\"code-pane\"><div id=\"code-head\"><span id=\"code-path\">code</span></div>"
         "<div id=\"code-body\"><p class=\"hint\">Click a name in the text to open its code here.</p></div></section></div>\n"
         "<script src=\"assets/katex/katex.min.js\"></script>\n<script src=\"assets/highlight/highlight.min.js\"></script>\n"
         "<script src=\"assets/book.js\"></script>\n</body></html>\n";
}

}  // namespace ladder::book
