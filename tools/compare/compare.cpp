#include "compare.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "data/visible_text.h"
#include "io/atomic_file.h"
#include "io/plain_files.h"
#include "io/small_file.h"
#include "plot/plot.h"

namespace fs = std::filesystem;

namespace ladder::compare {

namespace {

bool figures_csv(const std::string& name) {
  return name.ends_with(".csv") && (name == "metrics.csv" || name.starts_with("metrics_") || name.starts_with("gpt_"));
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  return out;
}

// A cell's number when the whole cell is one, written in decimal: not "7abc", not hexadecimal
// ("0x1A", which strtod reads), not beyond a double ("1e400", which strtod makes infinite); a
// denormal such as 1e-310 is one (strtod says ERANGE for it too, but returns it).
std::optional<double> number_in(const std::string& cell) {
  if (cell.empty() || cell.find_first_of("xX") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(cell.c_str(), &end);
  if (*end != '\0' || (errno == ERANGE && std::isinf(value))) return std::nullopt;
  return value;
}

// The CSV's rows of numbers under a header that starts with "step"; none when it is another table.
// Read through the bounded reader: a named pipe or /dev/zero in a run folder is refused, not waited on.
Curves read_curves(const fs::path& path) {
  std::istringstream in(io::read_small_file("compare", path.string()));
  std::string line;
  Curves curves;
  if (!std::getline(in, line)) return curves;
  const std::vector<std::string> header = cells(line);
  if (header.empty() || header[0] != "step") return curves;
  curves.columns = header;
  while (std::getline(in, line)) {
    const std::vector<std::string> row = cells(line);
    if (row.size() != header.size()) continue;
    std::vector<double> values;
    for (const std::string& cell : row) {
      const std::optional<double> value = number_in(cell);
      if (!value) break;  // a name, or no number: no curve's point
      values.push_back(*value);
    }
    if (values.size() == row.size()) curves.rows.push_back(values);
  }
  return curves;
}

std::string value_text(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    std::ostringstream out;
    out.precision(5);
    out << value.get<double>();
    return out.str();
  }
  return value.dump();
}

// Text from a run (a folder's name, a flag's value, a metric's or a column's name) as Markdown that
// shows it and does nothing else: the marks that open HTML, a link, an image, math, code, emphasis
// or a table cell backslash-escaped (names keep their _: inside a word it is no emphasis), and a
// control character written out (\r).
std::string markdown_text(const std::string& text) {
  std::string out;
  for (const char c : data::visible(text)) {
    if (std::string_view("\\`*~[]()<>!|$&#").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// A plot's file name from a CSV's and a column's names: letters, digits, - and _ kept, anything
// else (a slash, a dot, a quote) becomes _, so the file is always written inside the output folder.
std::string file_stem(const std::string& text) {
  std::string out;
  for (const char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return out;
}

// A lesson's name as a lesson writes it in summary.json: two digits, _, lowercase letters, digits and _.
bool lesson_name(const nlohmann::json& lesson) {
  static const std::regex form("[0-9][0-9]_[a-z0-9_]+");
  return lesson.is_string() && std::regex_match(lesson.get<std::string>(), form);
}

// A folder as given, "runs/03_mlp/" being the folder runs/03_mlp.
fs::path folder_path(const std::string& folder) {
  const fs::path path = fs::path(folder).lexically_normal();
  return path.filename().empty() ? path.parent_path() : path;
}

// Where a folder is, "." and ".." and links resolved: its name and the folder beside it are those
// of this path, not of the words given ("." has no name of its own).
fs::path resolved(const fs::path& folder) {
  std::error_code error;
  const fs::path path = fs::weakly_canonical(fs::absolute(folder), error);
  return error ? folder : path;
}

// Flags that name where a run went, not what it did.
bool where_flag(const std::string& flag) { return flag == "out" || flag == "resume" || flag == "stop-after"; }

}  // namespace

std::vector<RunFolder> read_runs(const std::vector<std::string>& folders) {
  if (folders.size() < 2) fail("compare", "give two or more run folders (runs/NN_name/ of one lesson), got ", folders.size());
  std::vector<RunFolder> runs;
  for (const std::string& folder : folders) {
    const fs::path path = folder_path(folder);
    if (!fs::is_directory(path)) fail("compare", folder, " is not a folder");
    RunFolder run{path, resolved(path).filename().string(), {}, {}};
    const fs::path summary = run.path / "summary.json";
    std::error_code error;
    if (!fs::exists(fs::symlink_status(summary, error)))
      fail("compare", folder, " is not a run: it has no summary.json (a lesson writes one into its --out folder)");
    run.summary = nlohmann::json::parse(io::read_small_file("compare", summary.string()), nullptr, /*allow_exceptions=*/false);
    if (run.summary.is_discarded()) fail("compare", summary.string(), " is not the JSON a lesson writes");
    if (!run.summary.is_object() || !run.summary.contains("lesson")) fail("compare", summary.string(), " names no lesson: ", folder, " is not a run");
    if (!lesson_name(run.summary["lesson"]))
      fail("compare", summary.string(), " names the lesson '", data::visible(value_text(run.summary["lesson"])),
           "', which is no lesson's name (NN_name): ", folder, " is not a lesson's run");
    if (!runs.empty() && run.summary["lesson"] != runs.front().summary["lesson"])
      fail("compare", "runs of different lessons: ", runs.front().path.string(), " is lesson ", value_text(runs.front().summary["lesson"]), ", ",
           folder, " is lesson ", value_text(run.summary["lesson"]), "; compare runs of one lesson");
    for (const auto& entry : fs::directory_iterator(run.path)) {
      const std::string name = entry.path().filename().string();
      if (!figures_csv(name)) continue;
      Curves curves = read_curves(entry.path());
      if (!curves.rows.empty()) run.csvs[name] = std::move(curves);
    }
    if (run.csvs.empty()) fail("compare", folder, " has no metrics: no metrics.csv (or metrics_*.csv, gpt_*.csv) with rows of figures against the step");
    runs.push_back(std::move(run));
  }
  std::map<std::string, int> seen;
  for (const RunFolder& run : runs) ++seen[run.label];
  for (RunFolder& run : runs)
    if (seen[run.label] > 1) run.label = run.path.string();
  return runs;
}

fs::path default_output(const std::vector<RunFolder>& runs) {
  return resolved(runs.front().path).parent_path() / ("compare_" + value_text(runs.front().summary["lesson"]));
}

std::string write_comparison(const std::vector<RunFolder>& runs, const fs::path& out_given) {
  const fs::path out = folder_path(out_given.string());
  std::error_code error;
  if (fs::is_symlink(fs::symlink_status(out, error)))
    fail("compare", out.string(), " is a link: compare writes into a folder of its own, never through a link (remove the link, or give --out another folder)");
  fs::create_directories(out);
  const std::string lesson = value_text(runs.front().summary["lesson"]);
  // The table: the flags (those that differ marked), then the metrics, a column per run. Each row
  // is its cells and whether it is marked; it is written for the terminal and for Markdown.
  struct Row {
    std::vector<std::string> cells;
    bool marked;
  };
  std::vector<Row> rows;
  // A row of the table from each summary's `section` ("": its top level); `only` 1: only if the
  // runs differ, 0: only if they agree, -1: either way.
  const auto row = [&](const std::string& name, const std::string& section, bool mark_differences, int only = -1) {
    std::vector<std::string> values;
    for (const RunFolder& run : runs) {
      const nlohmann::json part = section.empty() ? run.summary : run.summary.value(section, nlohmann::json::object());
      values.push_back(value_text(part.is_object() ? part.value(name, nlohmann::json()) : nlohmann::json()));
    }
    const bool differs = std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) != values.end();
    if (only != -1 && differs != (only == 1)) return;
    Row r{{(section == "flags" ? "--" : "") + name}, mark_differences && differs};
    r.cells.insert(r.cells.end(), values.begin(), values.end());
    rows.push_back(r);
  };
  std::set<std::string> flags, metrics;
  std::vector<std::string> metric_order;
  for (const RunFolder& run : runs) {
    const nlohmann::json run_flags = run.summary.value("flags", nlohmann::json::object());
    const nlohmann::json run_metrics = run.summary.value("metrics", nlohmann::json::object());
    for (const auto& [name, value] : run_flags.items())
      if (!where_flag(name)) flags.insert(name);
    for (const auto& [name, value] : run_metrics.items())
      if (metrics.insert(name).second) metric_order.push_back(name);
  }
  row("status", "", true);  // a run that failed or was interrupted compares as such, marked
  for (const int differing : {1, 0})  // the flags that differ first
    for (const std::string& flag : flags) row(flag, "flags", true, differing);
  for (const std::string& metric : metric_order) row(metric, "metrics", false);
  const auto written = [&](const std::function<std::string(const std::string&)>& text) {
    std::string table = "| |";
    for (const RunFolder& run : runs) table += " " + text(run.label) + " |";
    table += "\n|---|";
    for (size_t i = 0; i < runs.size(); ++i) table += "---|";
    table += "\n";
    for (const Row& r : rows) {
      table += r.marked ? "| **" + text(r.cells[0]) + "** (differs) |" : "| " + text(r.cells[0]) + " |";
      for (size_t i = 1; i < r.cells.size(); ++i) table += r.marked ? " **" + text(r.cells[i]) + "** |" : " " + text(r.cells[i]) + " |";
      table += "\n";
    }
    return table;
  };
  const std::string terminal_table = written([](const std::string& text) { return data::visible(text); });

  std::string markdown = "# Lesson " + lesson + ": " + std::to_string(runs.size()) + " runs compared\n\n";
  for (const RunFolder& run : runs) markdown += "- " + markdown_text(run.label) + ": " + markdown_text(run.path.string()) + "\n";
  markdown += "\nThe flags that differ are marked; then each run's final figures (summary.json).\n\n" + written(markdown_text) + "\n";
  // A plot per figure of each CSV, a curve per run that has it.
  struct Plot {
    std::string stem;
    plot::LineChart chart;
  };
  std::vector<Plot> plots;
  std::set<std::string> csv_names;
  for (const RunFolder& run : runs)
    for (const auto& [name, curves] : run.csvs) csv_names.insert(name);
  for (const std::string& csv : csv_names) {
    std::vector<std::string> columns;
    for (const RunFolder& run : runs)
      if (run.csvs.count(csv))
        for (const std::string& column : run.csvs.at(csv).columns)
          if (column != "step" && std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
    markdown += "## " + markdown_text(csv) + "\n\n";
    for (const std::string& column : columns) {
      plot::LineChart chart{lesson + ": " + column + " (" + csv + ")", "step", column, {}, column.find("ppl") != std::string::npos};
      for (const RunFolder& run : runs) {
        if (!run.csvs.count(csv)) continue;
        const Curves& curves = run.csvs.at(csv);
        const size_t at = static_cast<size_t>(std::find(curves.columns.begin(), curves.columns.end(), column) - curves.columns.begin());
        if (at == curves.columns.size()) continue;
        plot::Series series{run.label, {}, {}};
        for (const std::vector<double>& r : curves.rows) series.x.push_back(r[0]), series.y.push_back(r[at]);
        chart.series.push_back(series);
      }
      plots.push_back({file_stem(fs::path(csv).stem().string() + "_" + column), chart});
      markdown += "![" + markdown_text(column) + "](" + plots.back().stem + ".png)\n\n";
    }
  }
  // Written through no link: whatever stands at a name compare writes and is not a file goes first
  // (the link itself, never what it points at), as in a run's folder.
  std::vector<fs::path> files = {out / "comparison.md"};
  for (const Plot& p : plots) files.insert(files.end(), {out / (p.stem + ".png"), out / (p.stem + ".svg")});
  if (const std::string removed = io::remove_not_files(files); !removed.empty())
    std::printf("compare: removed from %s what compare never writes, and would have written through: %s\n", out.string().c_str(),
                data::visible(removed).c_str());
  for (const Plot& p : plots) plot::save_line_chart((out / p.stem).string(), p.chart);  // a failed write throws, naming the file
  io::write_atomically("compare", (out / "comparison.md").string(), {markdown});
  return terminal_table;
}

}  // namespace ladder::compare
