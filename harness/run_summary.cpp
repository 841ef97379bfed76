#include "harness/run_summary.h"

#include <cmath>
#include <fstream>
#include <iterator>

#include "io/atomic_file.h"
#include "harness/divergence.h"
#include "harness/run_lock.h"

namespace ladder::harness {

void write_json(const std::string& path, const nlohmann::ordered_json& json) {
  io::write_atomically("run", path, {utf8_json(json).dump(2) + "\n"});
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
  for (const nlohmann::json& file : earlier["files"])
    if (file.is_string()) {
      const fs::path name = fs::path(file.get<std::string>()).lexically_normal();
      if (inside_without_links(summary.parent_path(), name)) files.push_back(name);
    }
  return files;
}

bool inside_without_links(const std::filesystem::path& folder, const std::filesystem::path& name) {
  namespace fs = std::filesystem;
  if (name.empty() || !name.is_relative() || name != name.lexically_normal() || *name.begin() == ".." ||
      name == kLockName)
    return false;
  std::error_code error;
  fs::path reached = folder;
  for (auto part = name.begin(); part != name.end(); ++part) {
    reached /= *part;
    const fs::file_status status = fs::symlink_status(reached, error);  // a link is never followed
    const bool last = std::next(part) == name.end();
    if (error || (last ? !fs::is_regular_file(status) : !fs::is_directory(status))) return false;
  }
  return true;
}

nlohmann::ordered_json json_number(double value) {
  if (std::isfinite(value)) return value;
  return number_name(value);
}

}  // namespace ladder::harness
