// metrics.csv and every other table a lesson writes: rows of numbers (or names) under a header.
#pragma once

#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace ladder::harness {

// Rows of numbers under a header, flushed as they come (a run can be watched, or cut short).
class CsvWriter {
 public:
  CsvWriter(const std::string& path, std::vector<std::string> columns);
  void row(const std::vector<double>& values);
  void row(const std::vector<std::string>& cells);  // for tables with names in them
  void row_with_gaps(const std::vector<std::optional<double>>& values);  // an empty cell where a value is missing

 private:
  std::ofstream out_;
  size_t columns_;
  std::string path_;
};

}  // namespace ladder::harness
