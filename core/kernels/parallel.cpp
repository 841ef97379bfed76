#include "core/kernels/parallel.h"

#include <cblas.h>

#include "core/error.h"

extern "C" {
// OpenBLAS extensions; not all of them are declared in every cblas.h.
char* openblas_get_config(void);
char* openblas_get_corename(void);
int openblas_get_num_threads(void);
int openblas_get_parallel(void);
void openblas_set_num_threads(int);
}

namespace ladder {

int num_threads() { return omp_get_max_threads(); }

void set_num_threads(int threads) {
  if (threads < 1) fail("set_num_threads", "needs at least 1 thread, got ", threads);
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

std::string blas_config() {
  const int model = openblas_get_parallel();  // 0 sequential, 1 pthreads, 2 OpenMP
  const char* threading = model == 2 ? "OpenMP" : model == 1 ? "pthreads" : "sequential";
  return cat(openblas_get_config(), " | core ", openblas_get_corename(), " | threading ", threading,
             " | BLAS threads ", openblas_get_num_threads(), " | OpenMP threads ", omp_get_max_threads());
}

}  // namespace ladder
