// Smoke tests of the translation lessons 07-10 (and 08, attention pooling): each runs with --quick, writes its files and
// learns; bad flags and inputs are refused with status 2.
#include "lessons/lesson_checks.h"
#include "lessons/note_keys.h"

#include <set>

namespace fs = std::filesystem;
using namespace ladder::testing;

TEST_CASE("lesson 07_seq2seq --quick: the encoder-decoder learns dates; greedy is beam search of width 1; both feedings") {
  TempDir out("lesson07");
  const Ran ran = run_lesson("07_seq2seq", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "metrics_own_predictions.csv", "summary.json", "model.safetensors", "loss.png",
                         "loss.svg", "beam_search.png", "beam_seconds.png", "exact_match_by_length.png",
                         "exact_match_by_length.csv", "metrics_numbers.csv", "numbers_by_length.csv", "numbers_by_length.png"});
  for (const char* csv : {"metrics.csv", "metrics_own_predictions.csv"}) {  // teacher forcing, own predictions
    const std::vector<double> val = column(out.path / csv, "val_loss");
    REQUIRE_MESSAGE(val.size() >= 5, csv);
    CHECK_MESSAGE(val.back() < val.front() - 0.3, csv, ": the loss did not fall");
  }
  const nlohmann::json m = summary_of(out.path)["metrics"];
  // Every source padded to one width: a translation does not depend on its batch, and beam search of
  // width 1 makes exactly the greedy choices.
  CHECK(m["test_bleu_beam1"].get<double>() == m["test_bleu"].get<double>());
  CHECK(m["test_bleu"].get<double>() > 0.1);
  CHECK(ran.output.find("examples (ok: exactly the target; bleu: sentence BLEU):\n  ") != std::string::npos);
  check_ending(ran.output, out.path, {{"test_exact_match", "greedy decoding"}, {"test_bleu_beam8", "width 8"}});
  CHECK(rows(out.path / "exact_match_by_length.csv").size() == 6);
  // Part 5, the number task: its own model learns, and is scored by length and by three decoders.
  const std::vector<double> numbers = column(out.path / "metrics_numbers.csv", "val_loss");
  REQUIRE(numbers.size() >= 5);
  CHECK(numbers.back() < numbers.front() - 0.3);
  CHECK(rows(out.path / "numbers_by_length.csv").size() == 6);
  CHECK(ran.output.find("data: numbers of 1 to 12 digits in words (seed 0)") != std::string::npos);
  for (const char* row : {"\ngreedy  ", "\nbeam 4, log P (alpha 0)  ", "\nbeam 4, log P / length^0.75  ", "\nthe targets  "})
    CHECK_MESSAGE(ran.output.find(row) != std::string::npos, row);
  CHECK(m.contains("numbers_exact_match_longest"));
  // The three decoders along training: at a tenth, a fifth and two fifths of the 40 steps, and at the end.
  CHECK(column(out.path / "length_normalisation.csv", "step") == std::vector<double>{4, 8, 16, 40});
  CHECK(column(out.path / "length_normalisation.csv", "greedy_exact").back() == doctest::Approx(m["numbers_exact_match"].get<double>()));
  CHECK(ran.output.find("\nthe same along training (exact match, then mean output length") != std::string::npos);
  check_files(out.path, {"length_normalisation.csv", "length_normalisation.png"});
  CHECK(ran.output.find("time estimate: ") != std::string::npos);
}

TEST_CASE("lesson 09_attention_seq2seq --quick: attention maps; exact match by length beside lesson 07's run of the same task") {
  TempDir plain("lesson09_plain"), out("lesson09");
  // The run compared with only needs its summary: two steps of lesson 07 write one.
  REQUIRE(run_lesson("07_seq2seq", "--quick --no-part3 --steps 2 --number-steps 2 --out " + plain.path.string()).status == 0);
  const Ran ran = run_lesson("09_attention_seq2seq", "--quick --compare " + plain.path.string() + " --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "summary.json", "model.safetensors", "loss.png", "beam_search.png",
                         "attention_map_1.png", "attention_map_4.svg", "exact_match_by_length.png"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() >= 5);
  CHECK(val.back() < val.front() - 0.3);
  CHECK(ran.output.find("beside lesson 07's run in " + plain.path.string()) != std::string::npos);
  // Both charts, the dates' and the numbers', hold lesson 07's curve and ours.
  for (const char* csv : {"exact_match_by_length.csv", "numbers_by_length.csv"}) {
    std::set<std::string> models;
    for (const auto& row : rows(out.path / csv)) models.insert(row.at("model"));
    const std::set<std::string> both = {"encoder-decoder (lesson 07)", "with attention (lesson 09)"};
    CHECK_MESSAGE(models == both, csv);
  }
  check_files(out.path, {"attention_numbers_1.png", "attention_numbers_2.png", "numbers_by_length.png"});
  // The same metric names as lesson 07, so that the two summaries compare directly.
  const nlohmann::json ours = summary_of(out.path)["metrics"], theirs = summary_of(plain.path)["metrics"];
  for (const auto& [name, value] : ours.items()) CHECK_MESSAGE(theirs.contains(name), name);
  check_ending(ran.output, out.path, {{"test_exact_match", "greedy decoding"}});
  const Ran other = run_lesson("09_attention_seq2seq",
                               "--quick --steps 2 --number-steps 0 --pad-words 2 --compare " + plain.path.string() + " --out " + out.path.string());
  CHECK(other.status == 0);
  CHECK(other.output.find("translated another task (its --pad-words differs)") != std::string::npos);
}

