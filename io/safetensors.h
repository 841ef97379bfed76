// Reading and writing the safetensors format, which PyTorch users can open too:
//   8 bytes   little-endian length N of the header
//   N bytes   JSON: {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
//                    "__metadata__": {"key": "value", ...}}
//   the rest  the raw little-endian float32 values, offsets counted from here
#pragma once

#include <map>
#include <string>

#include "core/tensor.h"

namespace ladder::io {

struct TensorFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;  // without the checksum entry
};

// Writes atomically (io/atomic_file.h): a crash never leaves a half-written file under the real
// name, and temporary files of killed saves are cleaned up. The metadata also gets "ladder_crc32",
// a checksum of the header and the data, which load_safetensors verifies. A tensor name must be
// non-empty UTF-8 on one line (no NUL, no newline) and a dotted path without empty parts (no
// "../", no "a..b"); loading refuses exactly the names that saving refuses.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Whether a file must carry ladder's checksum. Files written by ladder always do, and requiring
// it means that damage anywhere (even to the checksum's own name) is caught; files written by
// other tools have none, and can only be checked for consistency.
enum class Checksum { required, if_present };

// Reads and checks everything: sizes, the JSON (nothing but JSON, no key twice), names, dtypes,
// shapes, offsets (in range, no overlap, no holes) and the checksum. Only a regular file is read
// (not a folder, a device or a named pipe), and only as many bytes as its header declares, after
// they were checked against the file's size. A bad file throws ladder::Error naming the file and
// the tensor; nothing is returned half-read.
TensorFile load_safetensors(const std::string& path, Checksum checksum = Checksum::required);

}  // namespace ladder::io
