// safetensors: the layout on disk, round trips, atomic writes, every rejection with its message,
// and a thousand corrupted files that must each load unchanged or throw.
#include "helpers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/tokenizer.h"
#include "file_helpers.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "nn/linear.h"
#include "optim/adam.h"

using namespace ladder;
using namespace ladder::io;
using ladder::testing::check_error;
using ladder::testing::Deadline;
using ladder::testing::make_fifo;
using ladder::testing::make_sparse;
using ladder::testing::peak_memory_growth;
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

// Writes `bytes` to `path` and checks that loading them fails with every fragment in the message.
void check_rejected(const std::string& path, const std::string& bytes, std::initializer_list<std::string> fragments) {
  write_bytes(path, bytes);
  check_error([&] { load_safetensors(path, Checksum::if_present); }, fragments);
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

TEST_CASE("round trip: empty tensors among many come back (an empty span [x, x] starts where the next tensor does)") {
  TempDir dir;
  std::map<std::string, Tensor> tensors;  // enough of them that the loader's sort is not an insertion sort
  for (int i = 0; i < 40; ++i) {
    const std::string name = (i < 10 ? "t0" : "t") + std::to_string(i);
    tensors[name] = i % 3 == 1 ? zeros({0, 4}) : full({2}, static_cast<float>(i));
  }
  save_safetensors(dir.file("e.safetensors"), tensors);
  const auto loaded = load_safetensors(dir.file("e.safetensors")).tensors;
  REQUIRE(loaded.size() == 40);
  CHECK(loaded.at("t01").shape() == Shape{0, 4});
  CHECK(loaded.at("t39").data()[1] == 39);
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
    check_rejected(path, bytes, fragments);
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

TEST_CASE("only a regular file is read as a checkpoint, and only by the sizes its header declares") {
  const Deadline deadline(60);  // before the fix, the named pipe blocked for ever
  TempDir dir;
  check_error([&] { load_safetensors(dir.path.string()); },
              {"load_safetensors", dir.path.string(), "is a folder, not a regular file"});
  fs::create_symlink("/dev/zero", dir.file("zero.safetensors"));
  check_error([&] { load_safetensors(dir.file("zero.safetensors")); },
              {"zero.safetensors", "is a character device (a link to /dev/zero), not a regular file"});
  const std::string fifo = make_fifo(dir.file("pipe.safetensors"));
  check_error([&] { load_safetensors(fifo); }, {"pipe.safetensors", "is a named pipe (FIFO), not a regular file"});

  // 1 GiB of zeros: the header length is 0, so only 8 bytes are read.
  const std::string zeros = make_sparse(dir.file("zeros.safetensors"), "", uint64_t{1} << 30);
  // A good header with one tensor, then a hole of 1 GiB that no tensor accounts for.
  const std::string head = plain_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", floats({1}));
  const std::string holed = make_sparse(dir.file("holed.safetensors"), head, uint64_t{1} << 30);
  const int64_t grown = peak_memory_growth([&] {
    check_error([&] { load_safetensors(zeros); }, {"zeros.safetensors", "malformed"});
    check_error([&] { load_safetensors(holed, Checksum::if_present); },
                {"holed.safetensors", std::to_string((uint64_t{1} << 30) - head.size()) + " bytes after the last tensor"});
  });
  CHECK(grown < (16 << 20));
  MESSAGE("refusing two 1 GiB sparse checkpoints raised the peak memory by ", grown >> 10, " KiB");
}

TEST_CASE("a header is JSON and nothing else: no NUL, no other bytes, no key twice") {
  TempDir dir;
  const std::string path = dir.file("h.safetensors");
  auto rejects = [&](const std::string& bytes, std::initializer_list<std::string> fragments) {
    check_rejected(path, bytes, fragments);
  };
  const std::string x = R"("x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  write_bytes(path, plain_file("{" + x + "}    ", floats({1})));  // the format pads with spaces
  CHECK(load_safetensors(path, Checksum::if_present).tensors.at("x").to_vector() == std::vector<float>{1});

  rejects(plain_file("{" + x + "}" + std::string("\0junk", 5), floats({1})),
          {"h.safetensors", "NUL byte at offset " + std::to_string(x.size() + 2)});
  rejects(plain_file("{" + x + "}\n", floats({1})), {"from its first byte '{' to its closing '}', followed only by spaces"});
  rejects(plain_file(" {" + x + "}", floats({1})), {"first byte '{'"});
  rejects(plain_file("{" + x + "} x", floats({1})), {"malformed"});
  rejects(plain_file("{" + x + "," + x + "}", floats({1})), {"the header names \"x\" twice"});
  rejects(plain_file(R"({"x":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}})", floats({1})),
          {"\"dtype\" appears twice in the entry of \"x\""});
  rejects(plain_file(R"({"__metadata__":{"a":"1","a":"2"}})", ""), {"\"a\" appears twice in the entry of \"__metadata__\""});

  // The checksum covers the header as parsed: a NUL would hide the bytes after it from both.
  save_safetensors(path, {{"x", tensor({1})}});
  std::string bytes = read_bytes(path);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  const size_t close = bytes.rfind('}', 8 + n - 1);
  bytes.insert(close + 1, std::string("\0\"y\":1", 6));
  n += 6;
  std::memcpy(bytes.data(), &n, 8);
  rejects(bytes, {"NUL byte"});
}

TEST_CASE("saving and loading refuse the same tensor names, with the same reason") {
  TempDir dir;
  const std::string path = dir.file("n.safetensors");
  auto reason = [](const std::string& message) { return message.substr(message.find("cannot name a tensor")); };
  for (const std::string& name : {std::string(), std::string("a\0b", 3), std::string("a\nb"), std::string("../x"),
                                  std::string("a..b"), std::string(".x"), std::string("x.")}) {
    CAPTURE(name);
    std::string saving, loading;
    try {
      save_safetensors(path, {{name, ones({1})}});
    } catch (const Error& e) {
      saving = e.what();
    }
    const std::string key = nlohmann::json(name).dump();
    write_bytes(dir.file("bad.safetensors"),
                plain_file("{" + key + R"(:{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", floats({1})));
    try {
      load_safetensors(dir.file("bad.safetensors"), Checksum::if_present);
    } catch (const Error& e) {
      loading = e.what();
    }
    REQUIRE(saving.find("save_safetensors") == 0);
    REQUIRE(loading.find("load_safetensors") == 0);
    CHECK(saving.find(key + " cannot name a tensor") != std::string::npos);
    CHECK(reason(saving) == reason(loading));
  }
  check_error([&] { save_safetensors(path, {{"a\nb", ones({1})}}); }, {"\"a\\nb\" cannot name a tensor", "control character"});
  check_error([&] { save_safetensors(path, {{"../x", ones({1})}}); }, {"empty part between dots"});
  check_error([&] { save_safetensors(path, {{"bad\xff", ones({1})}}); }, {"not valid UTF-8"});
  for (const std::string name : {"layer.weight", "dense/kernel:0", "gr\xc3\xbc\xc3\x9f" "e"}) {  // what other tools write
    save_safetensors(path, {{name, ones({1})}});
    CHECK(load_safetensors(path).tensors.count(name) == 1);
  }
}

TEST_CASE("a shape whose element count overflows is refused before anything uses it") {
  TempDir dir;
  const std::string path = dir.file("s.safetensors");
  auto with_shape = [&](const std::string& shape) {
    write_bytes(path, plain_file(R"({"x":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,0]}})", ""));
  };
  for (const std::string shape : {"[0,1099511627776,1099511627776,1099511627776]", "[1099511627776,1099511627776,0]",
                                  "[2199023255552,0]"}) {
    with_shape(shape);
    check_error([&] { load_safetensors(path, Checksum::if_present); }, {"tensor 'x': shape " + shape, "too large"});
  }
  with_shape("[0,1048576,1048576]");  // no elements, and 2^40 is not too large
  CHECK(load_safetensors(path, Checksum::if_present).tensors.at("x").shape() == Shape{0, 1048576, 1048576});
  with_shape("[1048576,1048576]");
  check_error([&] { load_safetensors(path, Checksum::if_present); }, {"(1048576,1048576) needs 4398046511104 bytes"});
}

TEST_CASE("a save removes the temporary files that killed saves left behind, never a live process's") {
  TempDir dir;
  const pid_t dead = fork();  // a child that is gone once reaped: its pid belongs to no process
  if (dead == 0) _exit(0);
  REQUIRE(dead > 0);
  REQUIRE(waitpid(dead, nullptr, 0) == dead);
  auto temp = [&](const std::string& name, pid_t pid) {
    const std::string file = dir.file("." + name + ".tmp-" + std::to_string(pid));
    write_bytes(file, std::string(1000, 'x'));
    return file;
  };
  const std::string stale = temp("model.safetensors", dead);
  const std::string stale_other = temp("optimizer.safetensors", dead);
  const std::string ours = temp("optimizer.safetensors", getpid());  // this process: a save in progress
  const std::string parents = temp("model.safetensors", getppid());  // another live process
  const std::string not_a_checkpoint = temp("notes.txt", dead);
  save_safetensors(dir.file("model.safetensors"), {{"x", ones({2})}});
  CHECK(!fs::exists(stale));
  CHECK(!fs::exists(stale_other));
  CHECK(fs::exists(ours));
  CHECK(fs::exists(parents));
  CHECK(fs::exists(not_a_checkpoint));
  CHECK(load_safetensors(dir.file("model.safetensors")).tensors.at("x").to_vector() == std::vector<float>{1, 1});
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

TEST_CASE("module checkpoints: save, reload, strict errors name the file") {
  TempDir dir;
  manual_seed(3);
  nn::Linear a(3, 2);
  save_module(dir.file("model.safetensors"), a, {{"lesson", "test"}});

  nn::Linear b(3, 2);
  const auto metadata = load_module(dir.file("model.safetensors"), b);
  CHECK(metadata.at("lesson") == "test");
  CHECK(b.weight.to_vector() == a.weight.to_vector());

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
