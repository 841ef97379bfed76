// A PyTorch reference script running beside the benchmark, so that its timed repeats can
// alternate with ours: any burst of load from another process on a shared machine then hits
// both sides alike. Protocol (bench/pytorch/serve.py): the script prints remark lines starting
// with '#', then "ready"; for each workload name we write, it runs one timed repeat of about
// 100 ms and answers "<milliseconds per call> <threads used>".
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include <sys/types.h>

namespace ladder::bench {

class PytorchProcess {
 public:
  // Starts Debian's /usr/bin/python3 on bench/pytorch/<script>; prints why when it cannot.
  explicit PytorchProcess(const std::string& script);
  ~PytorchProcess();
  PytorchProcess(const PytorchProcess&) = delete;
  PytorchProcess& operator=(const PytorchProcess&) = delete;

  bool available() const { return to_script_ != nullptr; }
  // One timed repeat of the script's workload `name`: milliseconds per call.
  double repeat_ms(const std::string& name);
  // The thread count of the fastest repeat of `name` so far.
  int fastest_threads(const std::string& name) const { return fastest_.at(name).second; }

 private:
  void stop();

  pid_t pid_ = -1;
  FILE* to_script_ = nullptr;
  FILE* from_script_ = nullptr;
  std::map<std::string, std::pair<double, int>> fastest_;  // name -> (ms, threads)
};

}  // namespace ladder::bench
