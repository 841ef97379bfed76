#include "dist/communicator.h"

#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>

#include "core/error.h"

namespace ladder::dist {

struct Communicator::Handle {
  MPI_Comm comm;
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
  MPI_Allreduce(MPI_IN_PLACE, data, count_of(n), MPI_FLOAT, op_of(reduction), handle_->comm);
}

double Communicator::sum(double value) const {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, handle_->comm);
  return value;
}

void Communicator::broadcast(float* data, int64_t n, int root) const {
  MPI_Bcast(data, count_of(n), MPI_FLOAT, root, handle_->comm);
}

void Communicator::send_receive(const float* out, int64_t sent, int to, float* in, int64_t received, int from) const {
  MPI_Sendrecv(out, count_of(sent), MPI_FLOAT, to, 0, in, count_of(received), MPI_FLOAT, from, 0, handle_->comm,
               MPI_STATUS_IGNORE);
}

void Communicator::barrier() const { MPI_Barrier(handle_->comm); }

Communicator Communicator::first(int n) const {
  MPI_Comm group;
  MPI_Comm_split(handle_->comm, rank() < n ? 0 : 1, rank(), &group);
  return Communicator(std::make_shared<Handle>(group));
}

World::World(int& argc, char**& argv) {
  int provided = 0;
  // FUNNELED: the process runs OpenMP threads, but only its main thread calls MPI.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  std::atexit(finalize_if_running);
  processes_ = std::make_unique<Communicator>(std::make_shared<Communicator::Handle>(MPI_COMM_WORLD));
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
