// How much memory a call adds at its peak, as Linux counts it for this process: the rise of the
// peak resident set size (VmHWM in /proc/self/status, reset just before the call) above the
// resident size before it (VmRSS). Pages count once they are touched, so this is the memory the
// call really used, whatever allocator served it. Used by `./ladder bench attention` and lesson 12.
#pragma once

#include <cstdint>
#include <functional>

namespace ladder {

// Runs `call` once and returns the bytes its peak adds. Free heap memory is returned to the system
// first (the allocator keeps freed blocks, core/tensor.cpp), so that an earlier, larger call's
// leftovers do not hide this one's use. Fails when /proc/self is not there (not Linux).
int64_t peak_bytes_added(const std::function<void()>& call);

}  // namespace ladder
