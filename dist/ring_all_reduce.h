// The ring all-reduce, written out: how N processes sum a buffer so that each sends and receives
// about 2 (N - 1) / N times the buffer, whatever N is (sending it whole to everyone would cost
// N - 1 times). The buffer is cut into N chunks; the processes form a ring, each sending to the
// next (rank + 1) and receiving from the one before (rank - 1).
//   1. reduce-scatter, N - 1 steps: each passes a chunk on and adds the chunk it receives to its
//      own; after them process r holds chunk (r + 1) mod N summed over every process;
//   2. all-gather, N - 1 steps: each passes a finished chunk on and keeps the one it receives.
// Each chunk is summed once, in one order, and copied everywhere: every process ends with the
// same bits. Communicator::all_reduce is MPI's own, the reference the tests hold this one to.
#pragma once

#include <cstdint>

#include "dist/communicator.h"

namespace ladder::dist {

// data: n floats on every process -> their elementwise sum, on every process.
void ring_all_reduce(const Communicator& comm, float* data, int64_t n);

// Bytes one process sends (and receives) in ring_all_reduce of `bytes` over `processes`:
// 2 (N - 1) / N of them, the rate a measured time turns into a bandwidth.
double ring_bytes_sent(double bytes, int processes);

}  // namespace ladder::dist
