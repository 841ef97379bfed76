// The lesson kit keeps runs honest: number flags refused in one line before any work, a lesson's
// own limits checked up front, a diverging run stopped and recorded, one run per output folder,
// a final printout that is rounded, explained and points on, the tracker beside each training
// step (its means, rows, curves and evaluation cadence), and what the long-range lessons share
// (predict, accuracy by group, the majority's share, the classifiers' tracker, --kinds, the
// benchmark's report).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "core/autograd.h"
#include "core/ops.h"
#include "lessons/common/attention_flags.h"
#include "lessons/common/benchmark_report.h"
#include "lessons/common/classifier_training.h"
#include "lessons/common/cli.h"
#include "lessons/common/run.h"
#include "lessons/common/recall_capacity.h"
#include "lessons/common/tracker.h"
#include "lessons/lesson_checks.h"
#include "models/encoder_tagger.h"
#include "models/lstm_classifier.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/feature_map.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/linformer_attention.h"
#include "nn/attention/vq_attention.h"
#include "nn/linear.h"

namespace fs = std::filesystem;
using namespace ladder;
using namespace ladder::testing;

namespace {

const std::vector<std::string> kLessons = {"00_autograd", "01_ngram",     "02_regression", "03_mlp",
                                           "04_cnn",      "05_rnn",       "06_gated_rnn",  "07_seq2seq",
                                           "08_attention_pooling",        "09_attention_seq2seq", "10_transformer",
                                           "11_gpt",      "12_linear_attention",  "13_bigbird",    "14_transformer_vq",
                                           "15_long_range"};

// parse_number's message for `text`, or "" when the value is accepted.
template <class T>
std::string refusal(const std::string& text, lessons::Range<T> range) {
  try {
    lessons::parse_number<T>("--x", text, range);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// What `body` prints on stdout.
std::string captured_stdout(const std::function<void()>& body) {
  std::fflush(stdout);
  FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  const int saved = dup(1);
  dup2(fileno(file), 1);
  body();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::rewind(file);
  std::string out;
  char buf[4096];
  while (const size_t n = std::fread(buf, 1, sizeof buf, file)) out.append(buf, n);
  std::fclose(file);
  return out;
}

// A LessonCli parsed from `args`, as a lesson's main() would.
struct ParsedCli {
  lessons::LessonCli cli;
  // `declare` adds flags before parsing, as a lesson adds its own.
  explicit ParsedCli(std::vector<std::string> args, const std::function<void(lessons::LessonCli&)>& declare = {})
      : cli("99_kit", "kit test", {.steps = 10, .lr = 0.5f}) {
    if (declare) declare(cli);
    args.insert(args.begin(), "lesson_99_kit");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    cli.parse(static_cast<int>(argv.size()), argv.data());
  }
};

// A process id that no process has: a child's, after it has exited and been reaped.
pid_t dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

// Holds run.lock in `folder` as a running lesson would: flock()ed, with this process's pid in it.
struct HeldLock {
  int fd;
  explicit HeldLock(const fs::path& folder) {
    fs::create_directories(folder);
    fd = open((folder / "run.lock").c_str(), O_RDWR | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(flock(fd, LOCK_EX | LOCK_NB) == 0);
    const std::string pid = std::to_string(getpid()) + "\n";
    REQUIRE(write(fd, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size()));
  }
  ~HeldLock() { close(fd); }
};

size_t count_lines(const std::string& text) {
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines + (!text.empty() && text.back() != '\n');
}

}  // namespace

TEST_CASE("number flags: short messages that name the flag, the rule and the value") {
  using lessons::Range;
  CHECK(refusal<int64_t>("0", lessons::positive) == "--x must be a positive whole number, got 0");
  CHECK(refusal<int64_t>("abc", lessons::positive) == "--x must be a positive whole number, got abc (not a number)");
  CHECK(refusal<int64_t>("2.5", lessons::positive) == "--x must be a positive whole number, got 2.5 (not a whole number)");
  CHECK(refusal<int64_t>("", lessons::positive) == "--x must be a positive whole number, got nothing (not a number)");
  CHECK(refusal<int64_t>("99999999999999999999999", lessons::positive) ==
        "--x must be a whole number from 1 to 9223372036854775807, got 99999999999999999999999");
  CHECK(refusal<uint64_t>("-1", {}) == "--x must be a whole number from 0 to 18446744073709551615, got -1");
  CHECK(refusal<int>("-1", lessons::non_negative) == "--x must be a whole number >= 0, got -1");
  CHECK(refusal<int>("17", Range<int>{1, 16}) == "--x must be a whole number from 1 to 16, got 17");
  CHECK(refusal<float>("nan", lessons::positive) == "--x must be a positive finite number, got nan");
  CHECK(refusal<float>("inf", lessons::positive) == "--x must be a positive finite number, got inf");
  CHECK(refusal<float>("-inf", {}) == "--x must be a finite number, got -inf");
  CHECK(refusal<float>("0", lessons::positive) == "--x must be a positive finite number, got 0");
  CHECK(refusal<float>("-1", lessons::non_negative) == "--x must be a finite number >= 0, got -1");
  CHECK(refusal<double>("nan", lessons::non_negative) == "--x must be a finite number >= 0, got nan");
  CHECK(refusal<float>("1e39", lessons::positive).find("got 1e39 (too large or too small to store)") != std::string::npos);
  CHECK(refusal<float>("0.5x", lessons::positive) == "--x must be a positive finite number, got 0.5x (not a number)");
  // Every value inside the range is taken, the ends included.
  CHECK(lessons::parse_number<int64_t>("--x", "1", lessons::positive) == 1);
  CHECK(lessons::parse_number<int64_t>("--x", "9223372036854775807", lessons::positive) == std::numeric_limits<int64_t>::max());
  CHECK(lessons::parse_number<uint64_t>("--x", "18446744073709551615", {}) == std::numeric_limits<uint64_t>::max());
  CHECK(lessons::parse_number<int>("--x", "16", Range<int>{1, 16}) == 16);
  CHECK(lessons::parse_number<int>("--x", "0", lessons::non_negative) == 0);
  CHECK(lessons::parse_number<float>("--x", "1e-3", lessons::positive) == 1e-3f);
  CHECK(lessons::parse_number<float>("--x", "-2.5", {}) == -2.5f);
  CHECK(lessons::parse_number<double>("--x", "0", lessons::non_negative) == 0.0);
  // --help shows the range beside the type.
  CHECK(lessons::range_text<int64_t>(lessons::positive).help == "INT>0");
  CHECK(lessons::range_text<float>(lessons::non_negative).help == "FLOAT>=0");
  CHECK(lessons::range_text<int>(Range<int>{0, 1024}).help == "INT in [0, 1024]");
}

TEST_CASE("every lesson refuses each bad flag value in one line, with status 2, before creating its folder") {
  // Flags every lesson has, then each lesson's own.
  const std::vector<std::pair<std::string, std::string>> common = {
      {"--steps", "0"},  {"--steps", "abc"}, {"--steps", "99999999999999999999999"}, {"--lr", "nan"}, {"--lr", "inf"},
      {"--lr", "-1"},    {"--lr", "0"},      {"--seed", "-1"},                        {"--batch", "0"}, {"--threads", "-1"},
      {"--threads", "1.5"}};
  const std::vector<std::tuple<std::string, std::string, std::string>> own = {
      {"00_autograd", "--hidden", "0"},  {"01_ngram", "--order", "9"},       {"01_ngram", "--order", "-1"},
      {"01_ngram", "--delta", "-1"},     {"01_ngram", "--delta", "nan"},     {"03_mlp", "--context", "0"},
      {"03_mlp", "--context", "17"},     {"03_mlp", "--embed", "0"},         {"03_mlp", "--hidden", "0"},
      {"05_rnn", "--embed", "0"},        {"05_rnn", "--hidden", "-3"},       {"05_rnn", "--block", "0"},
      {"05_rnn", "--clip", "-1"},        {"05_rnn", "--clip", "inf"},        {"06_gated_rnn", "--layers", "0"},
      {"06_gated_rnn", "--layers", "9"}, {"06_gated_rnn", "--hidden", "0"},  {"06_gated_rnn", "--block", "x"},
      {"07_seq2seq", "--hidden", "0"},   {"07_seq2seq", "--layers", "9"},    {"07_seq2seq", "--pad-words", "-1"},
      {"07_seq2seq", "--pad-words", "501"}, {"07_seq2seq", "--max-len", "-2"}, {"09_attention_seq2seq", "--dropout", "1"},
      {"09_attention_seq2seq", "--pairs", "0"}, {"09_attention_seq2seq", "--embed", "nan"},
      {"08_attention_pooling", "--points", "2"}, {"08_attention_pooling", "--points", "1001"},
      {"08_attention_pooling", "--noise", "-1"}, {"08_attention_pooling", "--noise", "nan"},
      {"08_attention_pooling", "--trials", "0"}, {"08_attention_pooling", "--keys", "1"},
      {"10_transformer", "--layers", "0"}, {"10_transformer", "--layers", "9"}, {"10_transformer", "--heads", "0"},
      {"10_transformer", "--embed", "1"}, {"10_transformer", "--ff", "0"},     {"10_transformer", "--dropout", "1"},
      {"10_transformer", "--warmup", "-1"}, {"10_transformer", "--norm-steps", "-5"}, {"10_transformer", "--pairs", "nan"},
      {"10_transformer", "--norm-lr", "0"},
      {"11_gpt", "--layers", "0"},       {"11_gpt", "--layers", "49"},       {"11_gpt", "--heads", "0"},
      {"11_gpt", "--embd", "-8"},        {"11_gpt", "--context", "0"},       {"11_gpt", "--dropout", "1"},
      {"11_gpt", "--weight-decay", "nan"}, {"11_gpt", "--warmup", "-1"},     {"11_gpt", "--eval-every", "0"},
      {"11_gpt", "--sample-chars", "0"}, {"11_gpt", "--temperature", "0"},
      {"11_gpt", "--attention-block", "0"}, {"11_gpt", "--random-blocks", "-1"}, {"11_gpt", "--chunk", "0"},
      {"11_gpt", "--codes", "0"},
      {"10_transformer", "--attention-block", "x"}, {"10_transformer", "--random-blocks", "1.5"},
      {"12_linear_attention", "--length", "1"}, {"12_linear_attention", "--length", "65"},
      {"12_linear_attention", "--chunk", "0"}, {"12_linear_attention", "--max-n", "511"},
      {"12_linear_attention", "--max-n", "nan"},          {"12_linear_attention", "--layers", "0"},
      {"12_linear_attention", "--context", "1"},
      {"13_bigbird", "--attention-block", "0"}, {"13_bigbird", "--random-blocks", "65"},   {"13_bigbird", "--values", "11"},
      {"13_bigbird", "--keys", "1"},     {"13_bigbird", "--distance", "2"},  {"13_bigbird", "--max-n", "128"},
      {"13_bigbird", "--distractors", "-1"}, {"13_bigbird", "--examples", "21"}, {"13_bigbird", "--width", "2"},
      {"13_bigbird", "--layers", "13"},  {"13_bigbird", "--heads", "0"},   {"13_bigbird", "--train-size", "0"},
      {"13_bigbird", "--test-size", "5"}, {"13_bigbird", "--warmup", "-1"},
      {"14_transformer_vq", "--length", "1"}, {"14_transformer_vq", "--small-block", "0"},
      {"14_transformer_vq", "--max-n", "300"}, {"14_transformer_vq", "--embd", "0"},
      {"14_transformer_vq", "--eval-every", "0"}, {"14_transformer_vq", "--codes", "0"},
      {"14_transformer_vq", "--attention-block", "0"},
      {"15_long_range", "--max-len", "3"}, {"15_long_range", "--min-len", "-1"}, {"15_long_range", "--max-depth", "1"},
      {"15_long_range", "--max-args", "1"}, {"15_long_range", "--recall-len", "-1"}, {"15_long_range", "--train", "0"},
      {"15_long_range", "--test", "0"}, {"15_long_range", "--d-model", "2"}, {"15_long_range", "--layers", "0"},
      {"15_long_range", "--attention-block", "0"}, {"15_long_range", "--random-blocks", "-1"},
      {"15_long_range", "--pairs", "0"}, {"15_long_range", "--val", "0"}, {"15_long_range", "--warmup", "-1"},
      {"15_long_range", "--codes", "0"}, {"15_long_range", "--capacity-steps", "0"},
      {"15_long_range", "--circuit-steps", "0"}, {"15_long_range", "--circuit-pairs", "0"}};
  std::vector<std::tuple<std::string, std::string, std::string>> cases = own;
  for (const std::string& lesson : kLessons)
    for (const auto& [flag, value] : common) cases.emplace_back(lesson, flag, value);
  TempDir out("kit_flags");
  for (const auto& [lesson, flag, value] : cases) {
    const Ran ran = run_lesson(lesson, "--quick " + flag + " " + value + " --out " + out.path.string());
    INFO(lesson, " ", flag, " ", value, ":\n", ran.output);
    CHECK(ran.status == 2);
    CHECK(count_lines(ran.output) == 1);
    CHECK(ran.output.rfind("error: " + flag + " must be ", 0) == 0);
    CHECK(ran.output.find(value) != std::string::npos);
    CHECK_FALSE(fs::exists(out.path));
  }
}

TEST_CASE("a lesson's own limits are checked before any work starts, and no folder is made") {
  TempDir out("kit_limits");
  const std::string to = " --out " + out.path.string();
  const fs::path tiny = fs::temp_directory_path() / ("ladder_kit_tiny_" + std::to_string(getpid()) + ".txt");
  std::ofstream(tiny) << "abcabcabcabcabcabc\nab\n";
  // Each refusal names what matters: the flag and value at fault, the limit, the fix.
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> cases = {
      {"01_ngram", "--data /nonexistent/corpus.txt", {"/nonexistent/corpus.txt", "cannot open"}},
      {"03_mlp", "--data /nonexistent/words.txt", {"/nonexistent/words.txt", "cannot open"}},  // was after the spirals part
      {"05_rnn", "--block 5000", {"32 rows", "window of 5000", "smaller --batch"}},
      {"05_rnn", "--val " + tiny.string(), {"validation text", "22 tokens", "window of 64"}},
      {"06_gated_rnn", "--block 5000", {"smaller --batch or --block", "longer --data"}},
      // --block 8 fits the short text, but the fill-in task's window of 32 does not (was: after every model trained).
      {"06_gated_rnn", "--block 8 --val " + tiny.string(), {"window of 32", "fill-in task"}},
      {"06_gated_rnn", "--cell tree", {"cell", "'tree'"}},
      {"06_gated_rnn", "--layers 2", {"--layers", "go with --cell"}},
      {"08_attention_pooling", "--trials 100 --keys 1024", {"--trials 100", "--keys 1024", "65536"}},
      {"10_transformer", "--heads 3", {"--heads 3", "--embed 64", "1, 2, 4, 8, 16"}},
      {"10_transformer", "--embed 48 --heads 5", {"--heads 5", "--embed 48", "1, 2, 3, 4, 6, 8, 12, 16"}},
      {"10_transformer", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"10_transformer", "--norm-steps 30 --warmup 30", {"--warmup 30", "--norm-steps 30"}},
      {"10_transformer", "--number-steps 30 --warmup 30", {"--warmup 30", "--number-steps 30"}},
      {"10_transformer", "--data /nonexistent/pairs.tsv", {"/nonexistent/pairs.tsv"}},
      {"11_gpt", "--heads 3", {"--heads 3", "--embd 128"}},
      {"11_gpt", "--context 4000", {"12 rows", "window of 4000", "smaller --batch"}},
      {"11_gpt", "--val " + tiny.string(), {"validation text", "22 tokens", "window of 64"}},
      {"11_gpt", "--steps 500 --warmup 500", {"--warmup 500", "--steps 500"}},
      {"11_gpt", "--prompt \"\x01\"", {"--prompt", "vocabulary lacks"}},
      {"11_gpt", "--lines", {"--lines", "does not apply"}},
      {"11_gpt", "--temperature 0.8", {"--temperature", "--load FILE"}},
      // The attention kind (lessons/common/attention_flags.h): unknown names, a setting for another kind,
      // and a BigBird pattern that would see every block.
      {"11_gpt", "--attention vqx", {"--attention 'vqx'", "full, linear, bigbird, vq"}},
      {"11_gpt", "--attention linear --feature-map relu", {"--feature-map 'relu'", "elu, cos, softmax, favor"}},
      {"11_gpt", "--feature-map cos", {"--feature-map", "--attention is full", "--attention linear"}},
      {"11_gpt", "--attention linear --attention-block 8", {"--attention-block", "bigbird or vq", "--attention is linear"}},
      {"11_gpt", "--attention bigbird --codes 8", {"--codes", "--attention is bigbird", "--attention vq"}},
      {"11_gpt", "--attention vq --random-blocks 1", {"--random-blocks", "--attention is vq"}},
      {"11_gpt", "--attention vq --feature-map cos", {"--feature-map", "--attention is vq"}},
      {"11_gpt", "--attention bigbird --chunk 8", {"--chunk", "--attention is bigbird"}},
      {"11_gpt", "--attention bigbird --attention-block 16", {"--attention-block 16", "--context 64", "full attention", "--attention-block 12"}},
      {"11_gpt", "--attention bigbird --context 2 --attention-block 1", {"too short for a sparse pattern", "--attention full"}},
      {"10_transformer", "--attention sparse", {"--attention 'sparse'", "full, linear, bigbird"}},
      {"10_transformer", "--random-blocks 2", {"--random-blocks", "--attention is full"}},
      {"11_gpt", "--attention linformer", {"--attention linformer", "bidirectionally only", "causal", "full, linear, bigbird, vq"}},
      {"10_transformer", "--codes 8", {"--codes", "--attention is full", "--attention vq"}},
      {"10_transformer", "--attention bigbird --attention-block 16", {"--attention-block 16", "longest source (37 tokens)"}},
      {"12_linear_attention", "--feature-map relu", {"--feature-map 'relu'", "elu, cos, softmax, favor"}},
      {"12_linear_attention", "--heads 3", {"--heads 3", "--embd 64"}},
      {"12_linear_attention", "--lines", {"--lines", "does not apply"}},
      {"12_linear_attention", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"13_bigbird", "--length 100", {"--length 100", "--attention-block 8", "--length 104"}},
      {"13_bigbird", "--length 56", {"--length 56", "7 blocks", "too short"}},
      {"13_bigbird", "--length 32 --random-blocks 0", {"at least 5 blocks", "--length 40"}},
      {"13_bigbird", "--length 2048", {"256 blocks", "128"}},
      {"13_bigbird", "--distance 200", {"--distance 200", "--task-length 128"}},
      {"13_bigbird", "--distractors 200", {"200 distractor", "more than half"}},
      {"13_bigbird", "--task-length 48 --distractors 2", {"--task-length 48", "6 blocks", "too short"}},
      // 36 = 4 blocks of 8 and a padded fifth; r = 1 needs 6
      {"13_bigbird", "--task-length 36 --distractors 2 --random-blocks 1", {"5 blocks", "too short", "1 random"}},
      {"13_bigbird", "--width 30", {"--width 30", "--heads 4", "--width 32"}},
      {"13_bigbird", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"14_transformer_vq", "--heads 3", {"--heads 3", "--embd 64"}},
      {"14_transformer_vq", "--lines", {"--lines", "does not apply"}},
      {"14_transformer_vq", "--attention-block 32", {"--attention-block 32", "--context 64", "fewer than 3 blocks",
                                                     "--attention-block 31", "--context 65"}},
      {"14_transformer_vq", "--context 2 --attention-block 1", {"--context 2", "fewer than 3 blocks", "--context 3"}},
      {"14_transformer_vq", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"15_long_range", "--kinds full,relu", {"--kinds", "'relu'", "full,linear_elu,"}},
      {"15_long_range", "--kinds full,,lstm", {"--kinds", "''"}},
      {"15_long_range", "--kinds lstm,full,lstm", {"--kinds", "'lstm'", "twice"}},
      {"15_long_range", "--min-len 300 --max-len 200", {"--min-len 300", "--max-len 200"}},
      {"15_long_range", "--d-model 30", {"--d-model 30", "4 heads", "32"}},
      {"15_long_range", "--max-depth 2 --max-args 2 --min-len 5", {"max_depth 2", "max_args 2", "4 tokens"}},
      {"15_long_range", "--kinds full,bigbird --attention-block 16", {"--attention-block 16", "--max-len 64", "full attention", "--attention-block 10"}},
      {"15_long_range", "--kinds bigbird --max-len 256 --recall-len 32", {"--recall-len 32", "every key block"}},
      {"15_long_range", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"15_long_range", "--kinds full --recall-len 40 --pairs 20 --keys 20", {"length 40", "20 pairs", "at least 44"}},
      {"15_long_range", "--circuit-kinds linformer", {"--circuit-kinds linformer", "cannot attend causally"}},
      {"15_long_range", "--capacity-pairs 0,4", {"--capacity-pairs", "at least 1 pair"}}};
  for (const auto& [lesson, args, words] : cases) {
    const Ran ran = run_lesson(lesson, "--quick --threads 1 " + args + to);
    INFO(lesson, " ", args, ":\n", ran.output);
    CHECK(ran.status == 2);
    CHECK(says_all(ran.output, words));
    CHECK(ran.output.find("== ") == std::string::npos);  // no part of the lesson ran
    CHECK_FALSE(fs::exists(out.path));
  }
  fs::remove(tiny);
}

TEST_CASE("the attention flags give the settings they name; a BigBird pattern that sees every block is refused") {
  lessons::AttentionFlags flags;
  const auto declare = [&flags](bool causal) {
    return [&flags, causal](lessons::LessonCli& cli) { lessons::add_attention_options(cli, flags, "the kit's attention", causal); };
  };
  const ParsedCli linear({"--attention", "linear", "--feature-map", "cos", "--chunk", "5"}, declare(true));
  const nn::AttentionSettings s = lessons::attention_settings("99_kit", linear.cli, flags, 9);
  CHECK(s.kind == "linear");
  CHECK(s.word("feature_map") == "cos");
  CHECK(s.number("chunk") == 5);
  CHECK(s.number("random_features") == 0);  // no flag: the registered default
  CHECK(s.seed == 9);
  CHECK(linear.cli.flags_json()["feature-map"] == "cos");
  CHECK(lessons::describe_attention(s, /*causal=*/true) == "linear (feature map cos, chunk 5)");
  CHECK(lessons::describe_attention(s, /*causal=*/false) == "linear (feature map cos)");

  flags = {};
  const ParsedCli bigbird({"--attention", "bigbird", "--attention-block", "8", "--random-blocks", "0"}, declare(false));
  CHECK(std::find(flags.added.begin(), flags.added.end(), "--chunk") == flags.added.end());  // only causal attention has chunks
  const nn::AttentionSettings b = lessons::attention_settings("99_kit", bigbird.cli, flags, 9);
  CHECK(b.number("block") == 8);
  CHECK(b.number("random_blocks") == 0);
  CHECK(b.boolean("global_blocks"));
  CHECK(lessons::describe_attention(b, false) == "bigbird (blocks of 8, 0 random per query block)");
  // 4 blocks of 8: bidirectionally the global first and last blocks and the window reach every block; causally
  // block 3 sees blocks 0, 2 and 3 only.
  lessons::check_pattern_fits("99_kit", b, 32, /*causal=*/true, "--length 32");
  CHECK_THROWS_WITH_AS(lessons::check_pattern_fits("99_kit", b, 32, /*causal=*/false, "--length 32"),
                       doctest::Contains("99_kit: --attention bigbird with --attention-block 8 and --random-blocks 0 over "
                                         "--length 32 in 4 blocks lets every query block see every key block"),
                       Error);
  lessons::check_pattern_fits("99_kit", nn::full_attention(), 1, false, "one position");  // only BigBird has a pattern

  flags = {};
  const ParsedCli vq({"--attention", "vq", "--attention-block", "12", "--codes", "20", "--cache-gradient", "stopped"},
                     declare(true));
  const nn::AttentionSettings v = lessons::attention_settings("99_kit", vq.cli, flags, 9);
  CHECK(v.kind == "vq");
  CHECK(v.number("block") == 12);
  CHECK(v.number("codes") == 20);
  CHECK(v.word("cache_gradient") == "stopped");
  CHECK(vq.cli.flags_json()["codes"] == 20);
  CHECK(lessons::describe_attention(v, true) ==
        "vq (blocks of 12, 20 codes per head, q and k normalised, position bias, gradient stopped at the cache)");
  // vq attends both ways: an encoder takes it with its flags too.
  flags = {};
  const ParsedCli encoder({"--attention", "vq", "--codes", "8"}, declare(false));
  CHECK(std::find(flags.added.begin(), flags.added.end(), "--codes") != flags.added.end());
  const nn::AttentionSettings e = lessons::attention_settings("99_kit", encoder.cli, flags, 9);
  CHECK(e.number("codes") == 8);
  CHECK(e.word("cache_gradient") == "exact");

  // A kind that attends one way only is refused where the attention goes the other way, for every kind.
  for (const nn::KindDescription& kind : nn::attention_kinds())
    for (const bool causal : {true, false}) {
      if (kind.attends(causal)) continue;
      flags = {};
      const ParsedCli one_way({"--attention", kind.name}, declare(causal));
      const std::string expected = "99_kit: --attention " + kind.name + " attends " +
                                   (causal ? "bidirectionally" : "causally") + " only (" + kind.why_one_way +
                                   "), but this attention is " + (causal ? "causal" : "bidirectional");
      CHECK_THROWS_WITH_AS(lessons::attention_settings("99_kit", one_way.cli, flags, 9),
                           doctest::Contains(expected.c_str()), Error);
    }
}

TEST_CASE("the lesson's defaults, per setting and per kind; a flag given sets every kind that reads it") {
  lessons::AttentionFlags flags{.defaults = {{"block", 16}, {"codes", 32}},
                                .kind_defaults = {{nn::VQAttention::kName, {{"block", 32}}}}};
  const auto declare = [&flags](lessons::LessonCli& cli) { lessons::add_every_kind_options(cli, flags); };
  const ParsedCli plain({}, declare);
  CHECK(std::find(flags.added.begin(), flags.added.end(), "--feature-map") == flags.added.end());  // compared: each runs
  CHECK(std::find(flags.added.begin(), flags.added.end(), "--chunk") == flags.added.end());  // linear runs bidirectional
  CHECK(lessons::kind_settings(plain.cli, flags, nn::BigBirdAttention::kName, 0).number("block") == 16);
  CHECK(lessons::kind_settings(plain.cli, flags, nn::BigBirdAttention::kName, 0).number("random_blocks") == 3);
  CHECK(lessons::kind_settings(plain.cli, flags, nn::VQAttention::kName, 0).number("block") == 32);
  CHECK(lessons::kind_settings(plain.cli, flags, nn::VQAttention::kName, 0).number("codes") == 32);
  std::vector<std::string> names;
  for (const lessons::KindRun& run : lessons::every_kind(plain.cli, flags, 5)) {
    names.push_back(run.name);
    CHECK(run.settings.seed == 5);
    CHECK(run.causal == !nn::registered_kind(run.settings.kind).attends(false));
  }
  for (const std::string& map : nn::feature_map_names())  // linear once per feature map
    CHECK(std::count(names.begin(), names.end(), "linear_" + map) == 1);
  CHECK(names.size() == nn::attention_kinds().size() + nn::feature_map_names().size() - 1);

  flags = {.defaults = {{"block", 16}}, .kind_defaults = {{nn::VQAttention::kName, {{"block", 32}}}}};
  const ParsedCli given({"--attention-block", "8"}, declare);
  CHECK(lessons::kind_settings(given.cli, flags, nn::BigBirdAttention::kName, 0).number("block") == 8);
  CHECK(lessons::kind_settings(given.cli, flags, nn::VQAttention::kName, 0).number("block") == 8);

  flags = {.defaults = {{"blocks", 16}}};
  CHECK_THROWS_WITH_AS(ParsedCli({}, declare), doctest::Contains("a default for 'blocks', a setting no attention kind has"),
                       Error);
  flags = {.defaults = {{"block", std::string("wide")}}};
  CHECK_THROWS_WITH_AS(ParsedCli({}, declare), doctest::Contains("block must be a whole number, got a word"), Error);
  flags = {.kind_defaults = {{nn::VQAttention::kName, {{"codes", 0}}}}};
  CHECK_THROWS_WITH_AS(ParsedCli({}, declare), doctest::Contains("vq attention: codes must be >= 1, got 0"), Error);
}

TEST_CASE("a loss that is not finite, or a perplexity that overflows, stops the run") {
  CHECK(lessons::divergence(2.5, lessons::LossKind::plain).empty());
  CHECK(lessons::divergence(700, lessons::LossKind::cross_entropy).empty());  // exp(700) is still a double
  CHECK(lessons::divergence(800, lessons::LossKind::plain).empty());
  CHECK(lessons::divergence(800, lessons::LossKind::cross_entropy) ==
        "the loss is 800 nats, so large that its perplexity exp(loss) is infinite");
  CHECK(lessons::divergence(-NAN, lessons::LossKind::plain) == "the loss is nan");
  CHECK(lessons::divergence(INFINITY, lessons::LossKind::plain, "the CNN's loss") == "the CNN's loss is inf");

  TempDir out("kit_check_loss");
  ParsedCli parsed({"--out", out.path.string()});
  {
    lessons::Run run(parsed.cli);
    run.check_loss(1, 2.3);
    run.check_loss(2, 1.9, lessons::LossKind::cross_entropy);
    CHECK_THROWS_WITH_AS(run.check_loss(3, NAN), doctest::Contains("99_kit: training diverged at step 3: the loss is nan; try a smaller --lr (this run: 0.5)"),
                         lessons::Diverged);
  }
  const nlohmann::json summary = summary_of(out.path);
  CHECK(summary["diverged"]["step"] == 3);
  CHECK(summary["diverged"]["loss"] == "nan");
  CHECK(summary["flags"]["lr"] == 0.5);
  CHECK(summary["metrics"].empty());
  CHECK_FALSE(fs::exists(out.path / "run.lock"));  // removed when the Run ended, by an exception too
}

TEST_CASE("a checkpoint names its lesson beside the metadata given; one of weights that are not finite is refused, and not written") {
  TempDir out("kit_checkpoint");
  ParsedCli parsed({"--out", out.path.string()});
  lessons::Run run(parsed.cli);
  nn::Linear layer(2, 3);
  CHECK(run.save_checkpoint(layer, {{"canvas", "28"}}) == (out.path / "model.safetensors").string());
  const std::map<std::string, std::string> metadata = io::load_safetensors((out.path / "model.safetensors").string()).metadata;
  CHECK(metadata.at("lesson") == "99_kit");
  CHECK(metadata.at("canvas") == "28");
  fs::remove(out.path / "model.safetensors");
  run.check_loss(7, 0.25);
  layer.bias.data()[1] = NAN;
  CHECK_THROWS_WITH_AS(run.save_checkpoint(layer, {}),
                       doctest::Contains("training diverged at step 7: the last update left bias with a value of nan"), lessons::Diverged);
  CHECK_FALSE(fs::exists(out.path / "model.safetensors"));
  CHECK(summary_of(out.path)["diverged"]["step"] == 7);
}

TEST_CASE("a lesson at --lr 1e30 stops with status 3, says where it diverged, and saves no weights") {
  for (const std::string lesson : {"00_autograd", "03_mlp", "04_cnn", "05_rnn", "06_gated_rnn", "08_attention_pooling", "11_gpt"}) {
    TempDir out("kit_diverge");
    const Ran ran = run_lesson(lesson, "--quick --threads 1 --lr 1e30 --out " + out.path.string());
    INFO(lesson, ":\n", ran.output);
    CHECK(ran.status == 3);
    CHECK(says_all(ran.output, {lesson, "diverged at step", "smaller --lr", "1e+30"}));
    CHECK(ran.output.find("no finite points to plot") == std::string::npos);  // what 00, 05 and 06 blamed before
    const nlohmann::json summary = summary_of(out.path);
    CHECK(summary["diverged"]["step"].get<int>() >= 1);
    CHECK(summary["diverged"].contains("loss"));
    CHECK_FALSE(fs::exists(out.path / "model.safetensors"));
    CHECK_FALSE(fs::exists(out.path / "run.lock"));
  }
  // Lesson 02 studies divergence (its exercise 1): the linear regression's is reported, the other parts go on.
  TempDir out("kit_diverge02");
  const Ran ran = run_lesson("02_regression", "--quick --threads 1 --lr 1e30 --out " + out.path.string());
  INFO(ran.output);
  CHECK(ran.status == 0);
  CHECK(ran.output.find("gradient descent diverged: its MSE was inf at step 2") != std::string::npos);
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["linear_regression_diverged_at_step"] == 2);
  CHECK(m["test_acc"].get<double>() > 0.9);  // softmax regression survives the rate
}

TEST_CASE("one run per output folder: a second is refused naming the first's pid; a stale lock is taken over") {
  TempDir out("kit_lock");
  {
    HeldLock held(out.path);
    const Ran ran = run_lesson("00_autograd", "--quick --threads 1 --out " + out.path.string());
    INFO(ran.output);
    CHECK(ran.status == 2);
    CHECK(says_all(ran.output, {"another run", "pid " + std::to_string(getpid()), out.path.string(), "another --out"}));
    CHECK(std::distance(fs::directory_iterator(out.path), fs::directory_iterator()) == 1);  // nothing but the lock
  }
  {  // in one process too: a second Run on the folder of a living one
    ParsedCli parsed({"--out", out.path.string()});
    lessons::Run first(parsed.cli);
    const std::string refusal = "another run (pid " + std::to_string(getpid()) + ")";
    CHECK_THROWS_WITH_AS(lessons::Run(parsed.cli), doctest::Contains(refusal.c_str()), Error);
  }
  CHECK_FALSE(fs::exists(out.path / "run.lock"));
  const pid_t gone = dead_pid();
  std::ofstream(out.path / "run.lock") << gone << "\n";  // left by a run that was killed
  const Ran ran = run_lesson("00_autograd", "--quick --threads 1 --out " + out.path.string());
  INFO(ran.output);
  CHECK(ran.status == 0);
  CHECK(says_all(ran.output, {"run.lock", "pid " + std::to_string(gone), "taken over"}));
  CHECK(fs::exists(out.path / "summary.json"));
  CHECK_FALSE(fs::exists(out.path / "run.lock"));
}

TEST_CASE("the final printout: rounded figures under aligned names, each with its note; files; where to go next") {
  TempDir out("kit_finish");
  ParsedCli parsed({"--out", out.path.string()});
  lessons::Run run(parsed.cli);
  const std::string file = run.file("metrics.csv");
  std::ofstream(file) << "step\n";
  const std::string printed = captured_stdout([&] {
    run.finish({{"val_loss", 1.702505554274454}, {"test_acc", 0.95}, {"gap", 3.5762786865234375e-07}, {"steps", 300},
                {"best", "GRU"}, {"reached", false}, {"ppl", INFINITY}},
               {{"val_loss", "nats per character"}, {"test_acc", "softmax regression, 300 test points"}},
               "docs/99_kit.md, section 1; then exercise 2");
  });
  const std::string expected = "  val_loss  1.7025     nats per character\n"
                               "  test_acc  0.9500     softmax regression, 300 test points\n"
                               "  gap       3.576e-07\n"
                               "  steps     300\n"
                               "  best      GRU\n"
                               "  reached   false\n"
                               "  ppl       inf\n"
                               "files:\n  " + file + "\n  " + (out.path / "summary.json").string() + "\n"
                               "next: docs/99_kit.md, section 1; then exercise 2\n";
  CHECK(printed.find("== 99_kit done in ") == 1);
  CHECK(printed.substr(printed.find('\n', 1) + 1) == expected);
  CHECK(summary_of(out.path)["metrics"]["val_loss"] == 1.702505554274454);  // full precision in the file
  std::ifstream in(out.path / "summary.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"val_loss\"") < text.find("\"test_acc\""));  // in the order given
}

TEST_CASE("the tracker: the mean loss since the last evaluation, a CSV row and a curve point per evaluation, the last step evaluated") {
  TempDir out("kit_tracker");
  ParsedCli parsed({"--out", out.path.string()});
  lessons::Run run(parsed.cli);
  lessons::Tracker tracker(run, {.steps = 5, .eval_every = 2, .figures = {"val_loss"}, .unit = "ex", .items_per_step = 3,
                                 .loss_kind = lessons::LossKind::plain, .name = "toy"});
  std::vector<int64_t> evaluated;
  const std::string printed = captured_stdout([&] {
    for (int64_t step = 1; step <= 5; ++step) {
      tracker.step(step, {.loss = static_cast<double>(step), .grad_norm = 0.5f * static_cast<float>(step)}, 0.1);
      if (!tracker.evaluation_due(step)) continue;
      evaluated.push_back(step);
      tracker.evaluated(step, {10.0 * static_cast<double>(step)});
    }
    tracker.finish();
  });
  CHECK(evaluated == std::vector<int64_t>{2, 4, 5});
  CHECK(printed.find("step 5/5 | loss 5") != std::string::npos);
  CHECK(tracker.train_loss() == 5);  // the last evaluation's mean: step 5 alone
  CHECK(tracker.last("val_loss") == 50);
  const lessons::Series& train = tracker.curve("train_loss");
  CHECK(train.name == "toy");
  CHECK(train.x == std::vector<double>{2, 4, 5});
  CHECK(train.y == std::vector<double>{1.5, 3.5, 5});  // (1 + 2) / 2, (3 + 4) / 2, 5
  CHECK(tracker.curve("val_loss").y == std::vector<double>{20, 40, 50});
  const auto table = rows(out.path / "metrics.csv");
  REQUIRE(table.size() == 3);
  CHECK(table[1].at("step") == "4");
  CHECK(table[1].at("train_loss") == "3.5");
  CHECK(table[1].at("val_loss") == "40");
  CHECK(table[1].at("lr") == "0.1");
  CHECK(table[1].at("grad_norm") == "2");  // the evaluated step's
  CHECK(std::stod(table[1].at("examples_per_s")) > 0);
  CHECK_THROWS_WITH_AS(tracker.evaluated(5, {1, 2}), doctest::Contains("2 figures for the 1 named"), Error);
  CHECK_THROWS_WITH_AS(tracker.last("bleu"), doctest::Contains("no figure 'bleu' is tracked"), Error);
  CHECK_THROWS_WITH_AS(lessons::Tracker(run, {.steps = 5, .eval_every = 0}), doctest::Contains("eval_every must be >= 1"), Error);
}

TEST_CASE("the tracker: without progress it prints nothing; a diverged loss stops the run unless the run shows divergence") {
  TempDir out("kit_tracker_quiet");
  ParsedCli parsed({"--out", out.path.string()});
  lessons::Run run(parsed.cli);
  lessons::Tracker quiet(run, {.steps = 2, .eval_every = 1, .figures = {}, .csv = "", .name = "MLP", .progress = false,
                               .stop_if_diverged = false});
  const std::string printed = captured_stdout([&] {
    quiet.step(1, {.loss = NAN}, 0.1);
    quiet.step(2, {.loss = 3}, 0.1);
    quiet.finish();
  });
  CHECK(printed.empty());
  CHECK_FALSE(fs::exists(out.path / "metrics.csv"));  // csv "": no file
  lessons::Tracker stopping(run, {.steps = 2, .eval_every = 1, .csv = "", .name = "CNN", .progress = false});
  CHECK_THROWS_WITH_AS(stopping.step(1, {.loss = NAN}, 0.1), doctest::Contains("diverged at step 1: the CNN's loss is nan"),
                       lessons::Diverged);
}

TEST_CASE("the classifiers' kit: predict in batches equals one forward; accuracy by group; the majority's share") {
  Generator gen(5);
  models::LstmClassifier model({.vocab_size = 6, .num_classes = 3, .width = 8, .pooling = models::Pooling::last}, gen);
  const Tensor ids = randint(0, 6, {5, 7}, gen);  // (N,T)
  const data::LabelledBatch set{ids, tensor({0, 1, 2, 1, 0}), Tensor()};
  Tensor logits;  // (N,classes), all at once
  {
    NoGradGuard no_grad;
    logits = model.forward(ids);
  }
  const lessons::Predictions p = lessons::predict(model, set, 2);  // batches of 2, 2 and 1
  CHECK(p.loss == doctest::Approx(cross_entropy(logits, set.labels).item()).epsilon(1e-5));
  const Tensor best = argmax(logits, 1);
  double right = 0;
  for (int64_t n = 0; n < 5; ++n) {
    CHECK(p.classes[static_cast<size_t>(n)] == static_cast<int64_t>(best.data()[n]));
    right += best.data()[n] == set.labels.data()[n] ? 1 : 0;
  }
  CHECK(p.accuracy == right / 5);
  CHECK(model.is_training());  // eval mode only inside predict

  const lessons::Predictions answers{.classes = {0, 1, 1, 1, 0}};
  const std::vector<double> by_group = lessons::accuracy_by_group(answers, set.labels, {0, 0, 2, 2, 2}, 4);
  CHECK(by_group[0] == 1);    // both right
  CHECK(std::isnan(by_group[1]));  // no sequence in group 1
  CHECK(by_group[2] == doctest::Approx(2.0 / 3));  // 2 wrong, 1 and 0 right
  CHECK(std::isnan(by_group[3]));
  CHECK_THROWS_WITH_AS(lessons::accuracy_by_group(answers, set.labels, {0, 0}, 4), doctest::Contains("5 predictions and 2 groups for 5 labels"), Error);
  CHECK_THROWS_WITH_AS(lessons::accuracy_by_group(answers, set.labels, {0, 0, 4, 0, 0}, 4), doctest::Contains("group 4 is outside [0, 4)"), Error);

  CHECK(lessons::majority_share(tensor({1, 1, 2}), tensor({1, 2, 2, 0}), 3) == 0.25);  // always 1: one test label of four
  const float none = static_cast<float>(data::kNoAnswer);  // positions where nothing is asked count for nothing
  CHECK(lessons::majority_share(tensor({2, none, none, 2, 1}), tensor({none, 2, 1, none}), 3) == 0.5);
  CHECK_THROWS_WITH_AS(lessons::majority_share(tensor({1, 3}), tensor({1}), 3), doctest::Contains("label 3 is outside [0, 3)"), Error);
}

TEST_CASE("the classifiers' kit: a tagger's answers at the asked positions only, in batches as at once; standard errors") {
  Generator gen(6);
  models::EncoderTagger model({.vocab_size = 6, .num_classes = 3, .max_len = 7, .d_model = 8, .nhead = 2, .num_layers = 1,
                               .dim_feedforward = 16},
                              gen);
  const Tensor ids = randint(0, 6, {5, 7}, gen);  // (N,T)
  Tensor labels = full({5, 7}, static_cast<float>(data::kNoAnswer));
  const std::vector<std::pair<int64_t, float>> asked = {{3, 2}, {9, 0}, {12, 1}, {20, 1}, {33, 2}, {34, 0}};  // (row*7 + t, class)
  for (const auto& [at, label] : asked) labels.data()[at] = label;
  Tensor logits;  // (N,T,classes), all at once
  {
    NoGradGuard no_grad;
    logits = model.forward(ids);
  }
  const lessons::Predictions p = lessons::predict(model, {ids, labels, Tensor()}, 2);  // batches of 2, 2 and 1
  REQUIRE(p.classes.size() == asked.size());
  CHECK(p.loss == doctest::Approx(cross_entropy(logits, labels).item()).epsilon(1e-5));
  const Tensor best = argmax(reshape(logits, {35, 3}), 1);
  double right = 0;
  for (size_t i = 0; i < asked.size(); ++i) {
    const auto predicted = static_cast<int64_t>(best.data()[asked[i].first]);
    CHECK(p.classes[i] == predicted);
    right += predicted == static_cast<int64_t>(asked[i].second) ? 1 : 0;
  }
  CHECK(p.accuracy == right / 6);
  CHECK_THROWS_WITH_AS(lessons::predict(model, {ids, tensor({0, 1, 2, 1, 0}), Tensor()}, 2),
                       doctest::Contains("a tagger's labels must be (N,T)"), Error);

  CHECK(lessons::standard_error(0.5, 100) == doctest::Approx(0.05));
  CHECK(lessons::standard_error(0.9, 1000) == doctest::Approx(std::sqrt(0.09 / 1000)));
  CHECK(lessons::standard_error(1.0, 10) == 0);
  CHECK_THROWS_WITH_AS(lessons::standard_error(0.5, 0), doctest::Contains("at least one answer"), Error);
}

TEST_CASE("the classifiers' tracker: validation loss and accuracy at ten evaluations, examples per second") {
  TempDir out("kit_classifier_tracker");
  ParsedCli parsed({"--out", out.path.string()});
  lessons::Run run(parsed.cli);
  lessons::Tracker tracker = lessons::classifier_tracker(run, 25, 4, "toy", "train_toy.csv");
  std::vector<int64_t> evaluated;
  captured_stdout([&] {
    for (int64_t step = 1; step <= 25; ++step) {
      tracker.step(step, {.loss = 1, .grad_norm = 1}, 0.1);
      if (tracker.evaluation_due(step)) evaluated.push_back(step), tracker.evaluated(step, {0.5, 0.75});
    }
  });
  CHECK(evaluated == std::vector<int64_t>{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 25});  // every 25 / 10 steps, and the last
  const auto table = rows(out.path / "train_toy.csv");
  REQUIRE(table.size() == 13);
  CHECK(table[0].at("val_loss") == "0.5");
  CHECK(table[0].at("val_acc") == "0.75");
  CHECK(std::stod(table[0].at("examples_per_s")) > 0);
  CHECK(tracker.curve("val_loss").name == "toy");
}

TEST_CASE("a flag that picks several names: all, or some in the order given, each once") {
  const std::vector<std::string> kinds = {"full", "linear", "lstm"};
  CHECK(lessons::chosen_names("99_kit", "--kinds", "all", kinds, "kind") == kinds);
  CHECK(lessons::chosen_names("99_kit", "--kinds", "lstm,full", kinds, "kind") == std::vector<std::string>{"lstm", "full"});
  CHECK_THROWS_WITH_AS(lessons::chosen_names("99_kit", "--kinds", "full,relu", kinds, "kind"),
                       doctest::Contains("99_kit: --kinds: 'relu' is not a kind; give 'all' or some of full,linear,lstm "
                                         "separated by commas"),
                       Error);
  CHECK_THROWS_WITH_AS(lessons::chosen_names("99_kit", "--kinds", "full,", kinds, "kind"), doctest::Contains("'' is not a kind"), Error);
  CHECK_THROWS_WITH_AS(lessons::chosen_names("99_kit", "--kinds", "lstm,lstm", kinds, "kind"),
                       doctest::Contains("--kinds: 'lstm' is named twice; name each kind once"), Error);
}

TEST_CASE("a summary keeps its metrics in the order reported, each with its note") {
  lessons::Summary summary;
  summary.report("zeta", 1, "the first");
  summary.report("alpha", 0.5, "the second");
  CHECK(summary.metrics.dump() == R"({"zeta":1,"alpha":0.5})");
  CHECK(summary.notes.at("alpha") == "the second");
}

TEST_CASE("the benchmark's report: a row per contender and task with standard errors, the metrics, two charts per task") {
  TempDir out("kit_benchmark");
  ParsedCli parsed({"--out", out.path.string()});
  lessons::Run run(parsed.cli);
  const auto contender = [](const std::string& name, double acc) {
    return lessons::ContenderResult{name, acc, 10, 2, 100, {name, {1, 2}, {2, 1}}, 400};
  };
  const std::vector<lessons::TaskResults> tasks = {{"a", "Task A", 0.1, 0.2, {contender("full", 0.5), contender("lstm", 0.25)}},
                                                   {"b", "Task B", 0.5, 0.5, {contender("full", 1)}}};
  lessons::Summary summary;
  const std::string printed = captured_stdout([&] { lessons::report_benchmark(run, tasks, summary); });
  const auto table = rows(out.path / "results.csv");
  REQUIRE(table.size() == 3);  // the LSTM left task B out
  CHECK(table[1].at("task") == "b");  // contender by contender, each on every task that has it
  CHECK(table[1].at("kind") == "full");
  CHECK(std::stod(table[1].at("test_acc")) == 1);
  CHECK(std::stod(table[0].at("test_se")) == doctest::Approx(0.025));  // sqrt(0.5 * 0.5 / 400)
  CHECK(table[2].at("kind") == "lstm");
  CHECK(summary.metrics.dump() ==
        R"({"test_acc_a_full":0.5,"test_se_a_full":0.025,"test_acc_b_full":1.0,"test_se_b_full":0.0,)"
        R"("test_acc_a_lstm":0.25,"test_se_a_lstm":0.021650635094610966,)"
        R"("a_chance":0.1,"a_majority":0.2,"b_chance":0.5,"b_majority":0.5})");
  check_files(out.path, {"accuracy_speed_a.png", "accuracy_speed_b.svg", "loss_a.png", "loss_b.svg"});
  CHECK(printed.find("Task A: chance 10.0%, the most common answer 20.0%") != std::string::npos);
  CHECK(printed.find("50.0% +- 2.5") != std::string::npos);
  CHECK(printed.find("25.0% +- 2.2") != std::string::npos);
  CHECK_THROWS_WITH_AS(lessons::report_benchmark(run, {}, summary), doctest::Contains("no tasks to report"), Error);
}

TEST_CASE("the state a query reads: every key and value for full attention, M (D + 1) for a linear map, the listed blocks for BigBird") {
  constexpr int64_t D = 16;
  CHECK(lessons::state_numbers(nn::full_attention(), 100, D) == 2 * 100 * D);
  CHECK(lessons::state_numbers(nn::linear_attention_settings("elu"), 100, D) == D * (D + 1));  // M = D
  CHECK(lessons::state_numbers(nn::linear_attention_settings("taylor"), 100, D) == (1 + D + D * D) * (D + 1));
  // 8 blocks of 8, no random blocks: blocks 0 and 7 see all 8, blocks 1 and 6 four (0, i-1..i+1, 7
  // less the window's overlap), blocks 2-5 five: 44 blocks of 8 keys over 8 query blocks of 8.
  const nn::AttentionSettings window_global = nn::bigbird_attention_settings({.block = 8, .random_blocks = 0});
  CHECK(lessons::state_numbers(window_global, 64, D) == 2 * D * 44);
  const nn::AttentionSettings linformer{.kind = nn::LinformerAttention::kName, .max_length = 64};
  CHECK(lessons::state_numbers(linformer, 64, D) == 2 * linformer.number("k") * D);
  nn::AttentionSettings vq{.kind = nn::VQAttention::kName};
  CHECK(lessons::state_numbers(vq, 1000, D) == 2 * D * 2 * vq.number("block") + vq.number("codes") * (2 * D + 1));
}

TEST_CASE("the capacity's report: a row per kind and count of pairs, the metrics, both charts") {
  TempDir out("kit_capacity");
  ParsedCli parsed({"--out", out.path.string()});
  lessons::Run run(parsed.cli);
  const std::vector<lessons::KindCapacity> kinds = {{"full", {{4, 64, 2048, 1.0, 400}, {64, 192, 6144, 0.99, 6400}}},
                                                    {"linear_elu", {{4, 64, 272, 0.9, 400}, {64, 192, 272, 0.3, 6400}}}};
  lessons::Summary summary;
  const std::string printed = captured_stdout([&] { lessons::report_capacity(run, kinds, 0.0625, summary); });
  const auto table = rows(out.path / "capacity.csv");
  REQUIRE(table.size() == 4);
  CHECK(table[3].at("kind") == "linear_elu");
  CHECK(table[3].at("pairs") == "64");
  CHECK(std::stod(table[3].at("test_se")) == doctest::Approx(std::sqrt(0.3 * 0.7 / 6400)));
  CHECK(summary.metrics["recall_acc_linear_elu_64"].get<double>() == 0.3);
  CHECK(printed.find("30.0% +-0.6") != std::string::npos);
  check_files(out.path, {"recall_pairs.png", "recall_pairs.svg", "recall_state.png", "recall_state.svg"});
  const std::vector<lessons::KindCapacity> uneven = {kinds[0], {"vq", {{4, 64, 100, 0.5, 400}}}};
  CHECK_THROWS_WITH_AS(lessons::report_capacity(run, uneven, 0.1, summary), doctest::Contains("vq has 1 counts of pairs, full 2"), Error);
}