TEST_CASE("lesson 10_transformer --quick: the Transformer learns dates; the table of 07 and 09; maps; post-LN and pre-LN") {
  TempDir gru("lesson10_gru"), out("lesson10");
  // The run compared with only needs its summary: two steps of lesson 09 write one.
  REQUIRE(run_lesson("09_attention_seq2seq", "--quick --steps 2 --number-steps 2 --out " + gru.path.string()).status == 0);
  const Ran ran = run_lesson("10_transformer", "--quick --compare " + gru.path.string() + " --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "summary.json", "model.safetensors", "loss.png", "beam_search.png",
                         "exact_match_by_length.png", "exact_match_by_length.csv", "positional_encoding.png",
                         "position_dot_products.svg", "attention_encoder.png", "attention_decoder.png", "attention_cross.svg",
                         "norm_first.png", "norm_first.svg"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() >= 5);
  CHECK(val.back() < val.front() - 0.3);
  const std::pair<const char*, const char*> norm_runs[] = {{"post-LN with warmup", "metrics_post_ln_warmup.csv"},
                                                           {"post-LN without warmup", "metrics_post_ln_no_warmup.csv"},
                                                           {"pre-LN with warmup", "metrics_pre_ln_warmup.csv"},
                                                           {"pre-LN without warmup", "metrics_pre_ln_no_warmup.csv"}};
  for (const auto& [run, csv] : norm_runs) {
    const std::vector<double> train = column(out.path / csv, "train_loss");
    REQUIRE_MESSAGE(train.size() == 10, run);
    CHECK_MESSAGE(train.back() < train.front() - 0.3, run, ": the loss did not fall");
    CHECK(ran.output.find(std::string("\n") + run + " ") != std::string::npos);  // its row of the table
  }
  CHECK(ran.output.find("beside lesson 09's run in " + gru.path.string()) != std::string::npos);
  CHECK(ran.output.find("examples (ok: exactly the target; bleu: sentence BLEU):\n  ") != std::string::npos);
  // The same metric names as lesson 09 (and 07), so that the summaries compare directly.
  const nlohmann::json ours = summary_of(out.path)["metrics"], theirs = summary_of(gru.path)["metrics"];
  for (const auto& [name, value] : theirs.items()) CHECK_MESSAGE(ours.contains(name), name);
  CHECK(ours["test_bleu_beam1"].get<double>() == ours["test_bleu"].get<double>());
  CHECK(ours["test_bleu"].get<double>() > 0.1);
  check_ending(ran.output, out.path, {{"test_exact_match", "greedy decoding"}, {"val_loss_pre_ln_no_warmup", "part 5"}});
  CHECK(rows(out.path / "exact_match_by_length.csv").size() == 12);  // lesson 09's curve and ours
  // Part 6: the numbers, beside lesson 09's curve.
  CHECK(rows(out.path / "numbers_by_length.csv").size() == 12);
  CHECK(column(out.path / "metrics_numbers.csv", "val_loss").size() >= 5);
}

