#include "dist/ring_all_reduce.h"

#include <vector>

namespace ladder::dist {

void ring_all_reduce(const Communicator& comm, float* data, int64_t n) {
  const int N = comm.size(), rank = comm.rank();
  if (N == 1) return;
  const int next = (rank + 1) % N, previous = (rank + N - 1) % N;
  // Chunk c is data[begin(c) .. begin(c + 1)): sizes differ by at most one, some may be empty.
  const auto begin = [&](int c) { return n * c / N; };
  const auto size = [&](int c) { return begin(c + 1) - begin(c); };
  const auto chunk_at = [&](int step_back) { return ((rank - step_back) % N + N) % N; };
  std::vector<float> received(static_cast<size_t>(size(N - 1)));  // the largest chunk
  for (int step = 0; step < N - 1; ++step) {  // 1. reduce-scatter
    const int out = chunk_at(step), in = chunk_at(step + 1);
    comm.send_receive(data + begin(out), size(out), next, received.data(), size(in), previous);
    float* mine = data + begin(in);
    for (int64_t i = 0; i < size(in); ++i) mine[i] += received[static_cast<size_t>(i)];
  }
  for (int step = 0; step < N - 1; ++step) {  // 2. all-gather: chunk rank + 1 is complete here
    const int out = chunk_at(step - 1), in = chunk_at(step);
    comm.send_receive(data + begin(out), size(out), next, data + begin(in), size(in), previous);
  }
}

double ring_bytes_sent(double bytes, int processes) { return 2.0 * (processes - 1) / processes * bytes; }

}  // namespace ladder::dist
