#include "io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "core/error.h"
#include "core/file.h"
#include "io/atomic_file.h"
#include "io/crc32.h"

namespace ladder::io {

static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian values");

namespace {

constexpr const char* kChecksumKey = "ladder_crc32";
constexpr uint64_t kMaxHeader = 100u << 20;            // the format's own limit is 100 MB
constexpr uint64_t kMaxElements = uint64_t{1} << 40;  // 4 TiB of floats: a larger shape is damage

using Json = nlohmann::json;

template <class... Parts>
[[noreturn]] void bad_file(const std::string& path, const Parts&... parts) {
  fail("load_safetensors", path, ": ", parts...);
}

// The checksum of the header as parsed and dumped again (without the checksum itself), so that a
// change in meaning anywhere in the header is caught; the data bytes continue it with crc32().
uint32_t header_checksum(Json header) {
  if (header.contains("__metadata__")) {
    header["__metadata__"].erase(kChecksumKey);
    if (header["__metadata__"].empty()) header.erase("__metadata__");
  }
  const std::string canonical = header.dump();
  return crc32(canonical.data(), canonical.size());
}

std::string hex(uint32_t value) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", value);
  return buf;
}

// A name quoted as JSON writes it, its control characters escaped: fit to print in a message.
std::string printable(const std::string& name) { return Json(name).dump(-1, ' ', false, Json::error_handler_t::replace); }

// Why `name` cannot name a tensor, or "" when it can.
std::string name_problem(const std::string& name) {
  if (name.empty()) return "a name must not be empty";
  if (name == "__metadata__") return "the format keeps this key for the metadata";
  for (const char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      return "it holds a control character (a NUL, a newline, ...); a name must print on one line";
  if (name.front() == '.' || name.back() == '.' || name.find("..") != std::string::npos)
    return "it has an empty part between dots (as in '../x' or 'a..b'); names are dotted paths like 'layer.weight'";
  try {
    (void)Json(name).dump();
  } catch (const Json::exception&) {
    return "it is not valid UTF-8";
  }
  return "";
}

// Saving and loading both check names here, so that every file ladder writes loads again and
// nothing loads that ladder would refuse to write.
void check_name(const char* op, const std::string& path, const std::string& name) {
  if (const std::string problem = name_problem(name); !problem.empty())
    fail(op, path, ": ", printable(name), " cannot name a tensor: ", problem);
}

// The header is JSON and nothing else: no NUL byte (a parser would stop there and leave the rest
// unread and unchecked), no key twice in one object (a parser would keep one of them silently),
// and from its first byte '{' to the closing '}' followed only by spaces (the format's padding).
Json parse_header(const std::string& path, const std::string& text) {
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    bad_file(path, "the header holds a NUL byte at offset ", nul, "; a header is JSON text only");
  struct Object {
    std::string name;            // the key it is the value of; empty for the header itself
    std::set<std::string> keys;  // the keys seen in it so far
  };
  std::vector<Object> open;  // the objects being parsed, innermost last
  std::string last_key;
  auto refuse_duplicates = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      open.push_back({open.empty() ? "" : last_key, {}});
    } else if (event == Json::parse_event_t::object_end) {
      open.pop_back();
    } else if (event == Json::parse_event_t::key) {
      last_key = parsed.get<std::string>();
      if (!open.back().keys.insert(last_key).second) {
        if (open.size() == 1) bad_file(path, "the header names ", printable(last_key), " twice; each name must appear once");
        bad_file(path, printable(last_key), " appears twice in the entry of ", printable(open.back().name));
      }
    }
    return true;
  };
  Json header;
  try {
    header = Json::parse(text, refuse_duplicates);
  } catch (const Json::exception& e) {
    bad_file(path, "the JSON header is malformed: ", e.what());
  }
  if (!header.is_object()) bad_file(path, "the JSON header is not an object");
  if (text.front() != '{' || text[text.find_last_not_of(' ')] != '}')
    bad_file(path, "the header must run from its first byte '{' to its closing '}', followed only by spaces");
  return header;
}

}  // namespace

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  std::vector<char> data;
  for (const auto& [name, t] : tensors) {
    check_name("save_safetensors", path, name);
    if (!t.defined()) fail("save_safetensors", path, ": tensor '", name, "' is undefined");
    const size_t begin = data.size(), bytes = static_cast<size_t>(t.numel()) * sizeof(float);
    data.resize(begin + bytes);
    if (bytes > 0) std::memcpy(data.data() + begin, t.data(), bytes);  // an empty vector's data() may be null
    header[name] = {{"dtype", "F32"}, {"shape", t.shape()}, {"data_offsets", {begin, begin + bytes}}};
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  header["__metadata__"][kChecksumKey] = hex(crc32(data.data(), data.size(), header_checksum(header)));
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // pad so that the data starts 8-byte aligned
  const uint64_t length = text.size();
  write_atomically("save_safetensors", path,
                   {{reinterpret_cast<const char*>(&length), sizeof length}, text, {data.data(), data.size()}});
}

