#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "book.h"
#include "core/error.h"
#include "data/visible_text.h"
#include "io/small_file.h"
#include "run_folder.h"

namespace ladder::book {

namespace {

// summary.json of a run folder, read bounded (a named pipe or a device is refused, not waited on);
// `unreadable` says why when it is not a run's summary.
nlohmann::json read_summary(const fs::path& run, std::string& unreadable) {
  try {
    nlohmann::json summary = nlohmann::json::parse(io::read_small_file("book", (run / "summary.json").string()), nullptr, false);
    if (summary.is_object()) return summary;
    unreadable = (run / "summary.json").string() + " is not a run's summary (a JSON object)";
  } catch (const Error& e) {
    unreadable = e.what();
  }
  return nlohmann::json::object();
}

// What kind of run a summary is, in words: the lesson's default run, a --quick one, one with other
// flags than the defaults its --help states (check-notes' test of a default run), or one that did not finish.
std::string label_of(const Book& book, const std::string& lesson, const nlohmann::json& summary) {
  const nlohmann::json flags = summary.value("flags", nlohmann::json::object());
  const std::string status = summary.value("status", std::string("unknown"));
  const std::string unfinished = status == "finished" ? "" : " (it did not finish: status " + status + ")";
  if (!flags.is_object()) return "your run" + unfinished + ", whose summary.json holds no flags to tell which run it is";
  if (flags.value("quick", false))
    return "your --quick run" + unfinished + ": a smoke test, its figures are not the lesson's; the default run "
           "(./ladder lesson " + lesson + ") gives those";
  const auto help = book.interface.lesson_help.find(lesson);
  std::vector<std::string> other;
  if (help != book.interface.lesson_help.end())
    other = check_notes::non_default_flags({{"flags", flags}}, help->second);
  if (other.empty()) return "your default run" + unfinished;
  std::string listed;
  for (const std::string& flag : other) listed += (listed.empty() ? "" : ", ") + flag;
  return "your run with " + listed + unfinished + ": not the default run, so the note's figures need not match it";
}

}  // namespace

ShownRun shown_run(const Book& book, const std::string& lesson) {
  const auto source = book.interface.lesson_sources.find(lesson);
  if (source == book.interface.lesson_sources.end()) return {};
  const fs::path folder = book.runs / fs::path(source->second).stem();  // runs/06_gated_rnn
  std::error_code error;
  if (!fs::exists(fs::symlink_status(folder / "summary.json", error))) return {};
  std::string unreadable;
  nlohmann::json summary = read_summary(folder, unreadable);
  std::string label = unreadable.empty() ? label_of(book, lesson, summary) : "a run folder the book cannot read";
  return {folder, std::move(label), std::move(summary), std::move(unreadable)};
}

namespace {

// A metric as the box shows it: a whole number whole (23970, never 2.397e+04), another to 4
// significant digits, and without an exponent from 10000 up (23970.4 as 23970).
std::string figure_text(const nlohmann::json& value) {
  if (!value.is_number()) return value.dump();
  const double number = value.get<double>();
  std::ostringstream out;
  if (value.is_number_integer()) {
    out << value.dump();
  } else if (std::isfinite(number) && std::fabs(number) >= 1e4 && std::fabs(number) < 1e15) {
    out << std::fixed << std::setprecision(0) << number;
  } else {
    out << std::setprecision(4) << number;
  }
  return out.str();
}

}  // namespace

std::string run_panel(const Book& book, const std::string& lesson) {
  const ShownRun run = shown_run(book, lesson);
  std::string command;
  for (const auto& [number, source] : book.interface.lesson_sources)
    if (number == lesson) command = "./ladder lesson " + number;
  if (run.folder.empty())
    return "<aside class=\"run-panel\"><h3>Your run</h3><p>No run of this lesson yet: <code>" + command +
           "</code> writes its plots and figures into " + escaped((book.runs / "").string()) +
           " (its default folder), and the book shows them here after <code>./ladder book</code>.</p></aside>\n";
  // A run folder is anyone's: one that is not a run's says so in the box instead of stopping the book.
  const nlohmann::json& summary = run.summary;
  const std::string& unreadable = run.unreadable;
  if (!unreadable.empty()) {
    std::printf("ladder_book: lesson %s's run panel: %s\n", lesson.c_str(), data::visible(unreadable).c_str());
    return "<aside class=\"run-panel\"><h3>Your run</h3><p>" + escaped(unreadable) + "</p></aside>\n";
  }
  const auto object = [&](const char* key) {
    const nlohmann::json part = summary.value(key, nlohmann::json::object());
    return part.is_object() ? part : nlohmann::json::object();
  };
  const nlohmann::json metrics = object("metrics"), run_flags = object("flags");
  std::string figures;
  for (const auto& [name, value] : metrics.items())
    figures += "<div><dt>" + escaped(name) + "</dt><dd>" + escaped(figure_text(value)) + "</dd></div>";
  std::string flags;
  for (const auto& [name, value] : run_flags.items())
    flags += (flags.empty() ? "" : " ") + ("--" + name + " " + (value.is_string() ? value.get<std::string>() : value.dump()));
  return "<aside class=\"run-panel\"><h3>Your run</h3><p class=\"run-label\">" + escaped(run.label) +
         "</p><p class=\"run-folder\">" + escaped(run.folder.string()) + "</p><dl class=\"run-figures\">" + figures +
         "</dl><details><summary>flags</summary><p>" + escaped(flags) + "</p></details></aside>\n";
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
