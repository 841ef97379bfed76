// Smoke tests of the attention lessons 11-15: each runs with --quick, writes its files and
// learns; bad flags and inputs are refused with status 2.
#include "lessons/lesson_checks.h"
#include "lessons/note_keys.h"

#include <random>
#include <sstream>

#include "io/safetensors.h"
#include "nn/attention/attention_registry.h"

namespace fs = std::filesystem;
using namespace ladder::testing;

TEST_CASE("lesson 11_gpt --quick: the GPT learns; samples at three temperatures; KV-cache speed; attention maps; --load samples") {
  TempDir out("lesson11");
  const Ran ran = run_lesson("11_gpt", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "summary.json", "perplexity.png", "perplexity.svg", "samples.txt", "model.safetensors",
                         "generation_speed.csv", "generation_speed.png", "generation_speed.svg", "attention_layer1_head1.png",
                         "attention_layer4_head4.svg"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() == 6);  // evaluations at steps 10, 20, ..., 60
  CHECK(val.back() < val.front() - 0.3);
  CHECK(says_all(ran.output, {"(0)-(3): 4 x GPTBlock()", "[198,272 each]", "--verbose"}));  // the outline, not every module
  CHECK(ran.output.find("(c_fc): Linear") == std::string::npos);
  CHECK(column(out.path / "metrics.csv", "val_ppl").back() == doctest::Approx(std::exp(val.back())));
  const std::vector<double> lr = column(out.path / "metrics.csv", "lr");
  CHECK(lr.back() < lr[1]);  // the cosine decay, after the warmup
  std::ifstream samples(out.path / "samples.txt");
  const std::string text((std::istreambuf_iterator<char>(samples)), std::istreambuf_iterator<char>());
  for (const char* t : {"-- temperature 0.5:", "-- temperature 1.0:", "-- temperature 1.5:"}) CHECK(text.find(t) != std::string::npos);
  CHECK(rows(out.path / "generation_speed.csv").size() == 4);  // contexts 8, 16, 32, 64
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["val_ppl"].get<double>() == doctest::Approx(std::exp(m["val_loss"].get<double>())));
  CHECK(m["cached_tokens_per_s"].get<double>() > 0);
  check_ending(ran.output, out.path, {{"val_loss", "the GPT"}, {"cached_tokens_per_s", "KV cache"}});

  // The checkpoint samples without training: the prompt comes back, continued by --sample-chars characters.
  const std::string model = (out.path / "model.safetensors").string();
  const Ran sampled = run_lesson("11_gpt", "--load " + model + " --sample-chars 40 --prompt \"The \"");
  INFO(sampled.output);
  REQUIRE(sampled.status == 0);
  CHECK(sampled.output.find("a GPT of ") != std::string::npos);
  CHECK(sampled.output.find("\nThe ") != std::string::npos);
  check_refused("11_gpt", "--load " + model + " --prompt \"caf\xc3\xa9\"", {"--prompt", "vocabulary lacks", "'\xc3\xa9'"});
  // At temperature 3 the barely trained model spreads its probability over all its ids, each a
  // character of the text: a stream's vocabulary holds no special token to draw.
  const Ran hot = run_lesson("11_gpt", "--load " + model + " --sample-chars 3000 --temperature 3");
  REQUIRE(hot.status == 0);
  CHECK(hot.output.find("<unk>") == std::string::npos);
  // A shorter context keeps the first positions; a longer one than the model learned is refused, and so
  // are the flags of training, which --load would ignore.
  const Ran shorter = run_lesson("11_gpt", "--load " + model + " --context 16 --sample-chars 100");
  CHECK(shorter.status == 0);
  CHECK(shorter.output.find("context 16 of the 64 it learned") != std::string::npos);
  check_refused("11_gpt", "--load " + model + " --context 65", {"--context 65", model, "64 positions", "give --context 64 or less"});
  check_refused("11_gpt", "--load " + model + " --steps 10 --embd 64 --quick",
                {"--load", "--steps, --embd, --quick", "ignored"});

  // A checkpoint of another lesson, and a file that is no checkpoint.
  TempDir other("lesson11_other");
  REQUIRE(run_lesson("00_autograd", "--quick --out " + other.path.string()).status == 0);
  check_refused("11_gpt", "--load " + (other.path / "model.safetensors").string(), {"lesson 00_autograd", "not a GPT of lesson 11"});
  check_refused("11_gpt", "--load " + write_file("not_a_model.safetensors", "hello"), {"not_a_model.safetensors"});
}