TEST_CASE("lessons 07, 09 and 10 translate a pairs file at word level and at character level") {
  // A toy language: each English number word becomes its French one, two to four words a line.
  const char* en[] = {"one", "two", "three", "four", "five", "six"};
  const char* fr[] = {"un", "deux", "trois", "quatre", "cinq", "six"};
  std::string pairs;
  for (int i = 0; i < 300; ++i) {
    std::string source, target;
    for (int w = 0; w < 2 + i % 3; ++w) {
      const int k = (i * 7 + w * 5) % 6;
      source += std::string(w ? " " : "") + en[k];
      target += std::string(w ? " " : "") + fr[k];
    }
    pairs += source + (i % 2 ? "." : "!") + "\t" + target + (i % 2 ? "." : " !") + "\tCC-BY 2.0\n";
  }
  const std::string file = write_file("numbers.tsv", pairs);
  TempDir out("lesson07_pairs");
  for (const char* lesson : {"07_seq2seq", "09_attention_seq2seq", "10_transformer"})
    for (const char* level : {"word", "char"}) {
      const std::string skip = std::string(lesson) == "07_seq2seq"       ? " --no-part3"
                               : std::string(lesson) == "10_transformer" ? " --warmup 1 --norm-steps 0"
                                                                         : "";
      const Ran ran = run_lesson(lesson, std::string("--quick --steps 5 --batch 8 --level ") + level + skip + " --data " + file +
                                             " --out " + out.path.string());
      INFO(lesson, " ", level, "\n", ran.output);
      REQUIRE(ran.status == 0);
      CHECK(ran.output.find(file) != std::string::npos);
      // Word level: the vocabulary is the six words, the punctuation and the four special tokens.
      if (std::string(level) == "word") CHECK(ran.output.find("vocabularies 12 (source) and 12 (target)") != std::string::npos);
      CHECK(ran.output.find("batches split into groups of one source length") != std::string::npos);
      CHECK(ran.output.find("the number task") == std::string::npos);  // skipped with --data
      if (std::string(lesson) == "09_attention_seq2seq") {  // without buckets: one width, as the date task
        const Ran padded = run_lesson(lesson, std::string("--quick --steps 5 --batch 8 --no-buckets --level ") + level +
                                                  " --data " + file + " --out " + out.path.string());
        CHECK(padded.status == 0);
        CHECK(padded.output.find("batches split into groups of one source length") == std::string::npos);
        CHECK(summary_of(out.path)["flags"]["no-buckets"] == true);
      }
      check_files(out.path, {"summary.json", "model.safetensors", "exact_match_by_length.csv"});
    }
}

TEST_CASE("lessons 07, 09 and 10: pairs files and task flags that cannot work are refused before training") {
  TempDir out("lesson07_bad");
  const std::string to = " --quick --out " + out.path.string();
  const std::string no_tab = write_file("no_tab.tsv", "Go.\tVa !\nHi. Salut !\n");
  const std::string small = write_file("small.tsv", "Go.\tVa !\nHi.\tSalut !\nRun!\tCours !\n");
  for (const char* lesson : {"07_seq2seq", "09_attention_seq2seq", "10_transformer"}) {
    check_refused(lesson, "--data " + no_tab + to, {no_tab + ":2:", "no tab"});
    check_refused(lesson, "--data " + write_file("empty.tsv", "\n\n") + to, {"only blanks", "no text"});
    check_refused(lesson, "--data " + write_file("binary.tsv", std::string("Go.\tVa !\n\0\x01", 11)) + to, {"binary"});
    check_refused(lesson, "--data " + small + to, {"fewer than one batch of 64", "--batch"});
    check_refused(lesson, "--data " + write_file("two.tsv", "Go.\tVa !\nHi.\tSalut !\n") + to, {"too few to hold out"});
    check_refused(lesson, "--data " + small + " --pad-words 3" + to, {"--pad-words", "date task"});
    check_refused(lesson, "--data " + small + " --level byte" + to, {"--level", "word or char", "'byte'"});
    check_refused(lesson, "--val " + small + to, {"--val", "with --data"});
    check_refused(lesson, "--max-len 5" + to, {"--max-len", "with --data"});
    check_refused(lesson, "--no-buckets" + to, {"--no-buckets", "with --data"});
    check_refused(lesson, "--max-digits 2" + to, {"--max-digits 2", "distinct", "more digits"});  // before training
    check_refused(lesson, "--pairs 900000" + to, {"--pairs", "900000"});
    check_refused(lesson, "--data " + small + " --phrasebook " + (out.path / "p.tsv").string() + to, {"--phrasebook", "--data", "not both"});
    CHECK_FALSE(fs::exists(out.path));
  }
}

