// dist built without MPI: the program builds, and the first call that needs other processes says
// how to get MPI. Only World's construction and end() succeed, so that a lesson's --help works.
#include "core/error.h"
#include "dist/communicator.h"

namespace ladder::dist {

namespace {

[[noreturn]] void no_mpi() {
  fail("dist", "ladder was built without MPI; run ./ladder setup (it installs libopenmpi-dev and openmpi-bin), "
               "then ./ladder lesson 16 builds it with MPI");
}

}  // namespace

int Communicator::rank() const { no_mpi(); }
int Communicator::size() const { no_mpi(); }
void Communicator::all_reduce(float*, int64_t, Reduction) const { no_mpi(); }
double Communicator::sum(double) const { no_mpi(); }
void Communicator::broadcast(float*, int64_t, int) const { no_mpi(); }
void Communicator::send_receive(const float*, int64_t, int, float*, int64_t, int) const { no_mpi(); }
void Communicator::barrier() const { no_mpi(); }
Communicator Communicator::first(int) const { no_mpi(); }

World::World(int&, char**&) {}
const Communicator& World::processes() const { no_mpi(); }
int World::processes_on_this_machine() const { no_mpi(); }
void World::only_rank_0_prints() const {}
int World::end(int status) { return status; }

}  // namespace ladder::dist
