// What data parallelism costs, as lesson 16 measures it: the time of a training step against the
// number of processes sharing one batch, cut into compute, waiting for the slowest process and the
// all-reduce; and the all-reduce alone against the size of its buffer, our ring beside MPI's own.
// Rank 0 prints the tables and writes step_time.csv, step_time, all_reduce.csv and all_reduce into
// the run folder; the other processes measure with it and write nothing (their `run` is null).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dist/communicator.h"
#include "plot/plot.h"
#include "harness/run.h"

namespace ladder::lessons {

struct StepTime {
  double compute = 0, waiting = 0, all_reduce = 0;  // seconds per step
  double total() const { return compute + waiting + all_reduce; }
};

// A training step that calls `exchange` between its backward and its clip (optim::train_step's
// after_backward), and the exchange itself (dist::all_reduce_gradients).
using TimedStep = std::function<void(const std::function<void()>& exchange)>;
// The mean of `steps` steps of `group`'s processes, after one untimed step (first allocations). A
// barrier before each exchange keeps the wait for the slowest process apart from the transfer.
StepTime time_steps(const dist::Communicator& group, int64_t steps, const TimedStep& step, const std::function<void()>& exchange);

// The table and plot of time per step against processes: times[i] measured on counts[i]
// processes, sharing a batch of `batch`. Adds step_ms_<N> and all_reduce_share to `metrics`.
void report_step_times(harness::Run* run, const std::vector<int>& counts, const std::vector<StepTime>& times, int64_t batch,
                       nlohmann::ordered_json& metrics);

// Times dist::ring_all_reduce and Communicator::all_reduce on buffers of 4 KB up to `largest_floats`
// floats and of the model's gradient (`model_floats`), each on every process of `all`; prints and
// plots the bandwidth each process achieves. Adds ring_gb_per_s (at the model's size) to `metrics`.
void report_all_reduce(harness::Run* run, const dist::Communicator& all, int64_t model_floats, int64_t largest_floats,
                       nlohmann::ordered_json& metrics);

// values[i] as the point (i + 1, values[i]): a curve against step.
plot::Series per_step(const std::string& name, const std::vector<double>& values);

}  // namespace ladder::lessons
