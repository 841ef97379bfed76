#include "core/peak_memory.h"

#include <malloc.h>

#include <fstream>
#include <string>

#include "core/error.h"

namespace ladder {

namespace {

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM").
int64_t status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string key;
  int64_t kib = 0;
  while (status >> key) {
    if (key == field + ":" && status >> kib) return kib;
    status.ignore(1 << 12, '\n');
  }
  fail("peak_bytes_added", "no ", field, " in /proc/self/status (it needs Linux)");
}

}  // namespace

int64_t peak_bytes_added(const std::function<void()>& call) {
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  if (!(clear << "5" << std::flush))  // "5" resets VmHWM to the current resident size
    fail("peak_bytes_added", "cannot write /proc/self/clear_refs to reset the peak (it needs Linux)");
  const int64_t before = status_kib("VmRSS");
  call();
  return (status_kib("VmHWM") - before) * 1024;
}

}  // namespace ladder