TEST_CASE("lesson 11_gpt --attention linear, bigbird and vq: it learns, says which kind ran, and --load samples with that kind") {
  // A small GPT, to keep it to a second or two: one block, 32 wide, context 32 (BigBird: 8 blocks of 4).
  const std::string small = "--quick --threads 1 --steps 20 --lr 3e-3 --eval-every 5 --warmup 2 --layers 1 --embd 32 --heads 2 --context 32";
  for (const std::string kind : {"linear", "bigbird", "vq"}) {
    TempDir out("lesson11_" + kind);
    const std::string settings = kind == "bigbird" ? " --attention-block 4" : kind == "vq" ? " --attention-block 8 --codes 16" : "";
    const Ran ran = run_lesson("11_gpt", small + " --attention " + kind + settings + " --out " + out.path.string());
    INFO(kind, "\n", ran.output);
    REQUIRE(ran.status == 0);
    check_files(out.path, {"summary.json", "samples.txt", "model.safetensors", "generation_speed.csv", "attention_layer1_head2.png"});
    const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
    REQUIRE(val.size() == 4);
    CHECK(val.back() < val.front() - 0.3);
    const nlohmann::json summary = summary_of(out.path);
    CHECK(summary["metrics"]["attention"] == kind);
    CHECK(summary["flags"]["attention"] == kind);
    const std::string described = kind == "linear"    ? "linear (feature map elu, chunk 64)"
                                  : kind == "bigbird" ? "bigbird (blocks of 4, 2 random per query block)"
                                                      : "vq (blocks of 8, 16 codes per head, q and k normalised, position bias)";
    CHECK(ran.output.find("attention: " + described + "\n") != std::string::npos);
    CHECK(ran.output.find("== 4. " + kind + " attention of every head") != std::string::npos);
    check_ending(ran.output, out.path, {{"attention", "--attention"}});
    if (kind == "vq") {  // the training loop ran the codebook's EMA: its counts (1 at first) moved
      const ladder::Tensor counts = ladder::io::load_safetensors((out.path / "model.safetensors").string())
                                        .tensors.at("transformer.h.0.attn.attention.quantizer.counts");
      REQUIRE(counts.shape() == ladder::Shape{2, 16});
      float moved = 0;
      for (int64_t s = 0; s < counts.numel(); ++s) moved = std::max(moved, std::abs(counts.data()[s] - 1.0f));
      CHECK(moved > 0.05f);
    }

    const std::string model = (out.path / "model.safetensors").string();
    const Ran sampled = run_lesson("11_gpt", "--load " + model + " --sample-chars 20");
    INFO(sampled.output);
    REQUIRE(sampled.status == 0);
    CHECK(sampled.output.find("context 32, " + described + " attention") != std::string::npos);
    check_refused("11_gpt", "--load " + model + " --attention full --random-blocks 1",
                  {"--load", "--attention, --random-blocks", "ignored"});
  }
}

// One word a line, from the system's word list in a fixed shuffled order (a names file of the
// learner's reads the same way), with `empty` empty lines among them.
std::string words_file(size_t count, int empty) {
  std::ifstream dict("/usr/share/dict/american-english");
  std::vector<std::string> all;
  for (std::string word; std::getline(dict, word);)
    if (!word.empty() && word.size() <= 12 && std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
      all.push_back(word);
  std::shuffle(all.begin(), all.end(), std::mt19937(1));
  std::string text;
  for (size_t n = 0; n < std::min(count, all.size()); ++n) text += all[n] + (n % 500 == 0 && empty-- > 0 ? "\n\n" : "\n");
  return write_file("words.txt", text);
}

// A GPT trained on a words file has learned when its last validation loss (in the csv its run
// wrote) is well below a uniform guess over the 26 letters and <eos>.
void check_learned_words(const fs::path& csv) {
  INFO(csv.filename().string());
  CHECK(column(csv, "val_loss").back() < std::log(27.0) - 0.5);
}

TEST_CASE("lesson 11_gpt --lines: one word a sequence, makemore's recipe, whole-line samples; bad line files refused") {
  const std::string words = words_file(2000, 3);
  TempDir out("lesson11_lines");
  const Ran ran = run_lesson("11_gpt", "--quick --threads 1 --lines --data " + words + " --layers 2 --embd 64 --batch 32 --lr 2e-3 "
                                       "--weight-decay 0.01 --warmup 0 --decay constant --clip 0 --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(says_all(ran.output, {"validation lines", "the longest line and its start marker", "3 empty lines skipped",
                              "over every one of the 60 validation lines"}));
  check_learned_words(out.path / "metrics.csv");  // 250 lines overfit by step 60: the last loss, not the lowest
  for (const double lr : column(out.path / "metrics.csv", "lr")) CHECK(lr == doctest::Approx(2e-3));  // --decay constant
  const std::string samples = read_text(out.path / "samples.txt");
  CHECK(samples.find("<") == std::string::npos);  // no marker is ever printed
  CHECK(samples.find(" of 5 are lines of the training text") != std::string::npos);
  const Ran sampled = run_lesson("11_gpt", "--load " + (out.path / "model.safetensors").string() + " --sample-chars 30 --prompt b");
  INFO(sampled.output);
  REQUIRE(sampled.status == 0);
  const std::string printed = sampled.output.substr(sampled.output.find("attention\n") + 10);
  CHECK(printed.size() >= 30);
  for (size_t start = 0; start < printed.size(); start = printed.find('\n', start) + 1) CHECK(printed[start] == 'b');

  check_refused("11_gpt", "--lines --context 6 --data " + write_file("long.txt", "ab\ncd\nabcdefgh\nx\n"),
                {"line 3", "8 characters", "--context 9"});
  check_refused("11_gpt", "--lines --data " + write_file("one.txt", "abc\n"), {"one line", "no line to hold out"});
}

