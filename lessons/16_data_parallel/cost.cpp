#include "lessons/16_data_parallel/cost.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/error.h"
#include "dist/ring_all_reduce.h"
#include "nn/module.h"

namespace ladder::lessons {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

StepTime time_steps(const dist::Communicator& group, int64_t steps, const TimedStep& step, const std::function<void()>& exchange) {
  StepTime mean;
  for (int64_t s = 0; s <= steps; ++s) {
    StepTime t;
    const Clock::time_point start = Clock::now();
    step([&] {
      Clock::time_point mark = Clock::now();
      group.barrier();
      t.waiting = seconds_since(mark);
      mark = Clock::now();
      exchange();
      t.all_reduce = seconds_since(mark);
    });
    t.compute = seconds_since(start) - t.waiting - t.all_reduce;  // forward, backward, clip, the optimiser's step
    if (s == 0) continue;
    mean.compute += t.compute / static_cast<double>(steps);
    mean.waiting += t.waiting / static_cast<double>(steps);
    mean.all_reduce += t.all_reduce / static_cast<double>(steps);
  }
  return mean;
}

void report_step_times(harness::Run* run, const std::vector<int>& counts, const std::vector<StepTime>& times, int64_t batch,
                       nlohmann::ordered_json& metrics) {
  if (!run) return;
  std::printf("%9s %12s %11s %11s %14s %9s %17s\n", "processes", "windows each", "compute ms", "waiting ms", "all-reduce ms", "step ms",
              "all-reduce share");
  harness::CsvWriter csv(run->file("step_time.csv"), {"processes", "compute_ms", "waiting_ms", "all_reduce_ms", "step_ms"});
  plot::Series compute{"compute"}, waiting{"waiting for the slowest"}, reduce{"all-reduce"}, step{"whole step"};
  for (size_t i = 0; i < counts.size(); ++i) {
    const int n = counts[i];
    const StepTime& t = times[i];
    std::printf("%9d %12lld %11.1f %11.1f %14.1f %9.1f %16.1f%%\n", n, static_cast<long long>(batch / n), 1e3 * t.compute,
                1e3 * t.waiting, 1e3 * t.all_reduce, 1e3 * t.total(), 100 * t.all_reduce / t.total());
    csv.row({static_cast<double>(n), 1e3 * t.compute, 1e3 * t.waiting, 1e3 * t.all_reduce, 1e3 * t.total()});
    for (const auto& [series, value] : {std::pair{&compute, t.compute}, {&waiting, t.waiting}, {&reduce, t.all_reduce}, {&step, t.total()}})
      series->x.push_back(n), series->y.push_back(1e3 * value);
    metrics[cat("step_ms_", n)] = 1e3 * t.total();
  }
  if (counts.back() > 1) metrics["all_reduce_share"] = times.back().all_reduce / times.back().total();
  run->wrote(plot::save_line_chart(run->path("step_time"), {"Time per step, one batch shared by the processes", "processes",
                                                      "milliseconds per step", {step, compute, reduce, waiting}, false, 1}));
}

void report_all_reduce(harness::Run* run, const dist::Communicator& all, int64_t model_floats, int64_t largest_floats,
                       nlohmann::ordered_json& metrics) {
  std::printf("\nthe all-reduce of one buffer on %d processes (the model's gradient: %s floats, %.2f MB); bandwidth: the bytes\n"
              "each process sends, 2 (N - 1) / N of the buffer, per second\n",
              all.size(), nn::with_commas(model_floats).c_str(), 4e-6 * static_cast<double>(model_floats));
  std::printf("%12s %10s %10s %12s %12s\n", "bytes", "ring ms", "MPI ms", "ring GB/s", "MPI GB/s");
  std::vector<int64_t> sizes = {model_floats};
  for (int64_t n = 1 << 10; n <= largest_floats; n *= 4) sizes.push_back(n);
  std::sort(sizes.begin(), sizes.end());
  std::optional<harness::CsvWriter> csv;
  if (run) csv.emplace(run->file("all_reduce.csv"), std::vector<std::string>{"bytes", "ring_ms", "mpi_ms", "ring_gb_per_s", "mpi_gb_per_s"});
  plot::Series ring{"our ring"}, mpi{"MPI's all-reduce"};
  for (const int64_t n : sizes) {
    std::vector<float> buffer(static_cast<size_t>(n), 0.0f);  // zeros: sums that stay put, however many repeats
    const int repeats = static_cast<int>(std::clamp<int64_t>((1 << 24) / n, 3, 50));
    double seconds[2];
    for (const bool ours : {true, false}) {
      all.barrier();
      const Clock::time_point start = Clock::now();
      for (int r = 0; r < repeats; ++r) ours ? dist::ring_all_reduce(all, buffer.data(), n) : all.all_reduce(buffer.data(), n);
      seconds[ours ? 0 : 1] = seconds_since(start) / repeats;
    }
    const double bytes = 4.0 * static_cast<double>(n), sent = dist::ring_bytes_sent(bytes, all.size());
    const double rate[2] = {sent / seconds[0] / 1e9, sent / seconds[1] / 1e9};
    std::printf("%12.0f %10.3f %10.3f %12.2f %12.2f%s\n", bytes, 1e3 * seconds[0], 1e3 * seconds[1], rate[0], rate[1],
                n == model_floats ? "   <- the model's gradient" : "");
    if (!run) continue;
    csv->row({bytes, 1e3 * seconds[0], 1e3 * seconds[1], rate[0], rate[1]});
    ring.x.push_back(bytes), ring.y.push_back(rate[0]);
    mpi.x.push_back(bytes), mpi.y.push_back(rate[1]);
    if (n == model_floats) metrics["ring_gb_per_s"] = rate[0];
  }
  if (run)
    run->wrote(plot::save_line_chart(run->path("all_reduce"), {.title = "All-reduce bandwidth against the buffer's size",
                                                         .x_label = "the buffer's bytes (k = 1024, M = 1024 k)",
                                                         .y_label = "GB/s each process sends",
                                                         .series = {ring, mpi},
                                                         .log2_x = true}));
}

plot::Series per_step(const std::string& name, const std::vector<double>& values) {
  plot::Series series{name};
  for (size_t i = 0; i < values.size(); ++i) series.x.push_back(static_cast<double>(i + 1)), series.y.push_back(values[i]);
  return series;
}

}  // namespace ladder::lessons
