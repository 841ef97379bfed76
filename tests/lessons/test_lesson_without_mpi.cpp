// Built without MPI, lesson 16 still answers --help, and a run says how to get MPI, in one line.
#include "lessons/lesson_checks.h"

using namespace ladder::testing;

TEST_CASE("lesson 16 without MPI: --help works, a run is refused with what to install") {
  CHECK(run_lesson("16_data_parallel", "--help").status == 0);
  TempDir out("lesson16_no_mpi");
  check_refused("16_data_parallel", "--quick --out " + out.path.string(),
                "ladder was built without MPI; run ./ladder setup (it installs libopenmpi-dev and openmpi-bin)");
  CHECK_FALSE(std::filesystem::exists(out.path));
}
