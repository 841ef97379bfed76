// Runs of one lesson compared (./ladder compare): each metric's curves on one plot, their
// summaries side by side with the flags that differ marked, as PNG/SVG and comparison.md (a page
// of the book).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ladder::compare {

// A CSV of figures against the step (metrics.csv, metrics_*.csv, gpt_*.csv).
struct Curves {
  std::vector<std::string> columns;          // "step" first
  std::vector<std::vector<double>> rows;
};

struct RunFolder {
  std::filesystem::path path;
  std::string label;  // its folder's name, or its path where two runs share a name
  nlohmann::json summary;
  std::map<std::string, Curves> csvs;  // by file name
};

// Reads each folder as a run; refuses, in one line (ladder::Error), a folder that is not a run (no
// summary.json), a run with no metrics (no CSV of figures against the step), and runs of
// different lessons.
std::vector<RunFolder> read_runs(const std::vector<std::string>& folders);

// The default output folder: compare_<lesson> beside the first run.
std::filesystem::path default_output(const std::vector<RunFolder>& runs);

// Writes into `out` a plot per metric (<csv stem>_<column>.png and .svg, every run's curve) and
// comparison.md (the table, then the plots); returns the table as text, for the terminal.
std::string write_comparison(const std::vector<RunFolder>& runs, const std::filesystem::path& out);

}  // namespace ladder::compare
