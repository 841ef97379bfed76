#include "io/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "io/crc32.h"

namespace ladder::io {

static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian values");

namespace {

constexpr const char* kChecksumKey = "ladder_crc32";
constexpr uint64_t kMaxHeader = 100u << 20;  // the format's own limit is 100 MB

using Json = nlohmann::json;

// The checksum covers the header as parsed and dumped again (without the checksum itself), so
// a change in meaning anywhere in the header is caught, and the data bytes.
uint32_t checksum(Json header, const char* data, size_t size) {
  if (header.contains("__metadata__")) {
    header["__metadata__"].erase(kChecksumKey);
    if (header["__metadata__"].empty()) header.erase("__metadata__");
  }
  const std::string canonical = header.dump();
  return crc32(data, size, crc32(canonical.data(), canonical.size()));
}

std::string hex(uint32_t value) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", value);
  return buf;
}

void write_all(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("save_safetensors", path, ": write failed: ", std::strerror(errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  std::vector<char> data;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__" || name.empty()) fail("save_safetensors", path, ": '", name, "' cannot name a tensor");
    if (!t.defined()) fail("save_safetensors", path, ": tensor '", name, "' is undefined");
    const size_t begin = data.size(), bytes = static_cast<size_t>(t.numel()) * sizeof(float);
    data.resize(begin + bytes);
    if (bytes > 0) std::memcpy(data.data() + begin, t.data(), bytes);  // an empty vector's data() may be null
    header[name] = {{"dtype", "F32"}, {"shape", t.shape()}, {"data_offsets", {begin, begin + bytes}}};
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  header["__metadata__"][kChecksumKey] = hex(checksum(header, data.data(), data.size()));
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // pad so that the data starts 8-byte aligned
  const uint64_t length = text.size();

  // Write beside the target, flush to disk, then rename: readers see the old file or the new one.
  const std::filesystem::path target(path);
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
  const std::string temporary = (folder / cat(".", target.filename().string(), ".tmp-", getpid())).string();
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail("save_safetensors", path, ": cannot create ", temporary, ": ", std::strerror(errno));
  try {
    write_all(fd, reinterpret_cast<const char*>(&length), sizeof length, path);
    write_all(fd, text.data(), text.size(), path);
    write_all(fd, data.data(), data.size(), path);
    if (::fsync(fd) != 0) fail("save_safetensors", path, ": fsync failed: ", std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  ::close(fd);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail("save_safetensors", path, ": cannot rename the temporary file into place: ", std::strerror(error));
  }
  if (const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY); dir >= 0) {  // make the rename durable
    ::fsync(dir);
    ::close(dir);
  }
}

TensorFile load_safetensors(const std::string& path, Checksum verify) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("load_safetensors", path, ": cannot open: ", std::strerror(errno));
  const std::vector<char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&path](const auto&... parts) { fail("load_safetensors", path, ": ", parts...); };

  if (file.size() < 8) bad("the file has ", file.size(), " bytes; a safetensors file starts with an 8-byte header length");
  uint64_t length;
  std::memcpy(&length, file.data(), 8);
  if (length > kMaxHeader || length > file.size() - 8)
    bad("header length ", length, " runs past the end of the file (", file.size(), " bytes); the file is truncated or not safetensors");
  Json header;
  try {
    header = Json::parse(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(length));
  } catch (const Json::exception& e) {
    bad("the JSON header is malformed: ", e.what());
  }
  if (!header.is_object()) bad("the JSON header is not an object");
  const char* data = file.data() + 8 + length;
  const size_t data_size = file.size() - 8 - length;

  TensorFile out;
  struct Span { size_t begin, end; std::string name; Shape shape; };
  std::vector<Span> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) bad("__metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) bad("metadata '", key, "' is not a string");
        if (key != kChecksumKey) out.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
      bad("tensor '", name, "' needs dtype, shape and data_offsets");
    if (entry.size() != 3) bad("tensor '", name, "' has fields other than dtype, shape and data_offsets");
    if (!entry["dtype"].is_string()) bad("tensor '", name, "': dtype is not a string");
    if (entry["dtype"] != "F32") bad("tensor '", name, "' has dtype ", entry["dtype"].get<std::string>(), "; ladder reads F32 only");
    const Json& shape_json = entry["shape"];
    const Json& offsets = entry["data_offsets"];
    if (!shape_json.is_array()) bad("tensor '", name, "': shape is not a list");
    Shape shape;
    uint64_t count = 1;
    for (const Json& size : shape_json) {
      if (!size.is_number_unsigned()) bad("tensor '", name, "': shape holds ", size.dump(), ", not a size");
      const uint64_t s = size.get<uint64_t>();
      if (s > (uint64_t{1} << 40) || (s && count > (uint64_t{1} << 40) / s)) bad("tensor '", name, "': shape is too large");
      count *= s;
      shape.push_back(static_cast<int64_t>(s));
    }
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      bad("tensor '", name, "': data_offsets must be [begin, end]");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > data_size)
      bad("tensor '", name, "': data_offsets [", begin, ", ", end, "] fall outside the ", data_size, " data bytes");
    if (end - begin != count * sizeof(float))
      bad("tensor '", name, "': shape ", shape_str(shape), " needs ", count * sizeof(float), " bytes but data_offsets give ",
          end - begin);
    spans.push_back({begin, end, name, shape});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  size_t covered = 0;
  for (const Span& s : spans) {
    if (s.begin < covered) bad("tensor '", s.name, "' overlaps the tensor before it");
    if (s.begin > covered) bad("there is a gap of unused bytes before tensor '", s.name, "'");
    covered = s.end;
  }
  if (covered != data_size) bad(data_size - covered, " bytes after the last tensor belong to no tensor");
  const bool has_checksum = header.contains("__metadata__") && header["__metadata__"].contains(kChecksumKey);
  if (!has_checksum && verify == Checksum::required)
    bad("no ", kChecksumKey, " in the metadata: the file was not written by ladder, or its header is damaged "
        "(files from other tools load with Checksum::if_present)");
  if (has_checksum && header["__metadata__"][kChecksumKey] != hex(checksum(header, data, data_size)))
    bad("checksum mismatch: the file is corrupted");
  for (const Span& s : spans) {  // every check passed: only now is memory given to the tensors
    Tensor& t = out.tensors[s.name] = empty(s.shape);
    if (s.end > s.begin) std::memcpy(t.data(), data + s.begin, s.end - s.begin);
  }
  return out;
}

}  // namespace ladder::io
