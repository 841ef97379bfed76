// For the tests of reading files a user names: odd files (named pipes, huge sparse files), a
// limit on how long a read may block, and the memory a piece of code needs.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace ladder::testing {

// The first `n` bytes of a file (fewer when it is shorter): a PNG's or an SVG's signature.
inline std::string first_bytes(const std::filesystem::path& file, size_t n) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes(n, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  return bytes.substr(0, static_cast<size_t>(in.gcount()));
}

// Ends the test process (SIGALRM) if it is still in this scope after `seconds`: a read that
// blocks on a named pipe fails the suite instead of hanging it.
struct Deadline {
  explicit Deadline(unsigned seconds) { ::alarm(seconds); }
  ~Deadline() { ::alarm(0); }
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;
};

inline std::string make_fifo(const std::string& path) {
  std::filesystem::remove(path);
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  return path;
}

// A file of `bytes` bytes that takes no disk space: `head`, then a hole that reads as zeros.
inline std::string make_sparse(const std::string& path, const std::string& head, uint64_t bytes) {
  std::ofstream(path, std::ios::binary) << head;
  std::filesystem::resize_file(path, bytes);
  return path;
}

// A "Vm...:  1234 kB" line of /proc/self/status, in bytes.
inline int64_t status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  FAIL("no ", field, " in /proc/self/status");
  return 0;
}

// How far the peak resident memory of this process rises above where it was while f runs, in
// bytes. Linux resets the peak (VmHWM) to the current size when "5" is written to clear_refs.
template <class F>
int64_t peak_memory_growth(F f) {
  std::ofstream reset("/proc/self/clear_refs");
  reset << "5" << std::flush;
  REQUIRE_MESSAGE(reset.good(), "cannot reset the peak memory through /proc/self/clear_refs");
  const int64_t before = status_bytes("VmRSS");
  f();
  return status_bytes("VmHWM") - before;
}

}  // namespace ladder::testing
