#include "bench/pytorch_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "core/kernels/parallel.h"

namespace ladder::bench {

PytorchProcess::PytorchProcess(const std::string& script) {
  const std::string path = std::string(LADDER_SOURCE_DIR) + "/bench/pytorch/" + script;
  std::signal(SIGPIPE, SIG_IGN);  // a script that died makes our write fail, not kill the benchmark
  int down[2], up[2];  // down: we write, the script reads; up: the script writes, we read
  if (pipe(down) != 0 || pipe(up) != 0) fail("bench", "cannot create pipes for ", script, ": ", std::strerror(errno));
  pid_ = fork();
  if (pid_ < 0) fail("bench", "cannot start ", script, ": ", std::strerror(errno));
  if (pid_ == 0) {
    dup2(down[0], STDIN_FILENO);
    dup2(up[1], STDOUT_FILENO);
    dup2(up[1], STDERR_FILENO);  // an import error reaches us as a remark line
    close(down[0]), close(down[1]), close(up[0]), close(up[1]);
    // The same short spin as ladder's threads: with libgomp's default, PyTorch's idle threads spin on
    // both cores for a while after each of its repeats, just when ladder's repeat needs them. It
    // does not slow PyTorch's own repeats (docs/performance.md).
    if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT")) setenv("GOMP_SPINCOUNT", kDefaultSpinCount, 0);
    execl("/usr/bin/python3", "python3", path.c_str(), static_cast<char*>(nullptr));
    dprintf(STDOUT_FILENO, "# cannot run /usr/bin/python3: %s\n", std::strerror(errno));
    _exit(127);
  }
  close(down[0]), close(up[1]);
  to_script_ = fdopen(down[1], "w");
  from_script_ = fdopen(up[0], "r");
  char line[512];
  while (fgets(line, sizeof line, from_script_)) {
    if (std::strcmp(line, "ready\n") == 0) return;
    std::printf("  [pytorch] %s", line);  // versions, threading, or why it failed
  }
  std::printf("  PyTorch reference unavailable: install Debian's python3-torch (./ladder setup --bench)\n");
  stop();
}

PytorchProcess::~PytorchProcess() { stop(); }

void PytorchProcess::stop() {
  if (to_script_) std::fclose(to_script_);  // the script ends when its input closes
  if (from_script_) std::fclose(from_script_);
  to_script_ = from_script_ = nullptr;
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

double PytorchProcess::repeat_ms(const std::string& name) {
  std::fprintf(to_script_, "%s\n", name.c_str());
  std::fflush(to_script_);
  char line[512] = "";
  double ms;
  int threads;
  if (!fgets(line, sizeof line, from_script_) || std::sscanf(line, "%lf %d", &ms, &threads) != 2) {
    line[std::strcspn(line, "\n")] = '\0';
    fail("bench", "the PyTorch script did not time '", name, "': ", line[0] ? line : "it stopped");
  }
  const auto it = fastest_.find(name);
  if (it == fastest_.end() || ms < it->second.first) fastest_[name] = {ms, threads};
  return ms;
}

}  // namespace ladder::bench
