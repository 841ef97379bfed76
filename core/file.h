// Reading a file that a user names (training text, a checkpoint) without trusting what it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ladder {

// A regular file opened for reading. Anything else is refused before a byte is read: a folder,
// a device such as /dev/zero (it never ends), a named pipe (reading it would wait for ever).
// Readers check size() against their own limits first and then read only what they need.
class RegularFile {
 public:
  // Throws ladder::Error "<op>: <path>: ..." when the path cannot be opened or is not a regular file.
  RegularFile(const char* op, std::string path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  uint64_t size() const { return size_; }  // in bytes, when it was opened

  // Reads bytes [offset, offset + count) into `out`; throws when the file ends sooner (it was
  // cut short while being read).
  void read_at(uint64_t offset, void* out, size_t count) const;

 private:
  const char* op_;
  std::string path_;
  int fd_;
  uint64_t size_;
};

}  // namespace ladder
