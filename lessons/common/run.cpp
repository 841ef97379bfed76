#include "lessons/common/run.h"

#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "core/error.h"

namespace ladder::lessons {

CsvWriter::CsvWriter(const std::string& path, std::vector<std::string> columns)
    : out_(path), columns_(columns.size()), path_(path) {
  if (!out_) fail("CsvWriter", "cannot write ", path);
  for (const std::string& c : columns)
    if (c.find_first_of(",\"\n") != std::string::npos) fail("CsvWriter", path, ": column name '", c, "' has a comma, quote or newline");
  for (size_t i = 0; i < columns.size(); ++i) out_ << (i ? "," : "") << columns[i];
  out_ << "\n";
  out_.flush();
}

void CsvWriter::row(const std::vector<double>& values) {
  std::vector<std::string> cells;
  for (double v : values) {
    std::ostringstream cell;
    cell << std::setprecision(8) << v;
    cells.push_back(cell.str());
  }
  row(cells);
}

void CsvWriter::row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_) fail("CsvWriter", path_, ": ", cells.size(), " values for ", columns_, " columns");
  for (const std::string& c : cells)
    if (c.find_first_of(",\"\n") != std::string::npos) fail("CsvWriter", path_, ": cell '", c, "' has a comma, quote or newline");
  for (size_t i = 0; i < cells.size(); ++i) out_ << (i ? "," : "") << cells[i];
  out_ << "\n";
  out_.flush();
}

Run::Run(const LessonCli& cli) : cli_(cli), folder_(cli.common.out), start_(std::chrono::steady_clock::now()) {
  std::error_code error;
  std::filesystem::create_directories(folder_, error);
  if (error) fail("run", "cannot create the output folder ", folder_, ": ", error.message());
}

std::string Run::path(const std::string& name) const { return (std::filesystem::path(folder_) / name).string(); }

std::string Run::file(const std::string& name) {
  const std::string p = path(name);
  wrote({p});
  return p;
}

void Run::wrote(const std::vector<std::string>& paths) {
  for (const std::string& p : paths)
    if (std::find(written_.begin(), written_.end(), p) == written_.end()) written_.push_back(p);
}

double Run::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Run::finish(const nlohmann::json& metrics) {
  const nlohmann::json summary = {
      {"lesson", cli_.lesson()}, {"seconds", seconds()}, {"flags", cli_.flags_json()}, {"metrics", metrics}};
  const std::string path = file("summary.json");
  std::ofstream(path) << summary.dump(2) << "\n";
  std::printf("\n== %s done in %.1f s ==\n", cli_.lesson().c_str(), seconds());
  for (const auto& [name, value] : metrics.items()) std::printf("  %-16s %s\n", name.c_str(), value.dump().c_str());
  std::printf("files:\n");
  for (const std::string& p : written_) std::printf("  %s\n", p.c_str());
  std::fflush(stdout);
}

int lesson_main(const std::function<void()>& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {  // ladder::Error, and anything a library throws (out of memory, ...)
    std::fflush(stdout);
    std::fprintf(stderr, "\nerror: %s\n", e.what());
    return 2;
  }
}

}  // namespace ladder::lessons