TensorFile load_safetensors(const std::string& path, Checksum verify) {
  // Read by the sizes the header declares, each checked against the file's size first.
  const RegularFile file("load_safetensors", path);
  if (file.size() < 8)
    bad_file(path, "the file has ", file.size(), " bytes; a safetensors file starts with an 8-byte header length");
  uint64_t length;
  file.read_at(0, &length, sizeof length);
  if (length > kMaxHeader || length > file.size() - 8)
    bad_file(path, "header length ", length, " runs past the end of the file (", file.size(),
             " bytes); the file is truncated or not safetensors");
  std::string text(length, '\0');
  file.read_at(8, text.data(), length);
  const Json header = parse_header(path, text);
  const uint64_t data_start = 8 + length, data_size = file.size() - data_start;

  TensorFile out;
  struct Span { uint64_t begin, end; std::string name; Shape shape; };
  std::vector<Span> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) bad_file(path, "__metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) bad_file(path, "metadata '", key, "' is not a string");
        if (key != kChecksumKey) out.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    check_name("load_safetensors", path, name);
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
      bad_file(path, "tensor '", name, "' needs dtype, shape and data_offsets");
    if (entry.size() != 3) bad_file(path, "tensor '", name, "' has fields other than dtype, shape and data_offsets");
    if (!entry["dtype"].is_string()) bad_file(path, "tensor '", name, "': dtype is not a string");
    if (entry["dtype"] != "F32")
      bad_file(path, "tensor '", name, "' has dtype ", entry["dtype"].get<std::string>(), "; ladder reads F32 only");
    const Json& shape_json = entry["shape"];
    const Json& offsets = entry["data_offsets"];
    if (!shape_json.is_array()) bad_file(path, "tensor '", name, "': shape is not a list");
    Shape shape;
    uint64_t count = 1, nonzero = 1;  // nonzero: the product without the zero sizes, bounded so nothing overflows
    for (const Json& size : shape_json) {
      if (!size.is_number_unsigned()) bad_file(path, "tensor '", name, "': shape holds ", size.dump(), ", not a size");
      const uint64_t s = size.get<uint64_t>();
      if (s > kMaxElements || (s > 0 && nonzero > kMaxElements / s))
        bad_file(path, "tensor '", name, "': shape ", shape_json.dump(),
                 " is too large (its nonzero sizes multiply to more than 2^40 elements); the header is damaged");
      nonzero *= std::max<uint64_t>(s, 1);
      count *= s;
      shape.push_back(static_cast<int64_t>(s));
    }
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      bad_file(path, "tensor '", name, "': data_offsets must be [begin, end]");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > data_size)
      bad_file(path, "tensor '", name, "': data_offsets [", begin, ", ", end, "] fall outside the ", data_size, " data bytes");
    if (end - begin != count * sizeof(float))
      bad_file(path, "tensor '", name, "': shape ", shape_str(shape), " needs ", count * sizeof(float),
               " bytes but data_offsets give ", end - begin);
    spans.push_back({begin, end, name, shape});
  }
  // An empty tensor's span [x, x] goes before a tensor that starts at x, not after it.
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return std::pair(a.begin, a.end) < std::pair(b.begin, b.end); });
  uint64_t covered = 0;
  for (const Span& s : spans) {
    if (s.begin < covered) bad_file(path, "tensor '", s.name, "' overlaps the tensor before it");
    if (s.begin > covered) bad_file(path, "there is a gap of unused bytes before tensor '", s.name, "'");
    covered = s.end;
  }
  if (covered != data_size) bad_file(path, data_size - covered, " bytes after the last tensor belong to no tensor");
  const bool has_checksum = header.contains("__metadata__") && header["__metadata__"].contains(kChecksumKey);
  if (!has_checksum && verify == Checksum::required)
    bad_file(path, "no ", kChecksumKey, " in the metadata: the file was not written by ladder, or its header is damaged "
             "(files from other tools load with Checksum::if_present)");
  // The header holds together and matches the file's size: only now is memory given to the
  // tensors, and each reads its own bytes. Nothing is returned before the checksum agrees.
  uint32_t crc = header_checksum(header);
  for (const Span& s : spans) {
    Tensor& t = out.tensors[s.name] = empty(s.shape);
    file.read_at(data_start + s.begin, t.data(), s.end - s.begin);
    crc = crc32(t.data(), s.end - s.begin, crc);
  }
  if (has_checksum && header["__metadata__"][kChecksumKey] != hex(crc)) bad_file(path, "checksum mismatch: the file is corrupted");
  return out;
}

}  // namespace ladder::io
