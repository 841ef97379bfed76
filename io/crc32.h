// CRC-32 (the checksum of zip and PNG), to tell a corrupted checkpoint from a good one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ladder::io {

// Continues a running checksum over `size` more bytes; start with crc = 0.
uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);

}  // namespace ladder::io
