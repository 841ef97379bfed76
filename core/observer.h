// An optional observer of the work core does, for a tool that measures it (the benchmark's
// breakdown of a training step, ./ladder bench gpt), as PyTorch's profiler observes its ops.
// Core only says what starts and ends, by name; it never reads a clock. None is installed by
// default, and each notification is then one test of a null pointer.
#pragma once

namespace ladder {

class Observer {
 public:
  virtual ~Observer() = default;

  // The autograd engine (core/autograd.cpp): an op ran its forward and entered the graph.
  virtual void op_recorded(const char* /*op*/) {}
  // backward() calls the backward function of `op`, and it returns (not told if it throws).
  virtual void backward_starts(const char* /*op*/) {}
  virtual void backward_ends(const char* /*op*/) {}

  // A parallel_for_blocks loop that opens a parallel region (core/kernels/parallel.h), told on
  // the main thread: before the other threads start, when its own blocks start and end, and once
  // every thread has finished.
  virtual void loop_starts() {}
  virtual void main_blocks_start() {}
  virtual void main_blocks_end() {}
  virtual void loop_ends() {}
};

// The observer in use, or nullptr. Set it while no ladder work runs; every notification comes
// from the thread that runs the ops.
inline Observer* installed_observer = nullptr;

}  // namespace ladder