TEST_CASE("lesson 12_linear_attention --lines: every kind's GPT trains on lines, scored over every validation line") {
  const std::string words = words_file(1000, 0);
  TempDir out("lesson12_lines");
  const Ran ran = run_lesson("12_linear_attention", "--quick --threads 1 --part 4 --lines --data " + words + " --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(ran.output.find("on the lines of " + words) != std::string::npos);
  for (const char* kind : {"softmax", "elu", "cos", "double_softmax", "favor", "taylor"})
    check_learned_words(out.path / ("gpt_" + std::string(kind) + ".csv"));
}

TEST_CASE("lesson 14_transformer_vq --lines: every GPT trains on lines, the VQ codebooks never read the padding") {
  const std::string words = words_file(1000, 0);
  TempDir out("lesson14_lines");
  const Ran ran = run_lesson("14_transformer_vq", "--quick --threads 1 --part 3 --lines --data " + words + " --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  std::istringstream lines(read_text(words));
  int64_t context = 0;  // the longest word and its start marker
  for (std::string word; std::getline(lines, word);) context = std::max(context, 1 + std::ssize(word));
  const int64_t block = (context - 1) / 2;  // the default 16 shrinks to leave 3 blocks in the lines' context
  CHECK(says_all(ran.output, {"--attention-block " + std::to_string(block) + ": the lines' context of " + std::to_string(context),
                              "on the lines of " + words, "keys of 8 validation lines", "queries of 8 validation lines"}));
  for (const char* kind : {"full", "linear", "vq_plain", "vq_norm", "vq", "vq_stopped"})
    check_learned_words(out.path / ("gpt_" + std::string(kind) + ".csv"));
  check_refused("14_transformer_vq", "--lines --attention-block 16 --data " + words,
                {"--attention-block 16", "--context " + std::to_string(context), "fewer than 3 blocks"});
}

TEST_CASE("lesson 12_linear_attention --quick: one layer three ways agrees; the implied maps and their rank; GPTs per kind; cost against length") {
  TempDir out("lesson12");
  const Ran ran = run_lesson("12_linear_attention", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"summary.json", "implied_attention.png", "implied_attention.svg", "layer_cost.csv", "layer_time.png",
                         "layer_time.svg", "layer_memory.png", "generation.csv", "generation_time.png", "generation_time.svg",
                         "gpt_perplexity.png", "gpt_perplexity.svg", "gpt_softmax.csv", "gpt_elu.csv", "gpt_cos.csv",
                         "gpt_double_softmax.csv", "gpt_favor.csv", "gpt_taylor.csv", "spectrum_bidirectional.png",
                         "spectrum_bidirectional.svg", "spectrum_causal.png"});
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["chunked_vs_quadratic"].get<double>() < 1e-5);
  CHECK(m["recurrent_vs_quadratic"].get<double>() < 1e-5);
  CHECK(m["state_floats"] == 4 * 4 + 4);  // elu+1, head size 4: the (4,4) sum and the normaliser
  CHECK(ran.output.find("chunk 4 (3 chunks, the last of 3)") != std::string::npos);
  CHECK(ran.output.find("the recurrent state does not grow: 20 floats after every position") != std::string::npos);
  // Softmax puts most of each row on the key the query was built from; the feature maps spread it.
  CHECK(m["match_weight_softmax"].get<double>() > 0.8);
  CHECK(m["match_weight_softmax_causal"].get<double>() > 0.8);
  for (const std::string map : {"elu", "cos", "double_softmax", "favor", "taylor"}) {
    CHECK(m["match_weight_" + map].get<double>() < m["match_weight_softmax"].get<double>());
    CHECK(m["entropy_" + map].get<double>() > m["entropy_softmax"].get<double>());
    CHECK(m["entropy_" + map + "_causal"].get<double>() > m["entropy_softmax_causal"].get<double>());
  }
  // Part 3: 256 positions, heads of 16: each bidirectional linear map's rank is its features (Taylor's
  // distinct ones: 1 + 16 + 136), Linformer's its 32 rows, softmax's full; causal lifts the bound.
  CHECK(m["rank_softmax"] == 256);
  CHECK(m["rank_elu"] == 16);
  CHECK(m["rank_cos"] == 17);
  CHECK(m["rank_double_softmax"] == 16);
  CHECK(m["rank_favor"] == 44);  // 16 ln 16 random features
  CHECK(m["rank_taylor"] == 153);
  CHECK(m["rank_linformer"] == 32);
  CHECK_FALSE(m.contains("rank_linformer_causal"));  // it attends both ways only
  for (const std::string map : {"elu", "cos", "double_softmax", "favor", "taylor"}) CHECK(m["rank_" + map + "_causal"].get<int>() > 200);
  CHECK(ran.output.find("Taylor (Based)            273            153") != std::string::npos);
  // Part 4: every GPT learned something in its 60 steps (a uniform guess over ~80 characters: perplexity ~80).
  for (const std::string kind : {"softmax", "elu", "cos", "double_softmax", "favor", "taylor"}) {
    INFO(kind);
    CHECK(m["gpt_val_ppl_" + kind].get<double>() < 30);
    const std::vector<double> val = column(out.path / ("gpt_" + kind + ".csv"), "val_loss");
    REQUIRE(val.size() == 6);  // evaluations at steps 10, 20, ..., 60
    CHECK(val.back() < val.front() - 0.3);
    CHECK(m["gpt_val_ppl_" + kind].get<double>() == doctest::Approx(std::exp(val.back())));
  }
  CHECK(rows(out.path / "layer_cost.csv").size() == 2);  // n = 256, 512
  CHECK(rows(out.path / "generation.csv").size() == 2);
  for (const char* name : {"layer_ms_full", "layer_ms_linear", "token_ms_full", "token_ms_linear"}) CHECK(m[name].get<double>() > 0);
  check_ending(ran.output, out.path, {{"chunked_vs_quadratic", "chunked product"}, {"token_ms_linear", "recurrent state"}});
  // The other feature maps agree three ways too, on a length and chunk of their own (part 1 alone).
  for (const std::string map : {"cos", "softmax"}) {
    TempDir other("lesson12_" + map);
    const Ran again = run_lesson("12_linear_attention", "--quick --part 1 --feature-map " + map + " --length 9 --chunk 2 --out " +
                                                             other.path.string());
    INFO(again.output);
    REQUIRE(again.status == 0);
    const nlohmann::json n = summary_of(other.path)["metrics"];
    CHECK(n["chunked_vs_quadratic"].get<double>() < 1e-5);
    CHECK(n["recurrent_vs_quadratic"].get<double>() < 1e-5);
    CHECK(again.output.find("the recurrent state does not grow") != std::string::npos);
  }
}

