#include "io/plain_files.h"

namespace ladder::io {

namespace fs = std::filesystem;

std::string not_a_file(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (!fs::exists(status) || fs::is_regular_file(status) || fs::is_directory(status)) return "";
  return fs::is_symlink(status) ? "a link" : "not a regular file";
}

std::string remove_not_files(const std::vector<fs::path>& paths) {
  std::string removed;
  for (const fs::path& path : paths) {
    const std::string what = not_a_file(path);
    if (what.empty()) continue;
    std::error_code error;
    fs::remove(path, error);
    removed += (removed.empty() ? "" : ", ") + path.filename().string() + " (" + what + ")";
  }
  return removed;
}

}  // namespace ladder::io
