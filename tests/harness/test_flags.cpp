// The lesson kit's flags: number flags refused in one line before any work, every lesson's bad
// values and own limits checked up front (no folder made), the attention flags and their
// defaults per kind, and flags that pick several names.
#include <doctest/doctest.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "harness/attention_flags.h"
#include "harness/cli.h"
#include "harness/cli_fixtures.h"
#include "lessons/lesson_checks.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/delta_attention.h"
#include "nn/attention/gated_delta_attention.h"
#include "nn/attention/feature_map.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/vq_attention.h"

namespace fs = std::filesystem;
using namespace ladder;
using namespace ladder::testing;

namespace {

const std::vector<std::string> kLessons = {"00_autograd", "01_ngram",     "02_regression", "03_mlp",
                                           "04_cnn",      "05_rnn",       "06_gated_rnn",  "07_seq2seq",
                                           "08_attention_pooling",        "09_attention_seq2seq", "10_transformer",
                                           "11_gpt",      "12_linear_attention",  "13_bigbird",    "14_transformer_vq",
                                           "15_long_range", "17_delta_rule"};

// parse_number's message for `text`, or "" when the value is accepted.
template <class T>
std::string refusal(const std::string& text, harness::Range<T> range) {
  try {
    harness::parse_number<T>("--x", text, range);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

size_t count_lines(const std::string& text) {
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines + (!text.empty() && text.back() != '\n');
}

}  // namespace

TEST_CASE("number flags: short messages that name the flag, the rule and the value") {
  using harness::Range;
  CHECK(refusal<int64_t>("0", harness::positive) == "--x must be a positive whole number, got 0");
  CHECK(refusal<int64_t>("abc", harness::positive) == "--x must be a positive whole number, got abc (not a number)");
  CHECK(refusal<int64_t>("2.5", harness::positive) == "--x must be a positive whole number, got 2.5 (not a whole number)");
  CHECK(refusal<int64_t>("", harness::positive) == "--x must be a positive whole number, got nothing (not a number)");
  CHECK(refusal<int64_t>("99999999999999999999999", harness::positive) ==
        "--x must be a whole number from 1 to 9223372036854775807, got 99999999999999999999999");
  CHECK(refusal<uint64_t>("-1", {}) == "--x must be a whole number from 0 to 18446744073709551615, got -1");
  CHECK(refusal<int>("-1", harness::non_negative) == "--x must be a whole number >= 0, got -1");
  CHECK(refusal<int>("17", Range<int>{1, 16}) == "--x must be a whole number from 1 to 16, got 17");
  CHECK(refusal<float>("nan", harness::positive) == "--x must be a positive finite number, got nan");
  CHECK(refusal<float>("inf", harness::positive) == "--x must be a positive finite number, got inf");
  CHECK(refusal<float>("-inf", {}) == "--x must be a finite number, got -inf");
  CHECK(refusal<float>("0", harness::positive) == "--x must be a positive finite number, got 0");
  CHECK(refusal<float>("-1", harness::non_negative) == "--x must be a finite number >= 0, got -1");
  CHECK(refusal<double>("nan", harness::non_negative) == "--x must be a finite number >= 0, got nan");
  CHECK(refusal<float>("1e39", harness::positive).find("got 1e39 (too large or too small to store)") != std::string::npos);
  CHECK(refusal<float>("0.5x", harness::positive) == "--x must be a positive finite number, got 0.5x (not a number)");
  CHECK(refusal<int64_t>("30", Range<int64_t>{.min = 4, .max = 64, .multiple_of = 4}) ==
        "--x must be a multiple of 4 from 4 to 64, got 30");
  CHECK(refusal<int64_t>("68", Range<int64_t>{.min = 4, .max = 64, .multiple_of = 4}) ==
        "--x must be a multiple of 4 from 4 to 64, got 68");
  CHECK(harness::parse_number<int64_t>("--x", "32", Range<int64_t>{.min = 4, .max = 64, .multiple_of = 4}) == 32);
  CHECK(harness::range_text(Range<int64_t>{.min = 4, .max = 64, .multiple_of = 4}).help == "INT in [4, 64], a multiple of 4");
  // Every value inside the range is taken, the ends included.
  CHECK(harness::parse_number<int64_t>("--x", "1", harness::positive) == 1);
  CHECK(harness::parse_number<int64_t>("--x", "9223372036854775807", harness::positive) == std::numeric_limits<int64_t>::max());
  CHECK(harness::parse_number<uint64_t>("--x", "18446744073709551615", {}) == std::numeric_limits<uint64_t>::max());
  CHECK(harness::parse_number<int>("--x", "16", Range<int>{1, 16}) == 16);
  CHECK(harness::parse_number<int>("--x", "0", harness::non_negative) == 0);
  CHECK(harness::parse_number<float>("--x", "1e-3", harness::positive) == 1e-3f);
  CHECK(harness::parse_number<float>("--x", "-2.5", {}) == -2.5f);
  CHECK(harness::parse_number<double>("--x", "0", harness::non_negative) == 0.0);
  // --help shows the range beside the type.
  CHECK(harness::range_text<int64_t>(harness::positive).help == "INT>0");
  CHECK(harness::range_text<float>(harness::non_negative).help == "FLOAT>=0");
  CHECK(harness::range_text<int>(Range<int>{0, 1024}).help == "INT in [0, 1024]");
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
      {"11_gpt", "--lr-floor", "1.5"},   {"11_gpt", "--clip", "-1"},
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
      {"06_gated_rnn", "--cell tree", {"--cell: tree not in {rnn,gru,lstm}"}},
      {"06_gated_rnn", "--layers 2", {"--layers", "go with --cell"}},
      {"08_attention_pooling", "--trials 100 --keys 1024", {"--trials 100", "--keys 1024", "65536"}},
      {"10_transformer", "--heads 3", {"--heads 3 does not divide --embed 64", "choose --heads dividing --embed"}},
      {"10_transformer", "--embed 48 --heads 5", {"--heads 5 does not divide --embed 48", "choose --heads dividing --embed"}},
      {"10_transformer", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"10_transformer", "--norm-steps 30 --warmup 30", {"--warmup 30", "--norm-steps 30"}},
      {"10_transformer", "--number-steps 30 --warmup 30", {"--warmup 30", "--number-steps 30"}},
      {"10_transformer", "--data /nonexistent/pairs.tsv", {"/nonexistent/pairs.tsv"}},
      {"11_gpt", "--heads 3", {"--heads 3 does not divide --embd 128", "choose --heads dividing --embd"}},
      {"11_gpt", "--context 4000", {"12 rows", "window of 4000", "smaller --batch"}},
      {"11_gpt", "--val " + tiny.string(), {"validation text", "22 tokens", "window of 64"}},
      {"11_gpt", "--steps 500 --warmup 500", {"--warmup 500", "--steps 500"}},
      {"11_gpt", "--decay step", {"--decay: step not in {cosine,linear,constant}"}},
      {"13_bigbird", "--decay exponential", {"--decay: exponential not in {cosine,linear,constant}"}},
      {"11_gpt", "--prompt \"\x01\"", {"--prompt", "vocabulary lacks"}},
      {"11_gpt", "--temperature 0.8", {"--temperature", "--load FILE"}},
      // The attention kind (harness/attention_flags.h): unknown names, a setting for another kind,
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
      {"12_linear_attention", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"13_bigbird", "--length 100", {"--attention-block 8 does not divide --length 100", "whole blocks", "a multiple of --attention-block"}},
      {"13_bigbird", "--length 56", {"--length 56", "7 blocks", "too short"}},
      {"13_bigbird", "--length 32 --random-blocks 0", {"at least 5 blocks", "--length 40"}},
      {"13_bigbird", "--length 2048", {"256 blocks", "128"}},
      {"13_bigbird", "--distance 200", {"--distance 200 must be below --task-length 128", "a smaller --distance"}},
      {"13_bigbird", "--distractors 200", {"200 distractor", "more than half"}},
      {"13_bigbird", "--task-length 48 --distractors 2", {"--task-length 48", "6 blocks", "too short"}},
      // 36 = 4 blocks of 8 and a padded fifth; r = 1 needs 6
      {"13_bigbird", "--task-length 36 --distractors 2 --random-blocks 1", {"5 blocks", "too short", "1 random"}},
      {"13_bigbird", "--width 30", {"--heads 4 does not divide --width 30", "a --width that is a multiple of --heads"}},
      {"13_bigbird", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"13_bigbird", "--patterns full,windows", {"--patterns", "'windows'", "window_global_mid"}},
      {"14_transformer_vq", "--heads 3", {"--heads 3", "--embd 64"}},
      {"14_transformer_vq", "--attention-block 32", {"--attention-block 32", "--context 64", "fewer than 3 blocks",
                                                     "--attention-block 31", "--context 65"}},
      {"14_transformer_vq", "--context 2 --attention-block 1", {"--context 2", "fewer than 3 blocks", "--context 3"}},
      {"14_transformer_vq", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"15_long_range", "--kinds full,relu", {"--kinds", "'relu'", "full,linear_elu,"}},
      {"15_long_range", "--kinds full,,lstm", {"--kinds", "''"}},
      {"15_long_range", "--kinds lstm,full,lstm", {"--kinds", "'lstm'", "twice"}},
      {"15_long_range", "--min-len 300 --max-len 200", {"--min-len 300 is above --max-len 200", "a smaller --min-len"}},
      {"15_long_range", "--d-model 30", {"--d-model must be a multiple of 4", "got 30"}},
      {"15_long_range", "--max-depth 2 --max-args 2 --min-len 5", {"max_depth 2", "max_args 2", "4 tokens"}},
      {"15_long_range", "--kinds full,bigbird --attention-block 16", {"--attention-block 16", "--max-len 64", "full attention", "--attention-block 10"}},
      {"15_long_range", "--kinds bigbird --max-len 256 --recall-len 32", {"--recall-len 32", "every key block"}},
      {"15_long_range", "--steps 50 --warmup 50", {"--warmup 50", "--steps 50"}},
      {"15_long_range", "--kinds full --recall-len 40 --pairs 20 --keys 20", {"length 40", "20 pairs", "at least 44"}},
      {"15_long_range", "--circuit-kinds linformer", {"--circuit-kinds linformer", "cannot attend causally"}},
      {"15_long_range", "--capacity-pairs 0,4", {"--capacity-pairs must be a positive whole number", "got 0"}}};
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
  harness::AttentionFlags flags;
  const auto declare = [&flags](bool causal) {
    return [&flags, causal](harness::LessonCli& cli) { harness::add_attention_options(cli, flags, "the kit's attention", causal); };
  };
  const ParsedCli linear({"--attention", "linear", "--feature-map", "cos", "--chunk", "5"}, declare(true));
  const nn::AttentionSettings s = harness::attention_settings("99_kit", linear.cli, flags, 9);
  const nn::LinearAttention::Settings& linear_settings = s.kind.as<nn::LinearAttention::Settings>();
  CHECK(linear_settings.feature_map == "cos");
  CHECK(linear_settings.chunk == 5);
  CHECK(linear_settings.random_features == 0);  // no flag: the struct's default
  CHECK(s.seed == 9);
  CHECK(linear.cli.flags_json()["feature-map"] == "cos");
  CHECK(harness::describe_attention(s, /*causal=*/true) == "linear (feature map cos, chunk 5)");
  CHECK(harness::describe_attention(s, /*causal=*/false) == "linear (feature map cos)");

  flags = {};
  const ParsedCli bigbird({"--attention", "bigbird", "--attention-block", "8", "--random-blocks", "0"}, declare(false));
  CHECK(std::find(flags.added.begin(), flags.added.end(), "--chunk") == flags.added.end());  // only causal attention has chunks
  const nn::AttentionSettings b = harness::attention_settings("99_kit", bigbird.cli, flags, 9);
  const nn::BigBirdAttention::Settings& bigbird_settings = b.kind.as<nn::BigBirdAttention::Settings>();
  CHECK(bigbird_settings.block == 8);
  CHECK(bigbird_settings.random_blocks == 0);
  CHECK(bigbird_settings.global_blocks);
  CHECK(harness::describe_attention(b, false) == "bigbird (blocks of 8, 0 random per query block)");
  // 4 blocks of 8: bidirectionally the global first and last blocks and the window reach every block; causally
  // block 3 sees blocks 0, 2 and 3 only.
  harness::check_pattern_fits("99_kit", b, 32, /*causal=*/true, "--length 32");
  CHECK_THROWS_WITH_AS(harness::check_pattern_fits("99_kit", b, 32, /*causal=*/false, "--length 32"),
                       doctest::Contains("99_kit: --attention bigbird with --attention-block 8 and --random-blocks 0 over "
                                         "--length 32 in 4 blocks lets every query block see every key block"),
                       Error);
  harness::check_pattern_fits("99_kit", nn::full_attention(), 1, false, "one position");  // only BigBird has a pattern
  // Blocks of 4 over 4 positions: no smaller block leaves key blocks out either.
  nn::AttentionSettings one_block = b;
  one_block.kind.as<nn::BigBirdAttention::Settings>().block = 4;
  CHECK_THROWS_WITH_AS(harness::check_pattern_fits("99_kit", one_block, 4, /*causal=*/false, "--length 4"),
                       doctest::Contains("over --length 4 in 1 block lets every query block see every key block: that is "
                                         "full attention, only slower; the sequence is too short for a sparse pattern: "
                                         "give --attention full"),
                       Error);
  CHECK_THROWS_WITH_AS(harness::check_pattern_fits("99_kit", b, 32, /*causal=*/false, "--length 32", "--kinds"),
                       doctest::Contains("--kinds bigbird with --attention-block 8 and --random-blocks 0 over --length 32 "
                                         "in 4 blocks lets every query block see every key block: that is full attention, "
                                         "only slower; give --attention-block 7 (the largest that leaves key blocks out) "
                                         "or fewer --random-blocks"),
                       Error);

  flags = {};
  const ParsedCli vq({"--attention", "vq", "--attention-block", "12", "--codes", "20", "--cache-gradient", "stopped"},
                     declare(true));
  const nn::AttentionSettings v = harness::attention_settings("99_kit", vq.cli, flags, 9);
  const nn::VQAttention::Settings& vq_settings = v.kind.as<nn::VQAttention::Settings>();
  CHECK(vq_settings.block == 12);
  CHECK(vq_settings.codes == 20);
  CHECK(vq_settings.cache_gradient == "stopped");
  CHECK(vq.cli.flags_json()["codes"] == 20);
  CHECK(harness::describe_attention(v, true) ==
        "vq (blocks of 12, 20 codes per head, q and k normalised, position bias, gradient stopped at the cache)");
  // vq attends both ways: an encoder takes it with its flags too.
  flags = {};
  const ParsedCli encoder({"--attention", "vq", "--codes", "8"}, declare(false));
  CHECK(std::find(flags.added.begin(), flags.added.end(), "--codes") != flags.added.end());
  const nn::AttentionSettings e = harness::attention_settings("99_kit", encoder.cli, flags, 9);
  CHECK(e.kind.as<nn::VQAttention::Settings>().codes == 8);
  CHECK(e.kind.as<nn::VQAttention::Settings>().cache_gradient == "exact");

  // A kind that attends one way only is refused where the attention goes the other way, for every kind.
  for (const nn::KindDescription& kind : nn::attention_kinds())
    for (const bool causal : {true, false}) {
      if (kind.attends(causal)) continue;
      flags = {};
      const ParsedCli one_way({"--attention", kind.name}, declare(causal));
      const std::string expected = "99_kit: --attention " + kind.name + " attends " +
                                   (causal ? "bidirectionally" : "causally") + " only (" + kind.why_one_way +
                                   "), but this attention is " + (causal ? "causal" : "bidirectional");
      CHECK_THROWS_WITH_AS(harness::attention_settings("99_kit", one_way.cli, flags, 9),
                           doctest::Contains(expected.c_str()), Error);
    }
}

TEST_CASE("the lesson's defaults, a struct per kind; a flag given sets every kind that reads it") {
  harness::AttentionFlags flags{.defaults = {nn::BigBirdAttention::Settings{.block = 16},
                                             nn::VQAttention::Settings{.block = 32, .codes = 32}}};
  const auto declare = [&flags](harness::LessonCli& cli) { harness::add_every_kind_options(cli, flags); };
  const ParsedCli plain({}, declare);
  CHECK(std::find(flags.added.begin(), flags.added.end(), "--feature-map") == flags.added.end());  // compared: each runs
  // --chunk is declared for the delta kinds, which run causal (linear reads it only when causal, and runs bidirectional here)
  CHECK(std::find(flags.added.begin(), flags.added.end(), "--chunk") != flags.added.end());
  const ParsedCli chunked({"--chunk", "5"}, declare);
  CHECK(harness::kind_settings<nn::DeltaAttention::Settings>(chunked.cli, flags).chunk == 5);
  CHECK(harness::kind_settings<nn::GatedDeltaAttention::Settings>(chunked.cli, flags).chunk == 5);
  CHECK(harness::kind_settings<nn::BigBirdAttention::Settings>(plain.cli, flags).block == 16);
  CHECK(harness::kind_settings<nn::BigBirdAttention::Settings>(plain.cli, flags).random_blocks == 3);
  CHECK(harness::kind_settings<nn::VQAttention::Settings>(plain.cli, flags).block == 32);
  CHECK(harness::kind_settings<nn::VQAttention::Settings>(plain.cli, flags).codes == 32);
  CHECK(harness::kind_settings(plain.cli, flags, nn::VQAttention::kName, 7).seed == 7);
  std::vector<std::string> names;
  for (const harness::KindRun& run : harness::every_kind(plain.cli, flags, 5)) {
    names.push_back(run.name);
    CHECK(run.settings.seed == 5);
    CHECK(run.causal == !nn::registered_kind(run.settings.kind).attends(false));
  }
  for (const std::string& map : nn::feature_map_names())  // linear once per feature map
    CHECK(std::count(names.begin(), names.end(), "linear_" + map) == 1);
  CHECK(names.size() == nn::attention_kinds().size() + nn::feature_map_names().size() - 1);

  flags = {.defaults = {nn::BigBirdAttention::Settings{.block = 16}, nn::VQAttention::Settings{.block = 32}}};
  const ParsedCli given({"--attention-block", "8"}, declare);
  CHECK(harness::kind_settings<nn::BigBirdAttention::Settings>(given.cli, flags).block == 8);
  CHECK(harness::kind_settings<nn::VQAttention::Settings>(given.cli, flags).block == 8);

  flags = {.defaults = {nn::VQAttention::Settings{.block = 16}, nn::VQAttention::Settings{.block = 32}}};
  CHECK_THROWS_WITH_AS(ParsedCli({}, declare), doctest::Contains("the defaults hold 2 settings of vq attention; give one"),
                       Error);
  flags = {.defaults = {nn::VQAttention::Settings{.codes = 0}}};
  CHECK_THROWS_WITH_AS(ParsedCli({}, declare), doctest::Contains("vq attention: codes must be from 1 to 4096, got 0"), Error);
}

TEST_CASE("a flag that picks several names: all, or some in the order given, each once") {
  const std::vector<std::string> kinds = {"full", "linear", "lstm"};
  CHECK(harness::chosen_names("99_kit", "--kinds", "all", kinds, "kind") == kinds);
  CHECK(harness::chosen_names("99_kit", "--kinds", "lstm,full", kinds, "kind") == std::vector<std::string>{"lstm", "full"});
  CHECK_THROWS_WITH_AS(harness::chosen_names("99_kit", "--kinds", "full,relu", kinds, "kind"),
                       doctest::Contains("99_kit: --kinds: 'relu' is not a kind; give 'all' or some of full,linear,lstm "
                                         "separated by commas"),
                       Error);
  CHECK_THROWS_WITH_AS(harness::chosen_names("99_kit", "--kinds", "full,", kinds, "kind"), doctest::Contains("'' is not a kind"), Error);
  CHECK_THROWS_WITH_AS(harness::chosen_names("99_kit", "--kinds", "lstm,lstm", kinds, "kind"),
                       doctest::Contains("--kinds: 'lstm' is named twice; name each kind once"), Error);
}
