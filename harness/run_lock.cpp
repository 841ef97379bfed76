#include "harness/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace ladder::harness {

namespace {

// The process id written in a lock file ("" if none).
std::string lock_holder(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, static_cast<size_t>(std::max<ssize_t>(n, 0)));
  pid.erase(std::find_if(pid.begin(), pid.end(), [](char c) { return c < '0' || c > '9'; }), pid.end());
  return pid;
}

std::string lock_path(const std::string& folder) { return (std::filesystem::path(folder) / kLockName).string(); }

}  // namespace

int lock_folder(const std::string& folder) {
  const std::string path = lock_path(folder);
  for (;;) {
    // NOFOLLOW: a link named run.lock is never opened through (it would write its target); CLOEXEC:
    // no child keeps the lock.
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    struct stat kind {};
    if ((fd < 0 && errno == ELOOP) || (fd >= 0 && (::fstat(fd, &kind) != 0 || !S_ISREG(kind.st_mode)))) {
      if (fd >= 0) ::close(fd);
      if (::unlink(path.c_str()) != 0) fail("run", path, " is a link or not a file, and cannot be removed: ", std::strerror(errno));
      std::printf("(%s was a link or not a file: replaced by this run's own)\n", path.c_str());
      continue;
    }
    if (fd < 0) fail("run", "cannot create the lock file ", path, ": ", std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const std::string holder = lock_holder(fd);
      ::close(fd);
      fail("run", "another run (pid ", holder.empty() ? "unknown" : holder, ") is writing into ", folder,
           "; wait for it to end, or give this run another --out");
    }
    // The run that held the lock may have removed the file between our open() and flock(): start again.
    struct stat opened {}, named {};
    if (::fstat(fd, &opened) != 0 || ::stat(path.c_str(), &named) != 0 || opened.st_ino != named.st_ino ||
        opened.st_dev != named.st_dev) {
      ::close(fd);
      continue;
    }
    const std::string stale = lock_holder(fd);
    if (!stale.empty()) std::printf("(%s was left by pid %s, which no longer holds it: taken over)\n", path.c_str(), stale.c_str());
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      fail("run", "cannot write the lock file ", path, ": ", reason);
    }
    return fd;
  }
}

void unlock_folder(const std::string& folder, int fd) {
  ::unlink(lock_path(folder).c_str());
  ::close(fd);
}

}  // namespace ladder::harness
