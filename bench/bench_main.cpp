// ladder_bench [core|cnn|rnn|seq2seq|attention|gpt|all]: each workload in ladder and in its reference, side by side.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench.h"
#include "core/error.h"
#include "core/kernels/parallel.h"

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "all";
  try {
    if (which == "--attention-peak-memory" && argc == 4) {  // bench_attention.cpp runs this in a fresh process
      ladder::bench::attention_peak_memory(argv[2], std::atoll(argv[3]));
      return 0;
    }
    std::printf("BLAS: %s\n", ladder::blas_config().c_str());
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    std::printf("OPENBLAS_CORETYPE=%s  OMP_NUM_THREADS=%s\n", coretype ? coretype : "(unset)",
                std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "(unset)");
    if (which != "core" && which != "cnn" && which != "rnn" && which != "seq2seq" && which != "attention" && which != "gpt" &&
        which != "all") {
      std::fprintf(stderr, "ladder_bench: unknown benchmark '%s'; available: core, cnn, rnn, seq2seq, attention, gpt, all\n",
                   which.c_str());
      return 2;
    }
    if (which == "core" || which == "all") ladder::bench::run_core();
    if (which == "cnn" || which == "all") ladder::bench::run_cnn();
    if (which == "rnn" || which == "all") ladder::bench::run_rnn();
    if (which == "seq2seq" || which == "all") ladder::bench::run_seq2seq();
    if (which == "attention" || which == "all") ladder::bench::run_attention();
    if (which == "gpt" || which == "all") ladder::bench::run_gpt();
  } catch (const ladder::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
