// Reading a small file a lesson takes beside its data (another run's summary.json and CSV files)
// without trusting what the path is.
#pragma once

#include <cstdint>
#include <string>

namespace ladder::io {

// The whole file, read through a bounded, checked reader (core/file.h): a folder, a device such
// as /dev/zero, a named pipe, or a file above `max_bytes` is refused before anything is read,
// with "<op>: <path>: ..." .
std::string read_small_file(const char* op, const std::string& path, uint64_t max_bytes = uint64_t{16} << 20);

}  // namespace ladder::io
