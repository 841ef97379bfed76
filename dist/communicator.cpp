#include "dist/communicator.h"

#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <thread>
#include <vector>

#include "core/error.h"

namespace ladder::dist {

// The other processes of the run on this machine, by their rank in the whole run and their pid:
// what a wait looks at to tell a slow process from one that was killed.
struct Neighbour {
  int rank;
  pid_t pid;
};

struct Communicator::Handle {
  MPI_Comm comm;
  std::shared_ptr<const std::vector<Neighbour>> neighbours;
  int world_rank, world_size;
  ~Handle() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_WORLD && !finalized) MPI_Comm_free(&comm);
  }
};

namespace {

// MPI counts in int: a buffer of 2^31 floats or more is refused rather than cut short.
int count_of(int64_t n) {
  if (n < 0 || n > INT_MAX) fail("dist", "a message of ", n, " floats; MPI counts up to ", INT_MAX);
  return static_cast<int>(n);
}

MPI_Op op_of(Reduction reduction) {
  switch (reduction) {
    case Reduction::max: return MPI_MAX;
    case Reduction::min: return MPI_MIN;
    default: return MPI_SUM;
  }
}

// A program that leaves without end() (--help, a refused flag: std::exit) still ends MPI, so
// that mpirun sees a clean exit.
void finalize_if_running() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// Every process of the run on this machine but this one: (rank, pid), exchanged once at the start.
std::shared_ptr<const std::vector<Neighbour>> neighbours_on_this_machine(int rank) {
  MPI_Comm machine;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine);
  int here = 0;
  MPI_Comm_size(machine, &here);
  const std::array<int, 2> mine{rank, static_cast<int>(getpid())};
  std::vector<int> all(2 * static_cast<size_t>(here));
  MPI_Allgather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, machine);
  MPI_Comm_free(&machine);
  auto neighbours = std::make_shared<std::vector<Neighbour>>();
  for (int i = 0; i < here; ++i)
    if (all[2 * i] != rank) neighbours->push_back({all[2 * i], static_cast<pid_t>(all[2 * i + 1])});
  return neighbours;
}

// MPI's blocking calls would wait forever for a process that was killed (kill -9, out of memory):
// the others would hang until mpirun killed them too, and rank 0 could not say what happened. So
// every call here starts its transfer without blocking and waits for it here, looking every 100 ms
// whether the processes on this machine still live; one that is gone fails the wait, naming it.
// Set when a wait found a process gone: MPI can no longer be stopped in order (end()).
bool lost_a_process = false;

void wait_for(const Communicator::Handle& handle, std::span<MPI_Request> requests, const char* call) {
  using Clock = std::chrono::steady_clock;
  auto next_look = Clock::now() + std::chrono::milliseconds(100);
  for (;;) {
    int done = 0;
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) return;
    if (Clock::now() < next_look) continue;
    next_look = Clock::now() + std::chrono::milliseconds(100);
    for (const Neighbour& other : *handle.neighbours)
      if (kill(other.pid, 0) != 0 && errno == ESRCH) {
        lost_a_process = true;
        fail("dist", "process ", other.rank, " of ", handle.world_size, " (pid ", other.pid, ") ended while process ",
             handle.world_rank, " waited for it in ", call, "; the run cannot go on without it");
      }
  }
}

}  // namespace

int Communicator::rank() const {
  int rank = 0;
  MPI_Comm_rank(handle_->comm, &rank);
  return rank;
}

int Communicator::size() const {
  int size = 0;
  MPI_Comm_size(handle_->comm, &size);
  return size;
}

void Communicator::all_reduce(float* data, int64_t n, Reduction reduction) const {
  std::array<MPI_Request, 1> request;
  MPI_Iallreduce(MPI_IN_PLACE, data, count_of(n), MPI_FLOAT, op_of(reduction), handle_->comm, request.data());
  wait_for(*handle_, request, "all_reduce");
}

double Communicator::sum(double value) const {
  std::array<MPI_Request, 1> request;
  MPI_Iallreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, handle_->comm, request.data());
  wait_for(*handle_, request, "sum");
  return value;
}

void Communicator::broadcast(float* data, int64_t n, int root) const {
  std::array<MPI_Request, 1> request;
  MPI_Ibcast(data, count_of(n), MPI_FLOAT, root, handle_->comm, request.data());
  wait_for(*handle_, request, "broadcast");
}

void Communicator::send_receive(const float* out, int64_t sent, int to, float* in, int64_t received, int from) const {
  std::array<MPI_Request, 2> requests;
  MPI_Irecv(in, count_of(received), MPI_FLOAT, from, 0, handle_->comm, &requests[0]);
  MPI_Isend(out, count_of(sent), MPI_FLOAT, to, 0, handle_->comm, &requests[1]);
  wait_for(*handle_, requests, "send_receive");
}

void Communicator::barrier() const {
  std::array<MPI_Request, 1> request;
  MPI_Ibarrier(handle_->comm, request.data());
  wait_for(*handle_, request, "barrier");
}

Communicator Communicator::first(int n) const {
  MPI_Comm group;
  MPI_Comm_split(handle_->comm, rank() < n ? 0 : 1, rank(), &group);
  return Communicator(std::make_shared<Handle>(group, handle_->neighbours, handle_->world_rank, handle_->world_size));
}

World::World(int& argc, char**& argv) {
  int provided = 0;
  // FUNNELED: the process runs OpenMP threads, but only its main thread calls MPI.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  std::atexit(finalize_if_running);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  processes_ = std::make_unique<Communicator>(
      std::make_shared<Communicator::Handle>(MPI_COMM_WORLD, neighbours_on_this_machine(rank), rank, size));
}

const Communicator& World::processes() const { return *processes_; }

int World::processes_on_this_machine() const {
  MPI_Comm machine;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &machine);
  int size = 0;
  MPI_Comm_size(machine, &size);
  MPI_Comm_free(&machine);
  return size;
}

void World::only_rank_0_prints() const {
  if (processes_->rank() == 0) return;
  const int null = open("/dev/null", O_WRONLY);
  dup2(null, STDOUT_FILENO);
  dup2(null, STDERR_FILENO);
  close(null);
}

int World::end(int status) {
  if (status != 0 && lost_a_process) {
    // mpirun is stopping the run already, and MPI_Abort would wait for it to kill this process too.
    std::fflush(nullptr);
    _exit(status);
  }
  if (status != 0) {
    // Only rank 0 prints: when every process failed alike (a refused flag), the others leave it a
    // moment to print its message and stop them all, rather than cutting it off with their abort.
    if (processes_->rank() != 0) std::this_thread::sleep_for(std::chrono::seconds(2));
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  processes_.reset();
  MPI_Finalize();
  return 0;
}

}  // namespace ladder::dist
