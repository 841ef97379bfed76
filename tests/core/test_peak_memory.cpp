// core/peak_memory.h: the memory a call's peak adds, as Linux counts it for the process.
#include "helpers.h"

#include "core/peak_memory.h"

using namespace ladder;

namespace {

constexpr int64_t kMiB = 1 << 20;

// Fills 64 MiB of floats (every page touched), reads one back and frees them.
void touch_64_mib() {
  const Tensor block = ones({16 * kMiB});
  CHECK(block.data()[16 * kMiB - 1] == 1);
}

}  // namespace

TEST_CASE("peak_bytes_added counts the pages a call touches, even when the allocator kept them from before") {
  const int64_t first = peak_bytes_added(touch_64_mib);
  CHECK(first >= 63 * kMiB);
  CHECK(first < 72 * kMiB);
  // The allocator keeps the freed block for reuse (core/tensor.cpp); without returning it to the
  // system first, the second call would reuse resident pages and seem to add nothing.
  const int64_t second = peak_bytes_added(touch_64_mib);
  CHECK(second >= 63 * kMiB);
  CHECK(second < 72 * kMiB);
  CHECK(peak_bytes_added([] {}) < 2 * kMiB);
}