TEST_CASE("lesson 09 --phrasebook: a generated pairs file, bucketed, the best weights kept, BLEU and examples") {
  TempDir out("lesson09_phrasebook");
  const std::string file = (out.path / "phrasebook.tsv").string();
  fs::create_directories(out.path);
  const Ran ran = run_lesson("09_attention_seq2seq", "--quick --threads 1 --phrasebook " + file + " --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(ran.output.find("wrote " + file + ": ") != std::string::npos);
  CHECK(ran.output.find("data: " + file + " (words, seed 0)") != std::string::npos);
  CHECK(ran.output.find("batches split into groups of one source length") != std::string::npos);
  CHECK(ran.output.find("time estimate: ") < ran.output.find("step 1/40"));  // before training
  CHECK(ran.output.find("kept the weights of step ") != std::string::npos);
  CHECK(ran.output.find("the targets differ in length: beam search with and without length normalisation") != std::string::npos);
  CHECK(ran.output.find("   bleu ") != std::string::npos);  // the examples' sentence BLEU
  const nlohmann::json m = summary_of(out.path)["metrics"];
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() >= 5);
  CHECK(val.back() < val.front() - 0.3);
  // The kept weights are those of the lowest validation loss, and the summary reports that loss.
  CHECK(m["val_loss"].get<double>() == doctest::Approx(*std::min_element(val.begin(), val.end())).epsilon(1e-6));
}

TEST_CASE("lesson 08_attention_pooling --quick: the kernel learns its width; scoring, the 1/sqrt(d) scale and masks") {
  TempDir out("lesson08");
  const Ran ran = run_lesson("08_attention_pooling", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "summary.json", "model.safetensors", "fits.png", "fits.svg", "weights_nonparametric.png",
                         "weights_before_training.png", "weights_after_training.svg", "loss_against_w.png", "scores_dot.png",
                         "scores_scaled_dot.svg", "scores_additive.png", "scores_general.png", "scaling.csv", "scaling_variance.png",
                         "scaling_largest_weight.svg", "scaling_gradient.png"});
  const std::vector<double> loss = column(out.path / "metrics.csv", "train_loss");
  REQUIRE(loss.size() == 20);
  CHECK(loss.back() < 0.6 * loss.front());
  const nlohmann::json m = summary_of(out.path)["metrics"];
  // Each estimate beats the one before it on the noise-free curve.
  CHECK(m["mse_parametric"].get<double>() < m["mse_nonparametric"].get<double>());
  CHECK(m["mse_nonparametric"].get<double>() < m["mse_average"].get<double>());
  CHECK(m["learned_w"].get<double>() > m["initial_w"].get<double>() + 1);
  CHECK(m["train_loss"].get<double>() == doctest::Approx(loss.back()).epsilon(1e-6));
  // Scaling changes how sharp the weights are, never which key is on top.
  CHECK(m["top_key_right_dot"] == m["top_key_right_scaled_dot"]);
  CHECK(m["var_dot_d512"].get<double>() > 400);
  CHECK(m["var_dot_d512"].get<double>() < 640);
  CHECK(m["var_scaled_dot_d512"].get<double>() == doctest::Approx(1).epsilon(0.25));
  CHECK(m["max_weight_d512"].get<double>() > 0.8);
  CHECK(m["max_weight_scaled_d512"].get<double>() < 0.5);
  CHECK(m["grad_median_d512"].get<double>() < 0.05 * m["grad_median_scaled_d512"].get<double>());
  CHECK(m["masked_weight_max"].get<double>() == 0);
  CHECK(m["padded_values_effect"].get<double>() == 0);
  CHECK(ran.output.find("      1     0        [0]      [0]      [0]      [0]    0.000") != std::string::npos);  // no visible key
  check_ending(ran.output, out.path, {{"mse_parametric", "learned w"}, {"masked_weight_max", "exactly 0"}});
}

TEST_CASE("lesson 10_transformer --attention linear: the encoder's self attention takes it, the decoder stays full") {
  TempDir out("lesson10_linear");
  const Ran ran = run_lesson("10_transformer", "--quick --threads 1 --attention linear --norm-steps 0 --steps 15 --warmup 2 "
                                               "--layers 1 --pairs 300 --batch 32 --verbose --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"summary.json", "model.safetensors", "beam_search.png", "attention_encoder.png", "attention_decoder.png",
                         "attention_cross.png"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() == 15);
  CHECK(val.back() < val.front() - 0.3);
  CHECK(ran.output.find("encoder self attention: linear (feature map elu); the decoder's attention: full") != std::string::npos);
  // One encoder layer of linear attention; the decoder's self and cross attention are full (the
  // tree --verbose prints has every module).
  size_t linear_layers = 0;
  for (size_t at = ran.output.find("LinearAttention("); at != std::string::npos; at = ran.output.find("LinearAttention(", at + 1))
    ++linear_layers;
  CHECK(linear_layers == 1);
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["encoder_attention"] == "linear");
  CHECK(m["test_bleu_beam4"].get<double>() > 0);
}