TEST_CASE("lesson 13_bigbird --quick: the pattern, the retrieval task, time against length, the six patterns trained") {
  TempDir out("lesson13");
  const Ran ran = run_lesson("13_bigbird", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"summary.json", "pattern.png", "pattern.svg", "timing.csv", "attention_time.png",
                         "attention_time.svg", "train_full.csv", "train_window.csv", "train_window_global.csv",
                         "train_bigbird.csv", "train_window_global_mid.csv", "train_bigbird_mid.csv",
                         "accuracy_by_distance.csv", "accuracy_by_distance.png",
                         "accuracy_by_distance.svg", "validation_loss.png", "validation_loss.svg"});
  const nlohmann::json m = summary_of(out.path)["metrics"];
  // 16 blocks of 8, r = 3. Bidirectional: the 2 global rows see all 16; the 14 others 2 global + 3 window
  // + 3 random, less the window block that is a global one in rows 1 and 14. Causal: row 0 sees itself,
  // rows 1-4 see 2, 3, 4 and 5 blocks (fewer past blocks to draw from), rows 5-15 see 6.
  CHECK(m["tiles_dense"] == 256);
  CHECK(m["tiles_bidirectional"] == 2 * 16 + 14 * 8 - 2);
  CHECK(m["tiles_causal"] == 1 + 2 + 3 + 4 + 5 + 11 * 6);
  CHECK(m["task_chance"].get<double>() == doctest::Approx(0.1));
  CHECK(m["task_nearest_key"].get<int>() >= 8);
  CHECK(m["window_layers_needed"].get<int>() >= 1);  // 8 back from position 127: block 14 or before, the question in 15
  const std::vector<double> lengths = column(out.path / "timing.csv", "n");
  CHECK(lengths == std::vector<double>{256, 512});
  for (const double ms : column(out.path / "timing.csv", "bigbird_ms")) CHECK(ms > 0);
  // 4 blocks of 64: every tile; 8 blocks: 2 global rows of 8, rows 2-5 of 8, rows 1 and 6 of 7 (5 blocks left to draw from)
  CHECK(column(out.path / "timing.csv", "bigbird_tiles") == std::vector<double>{16, 2 * 8 + 4 * 8 + 2 * 7});
  CHECK(ran.output.find("block  15 | ") != std::string::npos);  // an example printed a block per line
  CHECK(ran.output.find("chance level: 1 / 10 values = 0.100") != std::string::npos);
  // Part 4 (--quick: 4 steps, 1 layer, 64 test sequences): every variant trained, evaluated at each
  // step and scored, the test sequences counted once by their distance in blocks. That it learns is
  // the next test's.
  for (const char* name : {"full", "window", "window_global", "bigbird", "window_global_mid", "bigbird_mid"}) {
    CHECK(column(out.path / (std::string("train_") + name + ".csv"), "step") == std::vector<double>{1, 2, 3, 4});
    CHECK(m.contains(std::string("test_acc_") + name));
  }
  double counted = 0;
  for (const double count : column(out.path / "accuracy_by_distance.csv", "count")) counted += count;
  CHECK(counted == 64);
  CHECK(column(out.path / "accuracy_by_distance.csv", "blocks_back").size() == 16);
  CHECK(ran.output.find("window + global") != std::string::npos);
  CHECK(ran.output.find("BigBird, mid") != std::string::npos);
  check_ending(ran.output, out.path, {{"tiles_bidirectional", "tiles BigBird computes"}, {"task_chance", "guessing"},
                                      {"test_acc_bigbird", "BigBird, test sequences answered right"}});
}

