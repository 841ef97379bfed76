// The processes of a run and how they talk: the only door to MPI (Open MPI, or any MPI), which
// starts the same program as N processes, on one machine or on many (mpirun -np N). Each process
// has a rank, 0 .. N-1, and sees only its own memory: what the others hold reaches it by message.
// This header names no MPI type, so that the code above it builds without MPI; built without MPI,
// every call here fails saying how to get it (communicator_without_mpi.cpp).
#pragma once

#include <cstdint>
#include <memory>

namespace ladder::dist {

enum class Reduction { sum, max, min };

// A group of processes: every process of the run (World::processes) or some of them (first).
// Every call is collective: each process of the group makes the same calls in the same order, and
// a call returns only when the others have made theirs (a process that skips one hangs the rest).
// A call fails (ladder::Error, naming the process) when a process of the run on this machine ended
// while this one waited for it; one on another machine is left to mpirun, which stops the run.
class Communicator {
 public:
  int rank() const;  // this process: 0 .. size() - 1
  int size() const;

  // `data` (n floats on every process) becomes, on every process, the elementwise reduction of
  // all of them: MPI's own all-reduce (MPI_Iallreduce), whose algorithm MPI picks by size.
  void all_reduce(float* data, int64_t n, Reduction reduction = Reduction::sum) const;
  double sum(double value) const;  // one number summed over the processes
  void broadcast(float* data, int64_t n, int root) const;  // root's n floats to every process
  // Sends `sent` floats from `out` to process `to` while receiving `received` into `in` from
  // process `from`: one step of a ring (ring_all_reduce.h), both ways at once so that no one waits.
  void send_receive(const float* out, int64_t sent, int to, float* in, int64_t received, int from) const;
  void barrier() const;  // returns when every process has reached it
  // A group of the processes 0 .. n-1 (on them); the others receive a group of their own, unused.
  Communicator first(int n) const;

  struct Handle;  // the MPI communicator, freed with the last copy
  explicit Communicator(std::shared_ptr<Handle> handle) : handle_(std::move(handle)) {}

 private:
  std::shared_ptr<Handle> handle_;
};

// MPI for the life of a program: the constructor starts it (every process of `mpirun -np N` runs
// main), end() stops it. A program run without mpirun is a world of one process.
class World {
 public:
  World(int& argc, char**& argv);
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const Communicator& processes() const;  // every process of the run
  // How many processes of the run share this machine, and so its cores.
  int processes_on_this_machine() const;
  // Every process runs the same code on the same flags and would print the same lines N times:
  // from here on the processes other than rank 0 print nothing (their stdout and stderr are closed).
  void only_rank_0_prints() const;
  // The program's exit status, from main: 0 ends MPI on every process; any other stops every
  // process with it (MPI_Abort), since the others may be waiting for the one that failed: at once
  // from rank 0, two seconds later from the others, so that rank 0's message comes out first.
  // After a call found a process gone, it exits at once: mpirun is already stopping the run.
  int end(int status);

 private:
  std::unique_ptr<Communicator> processes_;
};

}  // namespace ladder::dist
