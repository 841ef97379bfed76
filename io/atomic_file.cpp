#include "io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace ladder::io {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTempMark = ".tmp-";

// The pid in ".<target>.tmp-<pid>", the name of a temporary file that a save of `target` or of
// another checkpoint writes; 0 when `name` is not one (other files are never touched).
pid_t temp_owner(const std::string& name, const std::string& target) {
  const size_t mark = name.rfind(kTempMark);
  if (name.empty() || name[0] != '.' || mark == std::string::npos || mark < 2) return 0;
  const std::string of = name.substr(1, mark - 1), digits = name.substr(mark + kTempMark.size());
  if (of != target && !of.ends_with(".safetensors")) return 0;
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return static_cast<pid_t>(std::stol(digits));
}

bool process_alive(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno == EPERM;  // EPERM: alive, but another user's
}

// Removes the temporary files of saves that were killed before their rename. A live process's
// file may be a save in progress and stays. Failures are ignored: this is housekeeping.
void remove_stale_temps(const fs::path& folder, const std::string& target) {
  std::error_code error;
  for (fs::directory_iterator it(folder, error); !error && it != fs::directory_iterator(); it.increment(error)) {
    const pid_t owner = temp_owner(it->path().filename().string(), target);
    if (owner > 0 && it->symlink_status(error).type() == fs::file_type::regular && !process_alive(owner))
      fs::remove(it->path(), error);
  }
}

void write_all(const char* op, const std::string& path, int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(op, path, ": write failed: ", std::strerror(errno));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

void write_atomically(const char* op, const std::string& path, std::initializer_list<std::string_view> parts) {
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : ".";
  remove_stale_temps(folder, target.filename().string());
  const std::string temporary = (folder / cat(".", target.filename().string(), kTempMark, getpid())).string();
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(op, path, ": cannot create ", temporary, ": ", std::strerror(errno));
  try {
    for (const std::string_view part : parts) write_all(op, path, fd, part);
    if (::fsync(fd) != 0) fail(op, path, ": fsync failed: ", std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  ::close(fd);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(op, path, ": cannot rename the temporary file into place: ", std::strerror(error));
  }
  if (const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {  // make the rename durable
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace ladder::io
