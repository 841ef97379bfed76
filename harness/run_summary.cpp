#include "harness/run_summary.h"

#include <cmath>
#include <fstream>

#include "io/atomic_file.h"
#include "harness/divergence.h"

namespace ladder::harness {

void write_json(const std::string& path, const nlohmann::ordered_json& json) {
  io::write_atomically("run", path, {json.dump(2) + "\n"});
}

std::vector<std::filesystem::path> files_listed(const std::filesystem::path& summary) {
  namespace fs = std::filesystem;
  constexpr uintmax_t kMaxSummaryBytes = 1 << 24;
  std::error_code error;
  if (!fs::is_regular_file(summary, error) || fs::file_size(summary, error) > kMaxSummaryBytes) return {};
  std::ifstream in(summary);
  const nlohmann::json earlier = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!earlier.is_object() || !earlier.contains("files") || !earlier["files"].is_array()) return {};
  std::vector<fs::path> files;
  for (const nlohmann::json& file : earlier["files"]) {
    if (!file.is_string()) continue;
    const fs::path name = fs::path(file.get<std::string>()).lexically_normal();
    if (!name.empty() && name.is_relative() && *name.begin() != "..") files.push_back(name);
  }
  return files;
}

nlohmann::ordered_json json_number(double value) {
  if (std::isfinite(value)) return value;
  return number_name(value);
}

}  // namespace ladder::harness
