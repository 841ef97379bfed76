// Text loading, tokenizers, batchers (lines framed and padded too), and lesson 05's N-vs-1 task.
#include "helpers.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "data/batcher.h"
#include "data/line_batch.h"
#include "data/symbol_sequences.h"
#include "data/text.h"
#include "data/tokenizer.h"
#include "data/visible_text.h"
#include "file_helpers.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_error;
using ladder::testing::check_tensor;
using ladder::testing::Deadline;
using ladder::testing::make_fifo;
using ladder::testing::make_sparse;
using ladder::testing::peak_memory_growth;
namespace fs = std::filesystem;

namespace {

std::string temp_file(const std::string& name, const std::string& content) {
  const fs::path path = fs::temp_directory_path() / ("ladder_data_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

std::string numbered_lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += "line " + std::to_string(i) + " ab\n";
  return text;
}

}  // namespace

TEST_CASE("reading text: UTF-8 characters, and the files that are refused") {
  CHECK(utf8_chars("aé€😀") == std::vector<std::string>{"a", "é", "€", "😀"});
  CHECK(split_lines("a\r\n\nb\n") == std::vector<std::string>{"a", "b"});
  check_error([] { read_text_file("/nonexistent/file.txt"); }, {"read_text", "/nonexistent/file.txt", "cannot open"});
  check_error([] { read_text_file(temp_file("empty.txt", "")); }, {"read_text", "empty.txt", "the file is empty"});
  check_error([] { read_text_file(temp_file("blank.txt", " \n\n")); }, {"read_text", "blank.txt", "only blanks", "no text"});
  check_error([] { read_text_file(temp_file("tabs.txt", "\t\t\t\n\t\t\n")); }, {"tabs.txt", "only blanks (spaces, tabs, line ends)"});
  check_error([] { read_text_file(temp_file("bin.txt", std::string("ab\0cd", 5))); }, {"binary", "NUL byte at offset 2"});
  check_error([] { read_text_file(temp_file("latin1.txt", "caf\xe9 noir")); }, {"not UTF-8", "offset 3"});
  check_error([] { read_text_file(temp_file("overlong.txt", "a\xc0\xaf" "b")); }, {"not UTF-8", "offset 1"});
  check_error([] { read_text_file(temp_file("surrogate.txt", "ab\xed\xa0\x80")); }, {"not UTF-8", "offset 2"});
  check_error([] { read_text_file(temp_file("too_big.txt", "\xf4\x90\x80\x80")); }, {"not UTF-8", "offset 0"});
  check_error([] { load_text({.data = temp_file("one.txt", "aaaa\naaa\n")}); }, {"load_text", "one.txt", "1 distinct character"});
  check_error([] { load_text({.data = temp_file("short.txt", "ab\n"), .lines = true}); }, {"one line", "--val"});
  check_error([] { load_text({}); }, {"load_text", "--data"});
  // In lines mode a line of spaces alone is a sequence of no words: refused with its number.
  check_error([] { load_text({.data = temp_file("spaces.txt", "ab\r\n \xC2\xA0 \r\ncd\n"), .lines = true}); },
              {"spaces.txt:2", "only spaces"});
}

TEST_CASE("only regular files are read as text: no device, no named pipe, nothing past the size limit") {
  const Deadline deadline(60);  // before the fix, the named pipe blocked for ever
  const std::string fifo = make_fifo((fs::temp_directory_path() / ("ladder_data_" + std::to_string(getpid()) + "_pipe")).string());
  check_error([&] { read_text_file(fifo); }, {"read_text", fifo, "is a named pipe (FIFO), not a regular file"});
  check_error([&] { load_text({.data = temp_file("train.txt", numbered_lines(40)), .val = fifo}); }, {fifo, "named pipe"});
  check_error([] { read_text_file("/dev/zero"); }, {"read_text", "/dev/zero", "is a character device"});
  const std::string link = temp_file("zero-link.txt", "");
  fs::remove(link);
  fs::create_symlink("/dev/zero", link);
  check_error([&] { read_text_file(link); }, {link, "character device (a link to /dev/zero)"});

  // Refused from the size alone: the file is not read (its zeros would say "binary" otherwise).
  const std::string big = make_sparse(temp_file("big.txt", ""), "hello\n", kMaxTextBytes + 1);
  const int64_t grown = peak_memory_growth([&] {
    check_error([&] { read_text_file(big); }, {"read_text", "big.txt: the file holds 268435457 bytes (257 MiB)",
                                               "at most 256 MiB of text", "smaller file"});
  });
  CHECK(grown < (16 << 20));
  MESSAGE("refusing a 256 MiB sparse text file raised the peak memory by ", grown >> 10, " KiB");

  const fs::path folder = fs::temp_directory_path() / ("ladder_big_folder_" + std::to_string(getpid()));
  fs::create_directories(folder);
  make_sparse((folder / "a.txt").string(), "a\n", 200 << 20);
  make_sparse((folder / "b.txt").string(), "b\n", 200 << 20);
  check_error([&] { read_text_file(folder.string()); }, {"the files in the folder hold 419430400 bytes (400 MiB)", "at most 256 MiB"});
  fs::remove_all(folder);
  fs::remove(fifo);
  fs::remove(link);
  fs::remove(big);
}

TEST_CASE("a folder of text skips what is not a regular file, such as a named pipe") {
  const Deadline deadline(60);
  const fs::path folder = fs::temp_directory_path() / ("ladder_pipe_folder_" + std::to_string(getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  std::ofstream(folder / "a.txt") << "text\n";
  make_fifo((folder / "b.fifo").string());
  CHECK(read_text_file(folder.string()) == "text\n\n");
  fs::remove_all(folder);
}

TEST_CASE("a 10 MB single line costs a few bytes per character, not a string per character" * doctest::skip(testing::kSanitized)) {
  std::string line(10'000'000, 'a');
  for (size_t i = 0; i < line.size(); i += 7) line[i] = static_cast<char>('b' + i % 13);
  const std::string path = temp_file("one_line.txt", line);
  const std::string val = temp_file("one_line_val.txt", "abcdefg\n");
  line = std::string();
  size_t characters = 0;
  const int64_t grown = peak_memory_growth([&] {
    const TextData text = load_text({.data = path, .val = val});
    const Tokenizer tokenizer = char_tokenizer(text, false);
    const EncodedText ids = encode_text(text, tokenizer, false);
    characters = ids.train.at(0).size();
  });
  CHECK(characters == 10'000'001);  // and the "\n" that ends the stream
  // The text is held a few times over (file, lines, stream) and the ids take 4 bytes each: 85 MiB
  // (142 MiB under AddressSanitizer). Before, each character became a std::string twice: 796 MiB.
  CHECK(grown < 300'000'000);
  MESSAGE("loading, tokenizing and encoding a 10 MB line raised the peak memory by ", grown >> 20, " MiB");
  fs::remove(path);
}

TEST_CASE("the train/validation split is seeded, disjoint and complete") {
  const std::string path = temp_file("lines.txt", numbered_lines(200));
  const TextData a = load_text({.data = path, .lines = true, .seed = 1});
  const TextData b = load_text({.data = path, .lines = true, .seed = 1});
  const TextData c = load_text({.data = path, .lines = true, .seed = 2});
  CHECK(a.train == b.train);
  CHECK(a.val == b.val);
  CHECK(a.val != c.val);
  CHECK(a.val.size() == 20);
  std::set<std::string> all(a.train.begin(), a.train.end());
  for (const std::string& line : a.val) CHECK(all.insert(line).second);
  CHECK(all.size() == 200);
  // Stream mode holds out blocks of 16 consecutive lines.
  const TextData s = load_text({.data = path, .seed = 1});
  CHECK(s.val.size() % 16 == 0);
  CHECK(s.train.size() + s.val.size() == 200);
  // --val replaces the split.
  const TextData v = load_text({.data = path, .val = temp_file("val.txt", "hello\nworld\n")});
  CHECK(v.train.size() == 200);
  CHECK(v.val == std::vector<std::string>{"hello", "world"});
  CHECK(join_lines({"a", "b"}) == "a\nb\n");
}

TEST_CASE("a stream that keeps its empty lines is the text as it is; without, they are dropped") {
  const std::string text = "one\n\ntwo\r\n\n\nthree\n";
  CHECK(split_lines(text) == std::vector<std::string>{"one", "two", "three"});
  CHECK(join_lines(split_lines(text, /*keep_empty=*/true)) == "one\n\ntwo\n\n\nthree\n");
  const TextData kept = load_text({.data = temp_file("empty_lines.txt", text), .val = temp_file("val_empty.txt", "a\n\nb\n"),
                                   .keep_empty_lines = true});
  CHECK(kept.train.size() == 6);
  CHECK(kept.val == std::vector<std::string>{"a", "", "b"});
}

TEST_CASE("lines framed for a decoder: <bos> line, then <eos> as padding; targets line <eos>, then no answer") {
  const LineMarkers markers{.bos = 0, .eos = 1};
  const Batch b = frame_lines({{5, 6, 7}, {8}, {}}, 5, markers);
  const float bos = 0, eos = 1, none = kNoAnswer;
  check_tensor(b.x, {3, 5}, {bos, 5, 6, 7, eos, /**/ bos, 8, eos, eos, eos, /**/ bos, eos, eos, eos, eos});
  check_tensor(b.y, {3, 5}, {5, 6, 7, eos, none, /**/ 8, eos, none, none, none, /**/ eos, none, none, none, none});
  CHECK(frame_lines({{5, 6, 7, 8}}, 5, markers).y.data()[4] == eos);  // a line of width - 1 fills its row exactly
  check_error([&] { frame_lines({{5, 6, 7, 8, 9}}, 5, markers); }, {"frame_lines", "5 tokens", "6 positions", "5 wide"});
  check_error([&] { frame_lines({}, 5, markers); }, {"frame_lines", "no lines"});
  // The markers come from the vocabulary: a stream's has none to frame with.
  const LineMarkers found = line_markers(Tokenizer::chars({"ab"}, {"<bos>", "<eos>"}));
  CHECK(found.bos == 0);
  CHECK(found.eos == 1);
  check_error([] { line_markers(Tokenizer::chars({"ab"}, {})); }, {"line_markers", "no <bos> or no <eos>"});
}

TEST_CASE("line batcher: random whole lines, framed; a line too long for the rows is refused with its number") {
  const std::vector<std::vector<int>> lines = {{4, 5}, {6}, {7, 8, 9}};
  const LineBatcher batcher(lines, 4, {.bos = 1, .eos = 2});
  Generator gen(3);
  const Batch b = batcher.sample(50, gen);
  REQUIRE(b.x.shape() == Shape{50, 4});
  std::set<int> first_chars;
  for (int64_t r = 0; r < 50; ++r) {
    const float* y = b.y.data() + r * 4;
    std::vector<int> line;
    for (int64_t t = 0; y[t] != 2; ++t) line.push_back(static_cast<int>(y[t]));
    CHECK(std::find(lines.begin(), lines.end(), line) != lines.end());
    first_chars.insert(line.front());
  }
  CHECK(first_chars.size() == 3);  // every line comes up
  check_error([] { LineBatcher({{4}, {5, 6, 7, 8}}, 4, {.bos = 1, .eos = 2}); }, {"LineBatcher", "line 2", "4 tokens", "5 positions"});
  check_error([] { LineBatcher({}, 4, {.bos = 1, .eos = 2}); }, {"LineBatcher", "no lines"});
}

TEST_CASE("line shape: lines numbered from 1, empty ones counted, the longest in characters") {
  const LineShape shape = line_shape("ab\n\r\n\xc3\xa9t\xc3\xa9s\n\nabcd\r\nlast");
  CHECK(shape.lines == 6);
  CHECK(shape.empty == 2);
  CHECK(shape.longest == 4);  // "\xc3\xa9t\xc3\xa9s" is 4 characters in 6 bytes, as long as "abcd"
  CHECK(shape.longest_line == 3);
  CHECK(line_shape("one line").lines == 1);
}

TEST_CASE("character tokenizer: specials first, round trip, unknowns, saved as JSON") {
  const Tokenizer t = Tokenizer::chars({"hello", "wörld"});
  CHECK(t.vocab_size() == 4 + 8);  // specials + d e h l o r w ö
  CHECK(t.token(Tokenizer::kBos) == "<bos>");
  CHECK(t.decode(t.encode("hello wörld")) != "hello wörld");  // ' ' was never seen
  CHECK(t.encode("hello wörld")[5] == Tokenizer::kUnk);
  CHECK(t.decode(t.encode("lower")) == "lower");
  std::vector<int> with_specials = t.encode("ho");
  with_specials.insert(with_specials.begin(), Tokenizer::kBos);
  with_specials.push_back(Tokenizer::kEos);
  CHECK(t.decode(with_specials) == "ho");
  const Tokenizer back = Tokenizer::from_json(t.to_json());
  CHECK(back.vocab_size() == t.vocab_size());
  CHECK(back.encode("wörld") == t.encode("wörld"));
  check_error([] { Tokenizer::from_json("{}"); }, {"Tokenizer::from_json", "malformed"});
  check_error([&] { t.token(99); }, {"Tokenizer", "id 99"});
}

TEST_CASE("character tokenizer: only the specials asked for, their ids found by name, none when absent") {
  const Tokenizer stream = Tokenizer::chars({"hello"}, {});
  CHECK(stream.vocab_size() == 4);  // e h l o: the characters alone, as nanoGPT's
  CHECK(stream.token(0) == "e");
  CHECK(stream.special_ids().empty());
  CHECK(stream.bos() == Tokenizer::kNone);
  CHECK(stream.encode("hex") == std::vector<int>{1, 0, Tokenizer::kNone});  // an unknown character has no id
  std::vector<std::vector<int>> val = {stream.encode("hex")};
  CHECK(drop_unknown(val, stream.unk()).unknown == 1);
  const Tokenizer lines = Tokenizer::chars({"hello"}, {"<bos>", "<eos>"});
  CHECK(lines.vocab_size() == 6);
  CHECK(lines.bos() == 0);
  CHECK(lines.eos() == 1);
  CHECK(lines.pad() == Tokenizer::kNone);
  CHECK(lines.special_ids() == std::vector<int64_t>{0, 1});
  CHECK(lines.decode({0, lines.id("h"), lines.id("e"), 1}) == "he");
  // A vocabulary saved before the specials were chosen holds all four; they are found where they are.
  const Tokenizer old = Tokenizer::from_json(R"({"level":"char","lowercase":false,"tokens":["<pad>","<bos>","<eos>","<unk>","a","b"]})");
  CHECK(old.bos() == Tokenizer::kBos);
  CHECK(old.eos() == Tokenizer::kEos);
  CHECK(old.special_ids() == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(old.encode("abc") == std::vector<int>{4, 5, Tokenizer::kUnk});
  const Tokenizer back = Tokenizer::from_json(lines.to_json());
  CHECK(back.bos() == 0);
  CHECK(back.encode("hello") == lines.encode("hello"));
}

TEST_CASE("word tokenizer: punctuation apart, lower case, min count") {
  const Tokenizer t = Tokenizer::words({"The cat sat.", "the cat ran!"}, 2);
  CHECK(t.split("The cat, sat.") == std::vector<std::string>{"the", "cat", ",", "sat", "."});
  CHECK(t.vocab_size() == 4 + 2);  // "the" and "cat" appear twice
  CHECK(t.encode("the dog") == std::vector<int>{t.id("the"), Tokenizer::kUnk});
  CHECK(t.decode({t.id("the"), t.id("cat")}) == "the cat");
  CHECK(Tokenizer::from_json(t.to_json()).encode("cat") == t.encode("cat"));
}

TEST_CASE("stream batcher: random windows with targets shifted by one") {
  std::vector<int> ids(50);
  for (int i = 0; i < 50; ++i) ids[static_cast<size_t>(i)] = i;
  const StreamBatcher batcher(ids, 8);
  Generator gen(1);
  const Batch b = batcher.sample(4, gen);
  CHECK(b.x.shape() == Shape{4, 8});
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t t = 0; t < 8; ++t) {
      CHECK(b.y.at({r, t}) == b.x.at({r, t}) + 1);
      if (t) CHECK(b.x.at({r, t}) == b.x.at({r, t - 1}) + 1);
    }
  check_error([] { StreamBatcher({1, 2}, 8); }, {"StreamBatcher", "2 tokens", "windows of 8"});
  check_error([&] { sample_rows({zeros({0, 3}), zeros({0})}, 4, gen); }, {"sample_rows", "no rows"});
}

TEST_CASE("context windows for an MLP language model, and sampling rows") {
  // "ab" with context 2: [bos bos]->a, [bos a]->b, [a b]->eos
  const Batch all = context_windows({{10, 11}}, 2);
  check_tensor(all.x, {3, 2}, {1, 1, 1, 10, 10, 11});
  check_tensor(all.y, {3}, {10, 11, 2});
  Generator gen(2);
  const Batch some = sample_rows(all, 5, gen);
  CHECK(some.x.shape() == Shape{5, 2});
  for (int64_t r = 0; r < 5; ++r) {
    const float y = some.y.at({r});
    CHECK(some.x.at({r, 1}) == (y == 10 ? 1 : y == 11 ? 10 : 11));
  }
}

TEST_CASE("labelled examples: sample_examples keeps each row's inputs, label and mask together, as sample_rows draws") {
  // Row i: inputs (i, 10 i) as a (1,2) image, label i, mask (1, i % 2).
  std::vector<float> inputs, labels, valid;
  for (int i = 0; i < 6; ++i) {
    inputs.insert(inputs.end(), {static_cast<float>(i), 10.0f * static_cast<float>(i)});
    labels.push_back(static_cast<float>(i));
    valid.insert(valid.end(), {1.0f, static_cast<float>(i % 2)});
  }
  const LabelledBatch all{tensor(inputs, {6, 1, 2}), tensor(labels, {6}), tensor(valid, {6, 2})};
  Generator gen(3), same(3);
  const LabelledBatch some = sample_examples(all, 7, gen);
  CHECK(some.inputs.shape() == Shape{7, 1, 2});
  CHECK(some.valid.shape() == Shape{7, 2});
  for (int64_t r = 0; r < 7; ++r) {
    const float i = some.labels.at({r});
    CHECK(some.inputs.at({r, 0, 1}) == 10 * i);
    CHECK(some.valid.at({r, 1}) == static_cast<float>(static_cast<int>(i) % 2));
    CHECK(i == static_cast<float>(same.randint(0, 6)));  // the rows a Batch's sample_rows would draw
  }
  CHECK_FALSE(sample_examples({all.inputs, all.labels, Tensor()}, 2, gen).valid.defined());
  // A label per position, (N,T): rows are drawn from the N examples, not from the N*T labels.
  const LabelledBatch per_position = sample_examples({all.inputs, all.valid, Tensor()}, 50, gen);
  CHECK(per_position.labels.shape() == Shape{50, 2});
  for (int64_t r = 0; r < 50; ++r) CHECK(per_position.labels.at({r, 1}) == std::fmod(per_position.inputs.at({r, 0, 0}), 2.0f));
  check_error([&] { sample_examples({zeros({0, 3}), zeros({0}), Tensor()}, 4, gen); }, {"sample_examples", "no examples"});
  check_error([&] { sample_examples(all, 0, gen); }, {"sample_examples", "batch must be at least 1", "0"});
}

TEST_CASE("most frequent symbol: labels are each sequence's most frequent symbol, no two symbols equally often") {
  Generator gen(4), again(4);
  const LabelledBatch b = most_frequent_symbol(200, 15, 3, gen);
  CHECK(b.inputs.shape() == Shape{200, 15});
  std::set<float> answers;
  for (int64_t i = 0; i < 200; ++i) {
    int counts[3] = {0, 0, 0};
    for (int64_t t = 0; t < 15; ++t) ++counts[static_cast<int>(b.inputs.at({i, t}))];
    CHECK(counts[0] != counts[1]);
    CHECK(counts[1] != counts[2]);
    CHECK(counts[0] != counts[2]);
    CHECK(b.labels.at({i}) == static_cast<float>(std::max_element(counts, counts + 3) - counts));
    answers.insert(b.labels.at({i}));
  }
  CHECK(answers.size() == 3);
  check_tensor(most_frequent_symbol(200, 15, 3, again).inputs, {200, 15}, b.inputs.to_vector(), 0);  // seeded
  check_error([&] { most_frequent_symbol(5, 2, 3, gen); }, {"most_frequent_symbol", "2 positions", "3 symbols"});
  check_error([&] { most_frequent_symbol(5, 15, 1, gen); }, {"most_frequent_symbol", "symbols >= 2", "1"});
}

TEST_CASE("seq2seq pairs are padded, with <bos>/<eos> and masks") {
  const Seq2SeqBatch b = pad_pairs({{{5, 6, 7}, {8}}, {{9}, {10, 11}}});
  check_tensor(b.src, {2, 3}, {5, 6, 7, 9, 0, 0});
  check_tensor(b.src_mask, {2, 3}, {1, 1, 1, 1, 0, 0});
  check_tensor(b.tgt_in, {2, 3}, {1, 8, 0, 1, 10, 11});
  check_tensor(b.tgt_out, {2, 3}, {8, 2, 0, 10, 11, 2});
  check_tensor(b.tgt_mask, {2, 3}, {1, 1, 0, 1, 1, 1});
  SUBCASE("to a fixed source width, which a longer source overrides") {
    const Seq2SeqBatch wide = pad_pairs({{{5, 6, 7}, {8}}, {{9}, {10, 11}}}, 5);
    check_tensor(wide.src, {2, 5}, {5, 6, 7, 0, 0, 9, 0, 0, 0, 0});
    check_tensor(wide.src_mask, {2, 5}, {1, 1, 1, 0, 0, 1, 0, 0, 0, 0});
    check_tensor(wide.tgt_in, {2, 3}, {1, 8, 0, 1, 10, 11});
    CHECK(pad_pairs({{{5, 6, 7}, {8}}}, 2).src.shape() == Shape{1, 3});
    check_error([] { pad_pairs({{{5}, {8}}}, -1); }, {"pad_pairs", "source_width must be 0 or more, got -1"});
  }
}

TEST_CASE("encoding a text: a sequence per line, or one stream; keeping the first lines") {
  TextData text{{"ab", "ba", "a"}, {"b"}, "train", "val"};
  const Tokenizer t = Tokenizer::chars(text.train);
  const EncodedText lines = encode_text(text, t, /*lines=*/true);
  REQUIRE(lines.train.size() == 3);
  CHECK(lines.train[1] == std::vector<int>{t.id("b"), t.id("a")});
  CHECK(lines.val == std::vector<std::vector<int>>{{t.id("b")}});
  const EncodedText stream = encode_text(text, t, /*lines=*/false);
  REQUIRE(stream.train.size() == 1);
  CHECK(stream.train[0].size() == 8);  // "ab\nba\na\n": the newline is unknown to this vocabulary
  CHECK(stream.train[0][2] == Tokenizer::kUnk);
  const Tokenizer with_newline = char_tokenizer(text, /*lines=*/false);
  CHECK(with_newline.id("\n") != Tokenizer::kUnk);
  CHECK(encode_text(text, with_newline, false).train[0][2] == with_newline.id("\n"));
  CHECK(char_tokenizer(text, /*lines=*/true).id("\n") == Tokenizer::kUnk);
  keep_first(text, 2, 5);
  CHECK(text.train == std::vector<std::string>{"ab", "ba"});
  CHECK(text.val.size() == 1);
}

TEST_CASE("validation tokens the training text never had are dropped and counted") {
  TextData text{{"abc", "cab"}, {"axb", "yz", "ba"}, "train", "val"};
  const Tokenizer t = Tokenizer::chars(text.train);
  EncodedText lines = encode_text(text, t, /*lines=*/true);
  const DroppedUnknown dropped = drop_unknown(lines.val);
  CHECK(dropped.unknown == 3);  // x, y, z
  CHECK(dropped.kept == 4);
  CHECK(dropped.total() == 7);
  // "yz" had nothing left: the sequence goes, and the others keep their order.
  CHECK(lines.val == std::vector<std::vector<int>>{{t.id("a"), t.id("b")}, {t.id("b"), t.id("a")}});
  CHECK(dropped.describe("character") ==
        "3 of the 7 validation characters (42.86%) are not in the training text: left out of val_loss");
  std::vector<std::vector<int>> all_known = {{t.id("a"), t.id("c")}};
  CHECK(drop_unknown(all_known).unknown == 0);
  CHECK(all_known.size() == 1);
  std::vector<std::vector<int>> none_known = {{Tokenizer::kUnk, Tokenizer::kUnk}};
  check_error([&] { drop_unknown(none_known); }, {"drop_unknown", "none of the 2 validation tokens", "--val"});
}

TEST_CASE("contiguous batches for truncated BPTT: each row continues where it stopped, then restarts") {
  std::vector<int> ids(42);
  for (int i = 0; i < 42; ++i) ids[static_cast<size_t>(i)] = i;
  ContiguousBatcher batcher(ids, 2, 4);  // rows 0..20 and 21..41: 5 windows of 4 (+1 for the target)
  CHECK(batcher.windows() == 5);
  const Batch first = batcher.next();
  CHECK(batcher.restarted());
  check_tensor(first.x, {2, 4}, {0, 1, 2, 3, 21, 22, 23, 24});
  check_tensor(first.y, {2, 4}, {1, 2, 3, 4, 22, 23, 24, 25});
  const Batch second = batcher.next();
  CHECK(!batcher.restarted());
  check_tensor(second.x, {2, 4}, {4, 5, 6, 7, 25, 26, 27, 28});
  for (int k = 0; k < 3; ++k) batcher.next();
  const Batch again = batcher.next();
  CHECK(batcher.restarted());
  CHECK(again.x.to_vector() == first.x.to_vector());
  check_error([&] { ContiguousBatcher(ids, 20, 4); }, {"ContiguousBatcher", "too few for 20 rows"});
}

TEST_CASE("a folder reads as all its regular files in name order, links skipped") {
  const fs::path folder = fs::temp_directory_path() / ("ladder_folder_" + std::to_string(getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  std::ofstream(folder / "b.txt") << "second\n";
  std::ofstream(folder / "a.txt") << "first\n";
  fs::create_symlink(folder / "a.txt", folder / "c-link");
  CHECK(read_text_file(folder.string()) == "first\n\nsecond\n\n");
  fs::remove_all(folder);
  fs::create_directories(folder);
  check_error([&] { read_text_file(folder.string()); }, {"read_text", "no files"});
  fs::remove_all(folder);
}

TEST_CASE("valid_utf8 keeps well-formed UTF-8 and writes every other byte as \\xNN") {
  CHECK(valid_utf8("plain ascii") == "plain ascii");
  CHECK(valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // 2, 3 and 4 bytes
  CHECK(valid_utf8("a\xff" "b") == "a\\xffb");
  CHECK(valid_utf8("\xc3") == "\\xc3");                    // cut short
  CHECK(valid_utf8("\xc0\xaf") == "\\xc0\\xaf");           // an overlong '/'
  CHECK(valid_utf8("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(valid_utf8("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(valid_utf8(std::string("nul\0x", 5)) == std::string("nul\0x", 5));
}
