#include "harness/load_policy.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "core/kernels/parallel.h"

namespace ladder::harness {

namespace {

// Threads of this process that are running now (state R in /proc/self/task/*/stat): the one
// looking, and every other that has work or is still spinning.
int own_running_threads() {
  int running = 0;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    FILE* file = std::fopen((task.path() / "stat").c_str(), "r");
    if (!file) continue;
    char state = 0;
    // "pid (name) S ...": the state follows the name's closing parenthesis
    if (std::fscanf(file, "%*d (%*[^)]) %c", &state) == 1 && state == 'R') ++running;
    std::fclose(file);
  }
  return std::max(running, 1);
}

}  // namespace

int free_cores() {
  // The fourth field of /proc/loadavg counts the machine's running and ready tasks now ("3/181").
  FILE* file = std::fopen("/proc/loadavg", "r");
  if (!file) return -1;
  int runnable = 0;
  const bool read = std::fscanf(file, "%*f %*f %*f %d", &runnable) == 1;
  std::fclose(file);
  if (!read) return -1;
  return std::max(0, omp_get_num_procs() - std::max(0, runnable - own_running_threads()));
}

LoadPolicy::LoadPolicy(int max_threads) : max_threads_(max_threads), running_(max_threads) {}

int LoadPolicy::look(int free_cores) {
  if (free_cores < 0) return running_;
  const int wanted = std::clamp(free_cores, 1, max_threads_);
  free_looks_ = wanted > running_ ? free_looks_ + 1 : 0;
  if (wanted < running_ || free_looks_ >= 2) {
    running_ = wanted;
    free_looks_ = 0;
  }
  return running_;
}

LoadWatcher::LoadWatcher()
    : thread_([](std::stop_token stop) {
        LoadPolicy policy(omp_get_num_procs());  // core runs at most num_threads() of them
        std::mutex mutex;
        std::condition_variable_any stopped;
        std::unique_lock lock(mutex);
        while (!stop.stop_requested()) {
          set_running_threads(policy.look(free_cores()));
          stopped.wait_for(lock, stop, std::chrono::milliseconds(100), [] { return false; });
        }
      }) {}

LoadWatcher::~LoadWatcher() {
  thread_.request_stop();
  thread_.join();
  set_running_threads(omp_get_num_procs());
}

void adapt_threads_to_load() { static const LoadWatcher watcher; }

}  // namespace ladder::harness
