// main() of the suites that mpirun starts as several processes: MPI around doctest. Every process
// runs every case (their collective calls must meet); mpirun fails when any process does.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "core/kernels/parallel.h"
#include "dist/mpi_world.h"

namespace {
ladder::dist::World* world = nullptr;
}

const ladder::dist::Communicator& ladder::testing::processes() { return world->processes(); }

int main(int argc, char** argv) {
  ladder::dist::World started(argc, argv);
  world = &started;
  ladder::set_num_threads(1);  // the processes share the machine's cores
  doctest::Context context(argc, argv);
  return started.end(context.run());
}
