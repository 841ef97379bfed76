// safetensors: the layout on disk, round trips, atomic writes, every rejection with its message,
// and a thousand corrupted files that must each load unchanged or throw.
#include "helpers.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/tokenizer.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "nn/linear.h"
#include "optim/adam.h"

using namespace ladder;
using namespace ladder::io;
using ladder::testing::check_error;
namespace fs = std::filesystem;

namespace {

// A fresh folder per test case, removed afterwards.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ladder_io_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  static inline int counter = 0;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file in the plain format (no checksum), as another tool would write it.
std::string plain_file(const std::string& header, const std::string& data) {
  const uint64_t n = header.size();
  std::string bytes(reinterpret_cast<const char*>(&n), 8);
  return bytes + header + data;
}

std::string floats(std::initializer_list<float> values) {
  return {reinterpret_cast<const char*>(values.begin()), values.size() * sizeof(float)};
}

std::map<std::string, Tensor> sample_tensors() {
  Generator gen(8);
  return {{"layer.weight", randn({3, 4}, gen)}, {"layer.bias", randn({4}, gen)}, {"scale", scalar(2.5f)},
          {"empty", zeros({0, 3})}};
}

void check_same(const TensorFile& loaded, const std::map<std::string, Tensor>& tensors,
                const std::map<std::string, std::string>& metadata) {
  REQUIRE(loaded.tensors.size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    REQUIRE(loaded.tensors.count(name));
    CHECK(loaded.tensors.at(name).shape() == t.shape());
    CHECK(std::memcmp(loaded.tensors.at(name).data(), t.data(), t.numel() * sizeof(float)) == 0);
  }
  CHECK(loaded.metadata == metadata);
}

}  // namespace

TEST_CASE("the file layout is safetensors: length, JSON header, aligned little-endian data") {
  TempDir dir;
  save_safetensors(dir.file("a.safetensors"), {{"x", tensor({1, 2, 3}, {3, 1})}}, {{"note", "hi"}});
  const std::string bytes = read_bytes(dir.file("a.safetensors"));
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);
  REQUIRE(bytes.size() == 8 + n + 12);
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  CHECK(header["x"]["dtype"] == "F32");
  CHECK(header["x"]["shape"] == nlohmann::json::array({3, 1}));
  CHECK(header["x"]["data_offsets"] == nlohmann::json::array({0, 12}));
  CHECK(header["__metadata__"]["note"] == "hi");
  CHECK(header["__metadata__"].contains("ladder_crc32"));
  CHECK(bytes.substr(8 + n) == floats({1, 2, 3}));
}

TEST_CASE("round trip: tensors and metadata come back bit for bit") {
  TempDir dir;
  const auto tensors = sample_tensors();
  save_safetensors(dir.file("m.safetensors"), tensors, {{"tokenizer", "{\"a\": 1}"}});
  check_same(load_safetensors(dir.file("m.safetensors")), tensors, {{"tokenizer", "{\"a\": 1}"}});
}

TEST_CASE("a file from another tool, without the checksum, loads when the checksum is not required") {
  TempDir dir;
  write_bytes(dir.file("p.safetensors"),
              plain_file(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                         floats({1, 2, 3})));
  check_error([&] { load_safetensors(dir.file("p.safetensors")); }, {"p.safetensors", "no ladder_crc32", "Checksum::if_present"});
  const TensorFile f = load_safetensors(dir.file("p.safetensors"), Checksum::if_present);
  CHECK(f.tensors.at("a").to_vector() == std::vector<float>{1, 2});
  CHECK(f.tensors.at("b").to_vector() == std::vector<float>{3});
}

TEST_CASE("writes are atomic: no temporary left behind, failures keep the old file") {
  TempDir dir;
  const std::string path = dir.file("c.safetensors");
  save_safetensors(path, {{"x", ones({2})}});
  save_safetensors(path, {{"x", zeros({2})}});  // replaces
  CHECK(load_safetensors(path).tensors.at("x").to_vector() == std::vector<float>{0, 0});
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++files;
  CHECK(files == 1);
  check_error([&] { save_safetensors(dir.file("missing/folder/x.safetensors"), {{"x", ones({1})}}); },
              {"save_safetensors", "missing/folder/x.safetensors", "cannot create"});
  check_error([&] { save_safetensors(path, {{"__metadata__", ones({1})}}); }, {"save_safetensors", "cannot name a tensor"});
  CHECK(load_safetensors(path).tensors.at("x").to_vector() == std::vector<float>{0, 0});
}

