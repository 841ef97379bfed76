#include "harness/stop_signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>

namespace ladder::harness {

namespace {

// The signal (one of kStopSignals) that asked the run to stop, 0 while none has: the training loop
// looks at it between steps (Run::stop_if_asked).
volatile std::sig_atomic_t stop_signal_seen = 0;

// What the handler writes on a second signal. Two slots: the run renders the next one while the
// handler may be reading the current one, then switches `current` (-1: nothing to write).
struct ExitAtOnce {
  std::string summary_path, temporary_path, summary, lock_path;
};
std::array<ExitAtOnce, 2> prepared;
std::atomic<int> current{-1};
static_assert(std::atomic<int>::is_always_lock_free, "read in a signal handler");

void say(const char* text, size_t size) {
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, text, size);  // write(): safe in a handler, printf is not
}

// The second signal: only async-signal-safe calls from here on.
[[noreturn]] void end_at_once(int signal) {
  const int slot = current.load();
  if (slot >= 0) {
    const ExitAtOnce& exit = prepared[static_cast<size_t>(slot)];
    const int fd = ::open(exit.temporary_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const bool whole = ::write(fd, exit.summary.data(), exit.summary.size()) == static_cast<ssize_t>(exit.summary.size());
      const bool synced = whole && ::fsync(fd) == 0;
      ::close(fd);
      if (synced) ::rename(exit.temporary_path.c_str(), exit.summary_path.c_str());
      else ::unlink(exit.temporary_path.c_str());
    }
    ::unlink(exit.lock_path.c_str());
    constexpr char kSaid[] = "\n(a second signal: the run ends now; summary.json says interrupted, the last checkpoint kept)\n";
    say(kSaid, sizeof kSaid - 1);
  }
  ::_exit(128 + signal);
}

extern "C" void ask_to_stop(int signal) {
  if (stop_signal_seen != 0) end_at_once(signal);
  stop_signal_seen = signal;
  constexpr char kSaid[] = "\n(stopping at the next step, the last checkpoint kept; a second Ctrl-C or signal ends the run at once)\n";
  say(kSaid, sizeof kSaid - 1);
}

struct sigaction stop_handler() {
  struct sigaction action {};
  action.sa_handler = ask_to_stop;
  action.sa_flags = SA_RESTART;
  sigfillset(&action.sa_mask);  // one handler at a time: a second signal waits until the first is noted
  return action;
}

}  // namespace

StopSignals::StopSignals() {
  stop_signal_seen = 0;
  const struct sigaction handler = stop_handler();
  for (size_t i = 0; i < kStopSignals.size(); ++i) sigaction(kStopSignals[i], &handler, &before_[i]);
}

StopSignals::~StopSignals() {
  for (size_t i = 0; i < kStopSignals.size(); ++i) sigaction(kStopSignals[i], &before_[i], nullptr);
  forget_exit_at_once();
}

int stop_signal() { return stop_signal_seen; }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "a signal";
  }
}

void prepare_exit_at_once(const std::string& summary_path, const std::string& summary, const std::string& lock_path) {
  const int next = current.load() == 0 ? 1 : 0;
  const std::string temporary = summary_path + ".at-once";
  prepared[static_cast<size_t>(next)] = {summary_path, temporary, summary, lock_path};
  current.store(next);
}

void forget_exit_at_once() { current.store(-1); }

}  // namespace ladder::harness
