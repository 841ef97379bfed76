#include "harness/csv_writer.h"

#include <iomanip>
#include <sstream>

#include "core/error.h"
#include "data/visible_text.h"

namespace ladder::harness {

CsvWriter::CsvWriter(const std::string& path, std::vector<std::string> columns)
    : out_(path), columns_(columns.size()), path_(path) {
  if (!out_) fail("CsvWriter", "cannot write ", path);
  for (const std::string& c : columns)
    if (c.find_first_of(",\"\n") != std::string::npos) fail("CsvWriter", path, ": column name '", data::visible(c), "' has a comma, quote or newline");
  for (size_t i = 0; i < columns.size(); ++i) out_ << (i ? "," : "") << columns[i];
  out_ << "\n";
  out_.flush();
  if (!out_) fail("CsvWriter", path_, ": its header could not be written (is the disk full?)");
}

void CsvWriter::row(const std::vector<double>& values) {
  row_with_gaps(std::vector<std::optional<double>>(values.begin(), values.end()));
}

void CsvWriter::row_with_gaps(const std::vector<std::optional<double>>& values) {
  std::vector<std::string> cells;
  for (const std::optional<double>& v : values) {
    std::ostringstream cell;
    if (v) cell << std::setprecision(8) << *v;
    cells.push_back(cell.str());
  }
  row(cells);
}

void CsvWriter::row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_) fail("CsvWriter", path_, ": ", cells.size(), " values for ", columns_, " columns");
  for (const std::string& c : cells)
    if (c.find_first_of(",\"\n") != std::string::npos) fail("CsvWriter", path_, ": cell '", data::visible(c), "' has a comma, quote or newline");
  for (size_t i = 0; i < cells.size(); ++i) out_ << (i ? "," : "") << cells[i];
  out_ << "\n";
  out_.flush();
  if (!out_) fail("CsvWriter", path_, ": a row could not be written (is the disk full?)");
}

}  // namespace ladder::harness