TEST_CASE("lesson 13_bigbird --quick on a small task: part 4 learns where the question can see the key, not beyond the window") {
  // 80 steps on a task of 64 tokens and 4 values (chance 0.25), one thread. Over seeds 0-7 full attention's test
  // accuracy was 0.73 to 1 and its best validation loss fell by 0.75 nats or more; window + global and BigBird gave
  // the same (one layer, the question in a global block); the window alone scored 0.22 to 0.28 beyond its reach.
  TempDir out("lesson13_learns");
  const Ran ran = run_lesson("13_bigbird", "--quick --threads 1 --steps 80 --train-size 2000 --task-length 64 --keys 4 "
                                           "--values 4 --distractors 3 --lr 3e-3 --width 32 --examples 0 --out " +
                                               out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  const nlohmann::json m = summary_of(out.path)["metrics"];
  REQUIRE(m["task_chance"].get<double>() == doctest::Approx(0.25));
  for (const char* name : {"full", "window_global", "bigbird"}) {
    INFO(name);
    CHECK(m[std::string("test_acc_") + name].get<double>() > 0.55);
    const std::vector<double> val = column(out.path / (std::string("train_") + name + ".csv"), "val_loss");
    REQUIRE(val.size() == 10);
    CHECK(*std::min_element(val.begin() + 1, val.end()) < val.front() - 0.4);
  }
  CHECK(m["window_beyond_reach"].get<double>() < 0.45);  // the key out of its sight: a guess
}

TEST_CASE("lesson 13_bigbird --quick with a task length that --attention-block does not divide: the last block padded") {
  TempDir out("lesson13_padded");
  const Ran ran = run_lesson("13_bigbird", "--quick --task-length 100 --examples 0 --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  // 100 = 12 blocks of 8 and a padded 13th; the question at 99 is in block 12.
  CHECK(column(out.path / "accuracy_by_distance.csv", "blocks_back").size() == 13);
  CHECK(ran.output.find("n = 100, blocks of 8") != std::string::npos);
}

TEST_CASE("lesson 13_bigbird --quick --patterns: only the rows named, in their order, the mid ones padded after the question") {
  TempDir out("lesson13_patterns");
  const Ran ran = run_lesson("13_bigbird", "--quick --part 4 --patterns bigbird_mid,window --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(fs::exists(out.path / "train_bigbird_mid.csv"));
  CHECK(fs::exists(out.path / "train_window.csv"));
  CHECK_FALSE(fs::exists(out.path / "train_full.csv"));
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m.contains("test_acc_bigbird_mid"));
  CHECK(m.contains("window_beyond_reach"));
  CHECK_FALSE(m.contains("test_acc_bigbird"));
  CHECK(ran.output.find("-- BigBird, mid") < ran.output.find("-- window only"));
  // The question's place does not move the distances: the same 16 blocks of the 128 real positions.
  CHECK(column(out.path / "accuracy_by_distance.csv", "blocks_back").size() == 16);
}

TEST_CASE("lesson 14_transformer_vq --quick: one VQ layer two ways agrees; cost against length; GPTs per kind and VQ part by part; the codebook and the bias") {
  TempDir out("lesson14");
  const Ran ran = run_lesson("14_transformer_vq", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"summary.json", "attention_full_vs_vq.png", "attention_full_vs_vq.svg", "vq_regions.png",
                         "vq_regions.svg", "layer_cost.csv", "layer_time.png", "layer_memory.png", "generation.csv",
                         "generation_time.png", "gpt_perplexity.png", "gpt_full.csv", "gpt_linear.csv", "gpt_vq.csv",
                         "gpt_vq_plain.csv", "gpt_vq_norm.csv", "gpt_vq_stopped.csv", "vq_codebook.png",
                         "vq_key_error.png", "vq_code_counts.png", "vq_keys_and_codes.png", "vq_position_bias.png"});
  const nlohmann::json m = summary_of(out.path)["metrics"];
  // Part 1: the block-wise op is the quadratic formula, values and gradients; with nothing rounded it is full attention.
  CHECK(m["blockwise_vs_quadratic"].get<double>() < 1e-5);
  CHECK(m["blockwise_vs_quadratic_grad"].get<double>() < 1e-5);
  CHECK(m["exact_codebook_vs_full"].get<double>() < 1e-5);
  // T = 16 in blocks of 4: the last query reads 8 keys exactly and 8 through the codes.
  CHECK(ran.output.find("    15  ccccccccppppoooo") != std::string::npos);
  CHECK(rows(out.path / "layer_cost.csv").size() == 2);  // n = 256, 512
  CHECK(rows(out.path / "generation.csv").size() == 2);
  for (const std::string kind : {"full", "linear", "vq", "vq_stopped"}) {
    INFO(kind);
    CHECK(m["layer_ms_" + kind].get<double>() > 0);
    CHECK(m["token_ms_" + kind].get<double>() > 0);
  }
  // Part 3: every GPT learns, VQ in each of its forms.
  for (const std::string kind : {"full", "linear", "vq_plain", "vq_norm", "vq", "vq_stopped"}) {
    INFO(kind);
    CHECK(m["gpt_val_ppl_" + kind].get<double>() < 30);  // a uniform guess over ~80 characters: ~80
    const std::vector<double> val = column(out.path / ("gpt_" + kind + ".csv"), "val_loss");
    REQUIRE(val.size() == 6);  // evaluations at steps 10, 20, ..., 60
    CHECK(val.back() < val.front() - 0.3);
    CHECK(m["gpt_val_ppl_" + kind].get<double>() == doctest::Approx(std::exp(val.back())));
  }
  // The VQ model's codebook: its keys take some of the 64 codes of each head, and the codes miss part of their spread.
  CHECK(m["vq_codes_used"].get<double>() >= 1);
  CHECK(m["vq_codes_used"].get<double>() <= 64);
  CHECK(m["vq_codebook_perplexity"].get<double>() >= 1);
  CHECK(m["vq_codebook_perplexity"].get<double>() <= 64);
  CHECK(m["vq_key_error"].get<double>() > 0);
  CHECK(m["vq_key_error"].get<double>() < 1);
  CHECK(ran.output.find("the VQ model's codebooks at the end") != std::string::npos);
  CHECK(ran.output.find("the VQ model's position bias") != std::string::npos);
  CHECK(ran.output.find("the gradient through the cache") != std::string::npos);
  check_ending(ran.output, out.path, {{"blockwise_vs_quadratic", "(T,T) weights"}, {"token_ms_vq", "VQ cache"}});
}

TEST_CASE("lesson 17_delta_rule --quick: the state as a memory; one layer three ways agrees; cost against length; recall and GPTs per kind") {
  TempDir out("lesson17");
  // with the pairs, head widths and recall pairs its note's run-quick line names, so that the note's figures are in the run
  const Ran ran = run_lesson("17_delta_rule", "--quick --most-pairs 128 --head-dims 16,32,64 --recall-pairs 16,64 --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"summary.json", "memory_error.png", "memory_error.svg", "memory_age.png", "memory_age.svg",
                         "layer_cost.csv", "layer_time.png", "layer_memory.png", "generation.csv", "generation_time.png",
                         "recall_state.csv", "recall_state.png", "recall_state.svg", "gpt_perplexity.png", "gpt_full.csv",
                         "gpt_linear_elu.csv", "gpt_delta.csv", "gpt_gated_delta.csv", "train_delta_16_16.csv"});
  const nlohmann::json m = summary_of(out.path)["metrics"];
  // Part 1: a key written again reads back its new value under the delta rule, a blend under the additive one;
  // a state with fewer pairs than D answers each exactly once the rule has passed over them enough.
  CHECK(m["overwrite_delta"].get<double>() < 0.7 * m["overwrite_additive"].get<double>());
  CHECK(m["memory_delta_16"].get<double>() < m["memory_additive_16"].get<double>());
  CHECK(m["memory_least_squares_16"].get<double>() == 0);
  CHECK(m["forget_apart_1_age_32"].get<double>() < 1e-5);     // keys apart and no decay: nothing lost
  CHECK(m["forget_apart_0.9_age_32"].get<double>() > 0.9);    // 1 - 0.9^32 = 0.97 of it decayed away
  // Part 2: chunked and recurrent are the naive recurrence, and the state does not grow with the context.
  for (const char* kind : {"delta", "gated_delta"}) {
    CHECK(m[std::string("chunked_vs_naive_") + kind].get<double>() < 1e-5);
    CHECK(m[std::string("recurrent_vs_naive_") + kind].get<double>() < 1e-5);
  }
  CHECK(says_all(ran.output, {"(B,H,D,D), the same size whatever the length", "delta state ms/token"}));
  // Part 3: every kind at the narrowest width (full attention and Taylor run there only); part 4: a GPT per kind.
  for (const char* kind : {"full", "linear_elu", "linear_taylor", "delta", "gated_delta"}) {
    const double acc = m[std::string("recall_acc_") + kind + "_16_16"].get<double>();
    CHECK(acc >= 0);
    CHECK(acc <= 1);
  }
  for (const char* kind : {"full", "linear_elu", "delta", "gated_delta"})
    CHECK(m[std::string("gpt_val_ppl_") + kind].get<double>() > 1);
  check_ending(ran.output, out.path, {{"overwrite_delta", "rewritten key"}, {"token_ms_delta", "delta state"}});
}

