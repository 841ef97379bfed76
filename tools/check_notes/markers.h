// Figure markers: a note quotes a figure of its lesson's default run and says, in an HTML comment
// right after it (which the book and GitHub render as nothing), where in the run it comes from:
//
//   test accuracy 0.935<!-- run: logistic_test_acc -->, softmax 0.970<!-- run: test_acc ±0.005 -->
//   the loss reads 2.10<!-- run: metrics.csv:val_loss@last ±1% --> at the end
//   lr 0.01<!-- run: metrics.csv:lr@step=400 -->; the default run took 62 s<!-- run: seconds ±50% -->
//
// docs/architecture.md (Figures checked against the runs) states the format for note writers.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ladder::check_notes {

// Where a figure comes from in a run folder.
struct Source {
  std::string file;                                          // "" for summary.json, else a CSV: "metrics.csv"
  std::string key;                                           // a metric ("exact_match.greedy"), "seconds", "load"; or a CSV column
  std::vector<std::pair<std::string, std::string>> where;    // the CSV row: column = value for each; empty: the last row
};

// Whether `source` is what check-notes measures around a run it starts (timing.json): the wall
// time, the load or the cores, not a figure the run wrote.
inline bool measured_around_run(const Source& source) {
  return source.file.empty() && (source.key == "seconds" || source.key == "load" || source.key == "cores");
}

struct Marker {
  int line = 0;            // 1-based line of the note
  std::string figure_text; // as the note writes it: "0.935", "3.58e-07", "285k", "97%", "62 s"
  double figure = 0;       // its value: "285k" is 285000, "97%" is 0.97
  std::string key_text;    // the marker's key as written: "metrics.csv:val_loss@last"
  Source source;
  double tolerance = 0;    // the largest difference that is not drift
  bool relative = false;   // tolerance is a fraction of the run's value ("±5%")
};

// Every marker of a note's Markdown. A marker that does not follow a figure, or whose key or
// tolerance does not parse, is a problem: "docs/02_regression.md:151: ...".
struct Markers {
  std::vector<Marker> found;
  std::vector<std::string> problems;
  // What a --quick run must be given so that it writes the keys the markers name, where --quick
  // alone leaves some out: <!-- run-quick: --capacity-pairs 4,8,16,32,64 -->, one argument per
  // word. A word is a flag (--name) or a value of letters, digits and . , : / + - _ =; any other
  // word (a quote, ;, $, a space in a value) is a problem, and its line gives no argument.
  std::vector<std::string> quick_flags;
};
Markers read_markers(const std::string& note_path, const std::string& markdown);

// The tolerance a figure carries when its marker states none: half a unit of its last digit, so
// that the note's figure is the run's value rounded as written ("0.935": 0.0005; "3e-5": 5e-6).
double rounding_tolerance(const std::string& figure_text);

// Whether `value` (the run's) and the marker's figure differ by more than the tolerance.
bool drifted(const Marker& marker, double value);

}  // namespace ladder::check_notes
