// The processes mpirun started for a suite: MPI is started by the suite's main (mpi_test_main.cpp).
#pragma once

#include "dist/communicator.h"

namespace ladder::testing {

const dist::Communicator& processes();

}  // namespace ladder::testing