TEST_CASE("lesson 15_long_range --quick: the tasks printed, every kind trained on each, the table, the capacity and the circuit") {
  TempDir out("lesson15");
  // with the capacity pairs its note's run-quick line names, so that the note's figures are in the run
  const Ran ran = run_lesson("15_long_range", "--quick --capacity-pairs 4,16,32,64 --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"summary.json", "results.csv", "train_listops_full.csv", "train_listops_lstm.csv",
                         "train_recall_full.csv", "accuracy_speed_listops.png", "accuracy_speed_listops.svg",
                         "accuracy_speed_recall.png", "loss_listops.png", "loss_recall.svg", "capacity.csv",
                         "recall_pairs.png", "recall_state.svg", "train_circuit_full.csv", "circuit_loss_full.png",
                         "recall_maps_full_layer1.png", "recall_maps_full_layer2.svg"});
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["listops_chance"].get<double>() == doctest::Approx(0.1));
  CHECK(m["recall_chance"].get<double>() == doctest::Approx(0.25));  // --quick: 4 values
  const auto results = rows(out.path / "results.csv");
  // Every kind of the registry, once per choice of a compared setting (linear: each feature map), then the LSTM.
  std::vector<std::string> kinds;
  for (const ladder::nn::KindDescription& kind : ladder::nn::attention_kinds()) {
    std::vector<std::string> names = {kind.name};
    for (const ladder::nn::KindSetting& setting : kind.settings) {
      if (!setting.compared) continue;
      std::vector<std::string> each_choice;
      for (const std::string& name : names)
        for (const std::string& choice : setting.choices) each_choice.push_back(name + "_" + choice);
      names = each_choice;
    }
    kinds.insert(kinds.end(), names.begin(), names.end());
  }
  CHECK(std::find(kinds.begin(), kinds.end(), "linear_favor") != kinds.end());
  CHECK(std::find(kinds.begin(), kinds.end(), "linear_taylor") != kinds.end());
  REQUIRE(results.size() == 2 * kinds.size() + 1);  // every attention kind on both tasks, the LSTM on ListOps only
  for (size_t r = 0; r < results.size(); ++r) {
    const auto& row = results[r];
    CHECK(row.at("kind") == (r / 2 < kinds.size() ? kinds[r / 2] : "lstm"));  // kind by kind, each on both tasks
    CHECK(row.at("task") == (r % 2 ? "recall" : "listops"));
    const double acc = std::stod(row.at("test_acc"));
    CHECK(acc >= 0);
    CHECK(acc <= 1);
    CHECK(m["test_acc_" + row.at("task") + "_" + row.at("kind")].get<double>() == doctest::Approx(acc).epsilon(1e-5));
    CHECK(std::stod(row.at("test_se")) == doctest::Approx(std::sqrt(acc * (1 - acc) / std::stod(row.at("answers")))).epsilon(1e-4));
    CHECK(std::stod(row.at("steps_per_s")) > 0);
    CHECK(std::stod(row.at("peak_mib")) > 0);
  }
  CHECK(rows(out.path / "capacity.csv").size() == 4 * kinds.size());  // 4, 16, 32 and 64 pairs
  // Every training curve is finite, and ListOps' training loss falls.
  kinds.push_back("lstm");
  for (const std::string& kind : kinds) {
    for (const std::string task : {"listops", "recall"}) {
      if (kind == "lstm" && task == "recall") continue;
      INFO(task, " ", kind);
      const auto curve = rows(out.path / ("train_" + task + "_" + kind + ".csv"));
      REQUIRE(curve.size() >= 10);
      for (const auto& point : curve) CHECK(std::isfinite(std::stod(point.at("train_loss"))));
      if (task != "listops") continue;
      // The training loss falls: its last three evaluations below its first three on average (the
      // validation loss of 50 examples can start anywhere; gated_delta's first one sat below the rest).
      const auto mean_train = [&](size_t from) {
        return (std::stod(curve[from].at("train_loss")) + std::stod(curve[from + 1].at("train_loss")) +
                std::stod(curve[from + 2].at("train_loss"))) / 3;
      };
      CHECK(mean_train(curve.size() - 3) < mean_train(0));
    }
  }
  CHECK(ran.output.find("[MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ] = 5") != std::string::npos);
  CHECK(ran.output.find("2 blocks (recall: 1)") != std::string::npos);  // one token per pair: a single hop
  CHECK(ran.output.find("answers: 0:") != std::string::npos);
  CHECK(ran.output.find("the answers, in the order asked:") != std::string::npos);
  // A kind that attends causally only says so, and runs causal; every other runs both ways.
  size_t causal_only = 0;
  for (const ladder::nn::KindDescription& kind : ladder::nn::attention_kinds())
    if (!kind.attends(false)) {
      ++causal_only;
      CHECK(ran.output.find("   " + kind.name + " (") != std::string::npos);
    }
  size_t said = 0;
  for (size_t at = ran.output.find(" runs causal"); at != std::string::npos; at = ran.output.find(" runs causal", at + 1)) ++said;
  CHECK(said == causal_only);
  CHECK(ran.output.find("how many pairs fit a state") != std::string::npos);
  // Its tables show every figure, so the ending does not list them again; summary.json holds them.
  const nlohmann::json metrics = summary_of(out.path)["metrics"];
  CHECK(metrics.contains("test_acc_listops_full"));
  CHECK(metrics.contains("circuit_acc_full"));
  const std::string ending = ran.output.substr(ran.output.find("== 15_long_range done in"));
  CHECK(ending.find("the " + std::to_string(metrics.size()) + " figures of the tables above are in summary.json") != std::string::npos);
  CHECK(ending.find("test_acc_listops_full") == std::string::npos);
  CHECK(ran.output.find("full: test accuracy") != std::string::npos);  // part 5's figure, in its own part

  TempDir two("lesson15_kinds");  // --kinds picks and orders, --tasks picks the parts
  const Ran picked =
      run_lesson("15_long_range", "--quick --kinds lstm,full --tasks listops --steps 3 --out " + two.path.string());
  REQUIRE(picked.status == 0);
  const auto picked_rows = rows(two.path / "results.csv");
  REQUIRE(picked_rows.size() == 2);
  CHECK(picked_rows[0].at("kind") == "lstm");
  CHECK(picked_rows[1].at("kind") == "full");
  CHECK_FALSE(fs::exists(two.path / "capacity.csv"));
}
