#include "core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace ladder {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISSOCK(mode)) return "a socket";
  return "something other than a file";
}

// " (a link to /dev/zero)" when the path is a symbolic link, else "".
std::string link_target(const std::string& path) {
  std::error_code error;
  const std::filesystem::path target = std::filesystem::read_symlink(path, error);
  return error ? "" : cat(" (a link to ", target.string(), ")");
}

}  // namespace

RegularFile::RegularFile(const char* op, std::string path) : op_(op), path_(std::move(path)) {
  // Non-blocking, so that opening a named pipe returns at once instead of waiting for a writer.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) fail(op_, path_, ": cannot open: ", std::strerror(errno));
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    const std::string kind = kind_of(info.st_mode);
    ::close(fd_);
    fail(op_, path_, ": is ", kind, link_target(path_), ", not a regular file; give the path of a file");
  }
  size_ = static_cast<uint64_t>(info.st_size);
}

RegularFile::~RegularFile() { ::close(fd_); }

void RegularFile::read_at(uint64_t offset, void* out, size_t count) const {
  auto* bytes = static_cast<char*>(out);
  while (count > 0) {
    const ssize_t n = ::pread(fd_, bytes, count, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(op_, path_, ": read failed at byte ", offset, ": ", std::strerror(errno));
    if (n == 0)
      fail(op_, path_, ": the file ends at byte ", offset, ", before the ", size_,
           " bytes it had when opened; was it changed while being read?");
    bytes += n;
    offset += static_cast<uint64_t>(n);
    count -= static_cast<size_t>(n);
  }
}

}  // namespace ladder
