// What the lesson smoke tests check in a finished run: its files, the columns of its CSVs, the
// end of its printout; and input files written for a test.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "lessons/lesson_runner.h"

namespace ladder::testing {

namespace fs = std::filesystem;

inline void check_files(const fs::path& folder, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    CHECK_MESSAGE(fs::exists(folder / name), "missing ", (folder / name).string());
    if (fs::exists(folder / name)) CHECK_MESSAGE(fs::file_size(folder / name) > 0, "empty ", (folder / name).string());
  }
}

// The rows of metrics.csv as maps from column to text.
inline std::vector<std::map<std::string, std::string>> rows(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream head(line);
  for (std::string cell; std::getline(head, cell, ',');) header.push_back(cell);
  std::vector<std::map<std::string, std::string>> out;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::map<std::string, std::string> cells;
    for (const std::string& name : header) std::getline(row, cells[name], ',');
    out.push_back(cells);
  }
  return out;
}

// The values of one column of metrics.csv.
inline std::vector<double> column(const fs::path& csv, const std::string& name) {
  std::vector<double> values;
  for (const auto& row : rows(csv)) {
    REQUIRE(row.count(name));
    values.push_back(std::stod(row.at(name)));
  }
  return values;
}

// The end of a run's printout: each metric of summary.json on its line, names aligned, numbers
// rounded (at most 4 decimals) yet within rounding of the file's full precision; each of `notes`
// on its metric's line (what an accuracy is of); then the files, and the note to read next.
inline void check_ending(const std::string& output, const fs::path& folder, const std::map<std::string, std::string>& notes) {
  const nlohmann::json summary = summary_of(folder);
  const nlohmann::json& metrics = summary["metrics"];
  const std::string lesson = summary["lesson"];
  const size_t start = output.find("== " + lesson + " done in");
  REQUIRE(start != std::string::npos);
  size_t width = 0;
  for (const auto& [name, value] : metrics.items()) width = std::max(width, name.size());
  std::stringstream ending(output.substr(start));
  std::string line;
  std::getline(ending, line);  // the header
  std::map<std::string, std::string> lines;
  while (std::getline(ending, line) && line != "files:") {
    INFO(line);
    REQUIRE(line.size() > width + 4);
    const std::string name = line.substr(2, line.find_last_not_of(' ', width + 1) - 1);
    REQUIRE(metrics.contains(name));
    CHECK(line.substr(width + 2, 2) == "  ");
    CHECK(line[width + 4] != ' ');  // every value starts in the same column
    lines[name] = line;
    if (!metrics[name].is_number_float()) continue;
    const std::string value = line.substr(width + 4, line.find(' ', width + 4) - width - 4);
    const double printed = std::stod(value), exact = metrics[name].get<double>();
    const size_t point = value.find('.'), exponent = std::min(value.find('e'), value.size());
    REQUIRE(point != std::string::npos);
    CHECK(exponent - point - 1 <= 4);  // decimals
    // half a unit of the last digit printed, and a hair more: a value exactly on a tie (0.06025) may round either way
    CHECK(std::fabs(printed - exact) <= std::max(5e-5, 5e-4 * std::fabs(exact)) * (1 + 1e-9));
  }
  CHECK(lines.size() == metrics.size());
  for (const auto& [name, note] : notes) CHECK_MESSAGE(lines[name].find(note) != std::string::npos, name, " lacks '", note, "'");
  CHECK(output.find("\nnext: docs/" + lesson + ".md", start) != std::string::npos);
}

inline std::string write_file(const std::string& name, const std::string& content) {
  const fs::path path = fs::temp_directory_path() / ("ladder_lesson_input_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

}  // namespace ladder::testing
