// The signals that end a process unless caught (Ctrl-C's SIGINT, SIGTERM, SIGHUP, SIGQUIT,
// SIGUSR1, SIGUSR2) ask a run to stop at its next step instead of killing it mid-write; a second
// one ends it at once, its summary.json saying "interrupted" and its lock removed.
#pragma once

#include <array>
#include <csignal>
#include <string>

namespace ladder::harness {

// SIGINT (Ctrl-C), SIGTERM (kill), SIGHUP (the terminal closed), SIGQUIT (Ctrl-\), SIGUSR1 and
// SIGUSR2: each would otherwise end the process where it stands, its summary.json left saying
// "running". (SIGKILL cannot be caught: a killed run's summary says running, its lock is taken over.)
inline constexpr std::array<int, 6> kStopSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// While one lives, the stop signals only set a flag (stop_signal()) that the training loop reads
// between steps; a second one writes the summary prepared by prepare_exit_at_once, removes the
// lock and ends the process with status 128 + the signal. Puts the handlers before it back.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  std::array<struct sigaction, kStopSignals.size()> before_{};  // put back when it ends: one may live inside another
};

// The signal that asked the run to stop, 0 while none has.
int stop_signal();
const char* signal_name(int signal);  // "SIGINT", "SIGTERM", "SIGHUP", ...

// What a second signal leaves: `summary` (summary.json's text, status "interrupted") written
// atomically to `summary_path`, and `lock_path` removed. Rendered here, ahead of time, because a
// signal handler may only make system calls (open, write, rename, unlink, _exit), never allocate.
void prepare_exit_at_once(const std::string& summary_path, const std::string& summary, const std::string& lock_path);
// The run's status is final (finished, diverged, failed): a second signal only ends the process.
void forget_exit_at_once();

}  // namespace ladder::harness
