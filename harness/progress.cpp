#include "harness/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ladder::harness {

namespace {

std::string duration(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds) + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return buf;
}

std::string rate(double per_second) {
  char buf[32];
  if (per_second >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM", per_second / 1e6);
  else if (per_second >= 1e3) std::snprintf(buf, sizeof buf, "%.1fk", per_second / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", per_second);
  return buf;
}

// Whether the line may be redrawn in place (a carriage return and an erase-line escape): only on a
// terminal, where a file or a pipe would keep every escape. mpirun hands its processes a
// pseudo-terminal even when its own output goes to a file, so under mpirun only LADDER_TERMINAL=1
// says that the output is a terminal (harness/run_processes.sh sets it when its own output is one).
bool redraws_in_place() {
  if (isatty(STDOUT_FILENO) == 0) return false;
  const bool under_mpirun = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
  const char* told = std::getenv("LADDER_TERMINAL");
  return !under_mpirun || (told != nullptr && std::string(told) == "1");
}

}  // namespace

Progress::Progress(int64_t total_steps, std::string unit, bool show_ppl)
    : total_(total_steps), unit_(std::move(unit)), show_ppl_(show_ppl), terminal_(redraws_in_place()),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

std::string Progress::line(int64_t step, double loss, int64_t items) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = step > 0 ? elapsed / static_cast<double>(step) * static_cast<double>(total_ - step) : 0;
  char buf[256];
  int n = std::snprintf(buf, sizeof buf, "step %lld/%lld | loss %.4g", static_cast<long long>(step),
                        static_cast<long long>(total_), loss);
  if (show_ppl_) n += std::snprintf(buf + n, sizeof buf - n, " | ppl %.2f", std::exp(loss));
  std::snprintf(buf + n, sizeof buf - n, " | %s %s/s | %s elapsed, ETA %s", rate(static_cast<double>(items) / std::max(elapsed, 1e-9)).c_str(),
                unit_.c_str(), duration(elapsed).c_str(), duration(eta).c_str());
  return buf;
}

void Progress::update(int64_t step, double loss, int64_t items) {
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    // At most ten redraws a second, and always the last step.
    if (step != total_ && std::chrono::duration<double>(now - last_).count() < 0.1) return;
    std::printf("\r%s\033[K", line(step, loss, items).c_str());
    open_line_ = true;
  } else {
    const int64_t every = std::max<int64_t>(1, total_ / 10);
    if (step % every != 0 && step != total_ && step != 1) return;
    std::printf("%s\n", line(step, loss, items).c_str());
  }
  last_ = now;
  std::fflush(stdout);
}

void Progress::finish() {
  if (open_line_) std::printf("\n");
  open_line_ = false;
  std::fflush(stdout);
}

}  // namespace ladder::harness