TEST_CASE("every kind of bad file is rejected with a message naming the file and the tensor") {
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  auto rejects = [&](const std::string& bytes, std::initializer_list<std::string> fragments) {
    write_bytes(path, bytes);
    check_error([&] { load_safetensors(path, Checksum::if_present); }, fragments);
  };
  check_error([&] { load_safetensors(dir.file("nope.safetensors")); }, {"load_safetensors", "nope.safetensors", "cannot open"});
  rejects("abc", {"bad.safetensors", "has 3 bytes"});
  rejects(plain_file("{}", "").substr(0, 8), {"header length 2 runs past the end"});
  rejects(plain_file("{\"x\": ", ""), {"malformed"});
  rejects(plain_file("[1, 2]", ""), {"not an object"});
  rejects(plain_file(R"({"x":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", "ab"), {"tensor 'x' has dtype F16", "F32 only"});
  rejects(plain_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", floats({1})), {"tensor 'x'", "(2) needs 8 bytes", "give 4"});
  rejects(plain_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})", floats({1})), {"tensor 'x'", "fall outside the 4 data bytes"});
  rejects(plain_file(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", floats({1})), {"tensor 'x'", "not a size"});
  rejects(plain_file(R"({"x":{"dtype":"F32","shape":[1]}})", floats({1})), {"tensor 'x' needs dtype, shape and data_offsets"});
  rejects(plain_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                     floats({1, 2})),
          {"tensor 'y' overlaps"});
  rejects(plain_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", floats({1, 2})), {"gap", "before tensor 'x'"});
  rejects(plain_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", floats({1, 2})), {"4 bytes after the last tensor"});
  rejects(plain_file(R"({"__metadata__":{"a":1}})", ""), {"metadata 'a' is not a string"});
  rejects(plain_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":[[[[]]]]}})", floats({1})),
          {"tensor 'x' has fields other than"});

  save_safetensors(path, {{"x", tensor({1, 2})}});
  std::string bytes = read_bytes(path);
  bytes.back() ^= 0x40;  // one bit of one value
  rejects(bytes, {"checksum mismatch", "corrupted"});
}

TEST_CASE("a thousand corrupted or truncated copies each load unchanged or throw") {
  TempDir dir;
  const auto tensors = sample_tensors();
  const std::map<std::string, std::string> metadata = {{"tokenizer", "{\"tokens\": [\"a\", \"b\"]}"}};
  save_safetensors(dir.file("good.safetensors"), tensors, metadata);
  const std::string good = read_bytes(dir.file("good.safetensors"));
  uint64_t header_length;
  std::memcpy(&header_length, good.data(), 8);
  Generator gen(2024);
  int loaded = 0, rejected = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    std::string bytes = good;
    switch (trial % 4) {
      case 0:  // truncated anywhere
        bytes.resize(static_cast<size_t>(gen.randint(0, static_cast<int64_t>(good.size()))));
        break;
      case 1:  // a few random bytes anywhere
        for (int64_t k = gen.randint(1, 5); k > 0; --k)
          bytes[static_cast<size_t>(gen.randint(0, static_cast<int64_t>(bytes.size())))] = static_cast<char>(gen.randint(0, 256));
        break;
      case 2:  // one byte of the JSON header
        bytes[static_cast<size_t>(8 + gen.randint(0, static_cast<int64_t>(header_length)))] = static_cast<char>(gen.randint(32, 127));
        break;
      case 3:  // a wrong header length
        bytes[static_cast<size_t>(gen.randint(0, 8))] = static_cast<char>(gen.randint(0, 256));
        break;
    }
    write_bytes(dir.file("fuzz.safetensors"), bytes);
    try {
      const TensorFile f = load_safetensors(dir.file("fuzz.safetensors"));
      check_same(f, tensors, metadata);
      ++loaded;
    } catch (const Error&) {
      ++rejected;
    }
  }
  CHECK(loaded + rejected == 1000);
  CHECK(rejected > 900);
  MESSAGE("corrupted copies: ", loaded, " loaded unchanged, ", rejected, " rejected");
}

TEST_CASE("module and optimizer checkpoints: save, reload, strict errors name the file") {
  TempDir dir;
  manual_seed(3);
  nn::Linear a(3, 2);
  optim::Adam opt(a.named_parameters(), {});
  sum(a(ones({1, 3}))).backward();
  opt.step();
  save_module(dir.file("model.safetensors"), a, {{"lesson", "test"}});
  save_optimizer(dir.file("optimizer.safetensors"), opt);

  nn::Linear b(3, 2);
  const auto metadata = load_module(dir.file("model.safetensors"), b);
  CHECK(metadata.at("lesson") == "test");
  CHECK(b.weight.to_vector() == a.weight.to_vector());
  optim::Adam opt_b(b.named_parameters(), {});
  load_optimizer(dir.file("optimizer.safetensors"), opt_b);
  CHECK(opt_b.steps() == 1);

  nn::Linear wrong(4, 2);
  check_error([&] { load_module(dir.file("model.safetensors"), wrong); },
              {"load_state_dict", "'weight' has shape (2,3) in the checkpoint but (2,4)", "model.safetensors"});
  nn::Linear no_bias(3, 2, {.bias = false});
  check_error([&] { load_module(dir.file("model.safetensors"), no_bias); }, {"unexpected bias", "model.safetensors"});
}

TEST_CASE("a tokenizer travels with its model in the checkpoint metadata") {
  TempDir dir;
  const data::Tokenizer tokenizer = data::Tokenizer::chars({"hello world"});
  nn::Linear model(2, 2);
  save_module(dir.file("lm.safetensors"), model, {{"tokenizer", tokenizer.to_json()}});
  nn::Linear reloaded(2, 2);
  const auto metadata = load_module(dir.file("lm.safetensors"), reloaded);
  const data::Tokenizer back = data::Tokenizer::from_json(metadata.at("tokenizer"));
  CHECK(back.vocab_size() == tokenizer.vocab_size());
  CHECK(back.decode(back.encode("hello")) == "hello");
}
