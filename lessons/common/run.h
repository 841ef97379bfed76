// A lesson's run folder: metrics.csv, summary.json, the files written, and the final printout.
#pragma once

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lessons/common/cli.h"

namespace ladder::lessons {

// Rows of numbers under a header, flushed as they come (a run can be watched, or cut short).
class CsvWriter {
 public:
  CsvWriter(const std::string& path, std::vector<std::string> columns);
  void row(const std::vector<double>& values);
  void row(const std::vector<std::string>& cells);  // for tables with names in them

 private:
  std::ofstream out_;
  size_t columns_;
  std::string path_;
};

class Run {
 public:
  explicit Run(const LessonCli& cli);  // creates the output folder and starts the clock

  // The path of a file in the run folder, remembered for the final printout.
  std::string file(const std::string& name);
  // The same path, not remembered: the stem of files a helper writes and reports (plots).
  std::string path(const std::string& name) const;
  void wrote(const std::vector<std::string>& paths);  // files written by a helper (plots)
  double seconds() const;

  // summary.json: {"lesson", "seconds", "flags", "metrics"}; then prints the metrics and every
  // file written. The last thing a lesson does.
  void finish(const nlohmann::json& metrics);

 private:
  const LessonCli& cli_;
  std::string folder_;
  std::vector<std::string> written_;
  std::chrono::steady_clock::time_point start_;
};

// The main() of every lesson: runs it, and turns an exception (a ladder::Error, or one from a
// library) into a message and exit status 2, so that no input can abort the process.
int lesson_main(const std::function<void()>& body);

}  // namespace ladder::lessons
