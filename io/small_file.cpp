#include "io/small_file.h"

#include "core/error.h"
#include "core/file.h"

namespace ladder::io {

std::string read_small_file(const char* op, const std::string& path, uint64_t max_bytes) {
  const RegularFile file(op, path);
  if (file.size() > max_bytes)
    fail(op, path, ": holds ", file.size(), " bytes, more than the ", max_bytes, " such a file can hold");
  std::string text(file.size(), '\0');
  file.read_at(0, text.data(), text.size());
  return text;
}

}  // namespace ladder::io
