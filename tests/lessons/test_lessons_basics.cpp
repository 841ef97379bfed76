// Smoke tests of lessons 00-06 and the lesson command line: each runs with --quick, writes its files and
// learns; bad flags and inputs are refused with status 2.
#include "lessons/lesson_checks.h"
#include "lessons/note_keys.h"

namespace fs = std::filesystem;
using namespace ladder::testing;

TEST_CASE("lesson 00_autograd --quick: gradients agree, the MLP learns, the checkpoint reloads") {
  TempDir out("lesson00");
  const Ran ran = run_lesson("00_autograd", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  CHECK(ran.output.find("largest difference between backward() and finite differences") != std::string::npos);
  CHECK(ran.output.find("reloaded: predictions identical") != std::string::npos);
  check_files(out.path, {"metrics.csv", "summary.json", "graph.dot", "loss.png", "loss.svg", "fit.png", "fit.svg",
                         "model.safetensors"});
  const std::vector<double> loss = column(out.path / "metrics.csv", "train_loss");
  REQUIRE(loss.size() >= 5);
  CHECK(loss.back() < 0.2 * loss.front());
  const nlohmann::json summary = summary_of(out.path);
  CHECK(summary["lesson"] == "00_autograd");
  CHECK(summary["flags"]["quick"] == true);
  CHECK(summary["flags"]["lr"] == 0.01);
  CHECK(summary["metrics"]["val_loss"].get<double>() < summary["metrics"]["train_loss"].get<double>() * 10);
  CHECK(summary["seconds"].get<double>() > 0);
  check_ending(ran.output, out.path, {{"val_loss", "MSE of the MLP on 200"}});
}

TEST_CASE("a lesson whose plot cannot be written stops with status 2 and names the file") {
  TempDir out("lesson00_plot");
  fs::create_directories(out.path / "fit.png");  // a folder where the PNG should go
  check_refused("00_autograd", "--quick --out " + out.path.string(),
                {"cannot write", (out.path / "fit.png").string(), "Is a directory"});
}

TEST_CASE("lesson command line: --help shows every flag with its default; bad input exits 2") {
  const Ran help = run_lesson("00_autograd", "--help");
  CHECK(help.status == 0);
  for (const char* flag : {"--steps", "--lr", "--batch", "--seed", "--threads", "--out", "--quick", "--hidden", "3000"})
    CHECK_MESSAGE(help.output.find(flag) != std::string::npos, "--help lacks ", flag);
  check_refused("00_autograd", "--bogus", {"--bogus"});
  check_refused("00_autograd", "--steps -5", {"--steps", "-5"});
  check_refused("00_autograd", "--lr fast", {"--lr", "fast"});
  check_refused("00_autograd", "--quick --out /proc/ladder-cannot-write-here",
                {"cannot create", "/proc/ladder-cannot-write-here"});
}

TEST_CASE("lesson 01_ngram --quick: every estimator, perplexity falls with order, samples") {
  TempDir out("lesson01");
  const Ran ran = run_lesson("01_ngram", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "summary.json", "val_ppl_by_order.png", "val_ppl_by_order.svg", "add_delta.png",
                         "add_delta.svg", "samples.txt"});
  std::map<std::string, std::map<int, double>> val_loss;  // estimator -> order -> NLL
  for (const auto& row : rows(out.path / "metrics.csv")) val_loss[row.at("estimator")][std::stoi(row.at("order"))] = std::stod(row.at("val_loss"));
  for (const char* e : {"mle", "add-one", "add-delta", "simple-backoff", "backoff", "interp"}) CHECK(val_loss.count(e));
  CHECK(val_loss["backoff"][3] < val_loss["backoff"][1] - 0.5);  // the loss fell: context helps
  CHECK(val_loss["interp"][3] < val_loss["interp"][1] - 0.5);
  CHECK(std::isinf(val_loss["mle"][3]));  // unseen trigrams: probability 0, and reported as such
  CHECK(ran.output.find("sum to") != std::string::npos);  // the simple back-off's mass, measured
  const nlohmann::json summary = summary_of(out.path);
  CHECK(summary["lesson"] == "01_ngram");
  CHECK(summary["metrics"]["val_ppl"].get<double>() == doctest::Approx(std::exp(summary["metrics"]["val_loss"].get<double>())));
  CHECK(summary["metrics"]["val_ppl"].get<double>() < 15);
  CHECK(fs::file_size(out.path / "samples.txt") > 20);
  check_ending(ran.output, out.path, {{"estimator", "the best estimator on validation text"}});
}

TEST_CASE("lesson 01_ngram: one model at word level, and bad input") {
  TempDir out("lesson01w");
  const Ran one = run_lesson("01_ngram", "--quick --level word --order 2 --smoothing interp --out " + out.path.string());
  INFO(one.output);
  REQUIRE(one.status == 0);
  const nlohmann::json summary = summary_of(out.path);
  CHECK(summary["metrics"]["estimator"] == "interp");
  CHECK(summary["metrics"]["order"] == 2);
  CHECK(summary["metrics"]["train_loss"].get<double>() > 0);
  CHECK(summary["flags"]["level"] == "word");
  const std::string tmp = " --out " + out.path.string();
  check_refused("01_ngram", "--smoothing kneser" + tmp, {"estimator", "'kneser'"});
  check_refused("01_ngram", "--data /nonexistent/corpus.txt" + tmp, {"/nonexistent/corpus.txt", "cannot open"});
  check_refused("01_ngram", "--data " + write_file("empty.txt", "\n\n") + tmp, {"only blanks", "no text"});
  check_refused("01_ngram", "--data " + write_file("binary.bin", std::string("ab\0\x01", 4)) + tmp, {"binary"});
  check_refused("01_ngram", "--data " + write_file("single.txt", "zzzz\nzz\nzzz\n") + tmp, {"1 distinct character"});
  const Ran level = run_lesson("01_ngram", "--level byte" + tmp);
  CHECK(level.status == 2);
}

TEST_CASE("lesson 02_regression --quick: perceptron converges, GD meets the normal equations, classifiers learn") {
  TempDir out("lesson02");
  const Ran ran = run_lesson("02_regression", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "summary.json", "losses.png", "losses.svg", "perceptron.png", "logistic.png",
                         "softmax.png", "xor_linear.png", "xor_mlp.svg"});
  const auto table = rows(out.path / "metrics.csv");
  REQUIRE(table.size() >= 10);
  for (const char* model : {"linear regression (MSE)", "logistic regression (BCE)", "softmax regression (CE)", "XOR: one hidden layer"})
    CHECK_MESSAGE(std::stod(table.back().at(model)) < 0.5 * std::stod(table.front().at(model)), model, ": the loss did not fall");
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["perceptron_epochs"].get<int>() < 100);
  CHECK(m["normal_equations_vs_gd_max_gap"].get<double>() < 0.05);
  CHECK(m["test_acc"].get<double>() > 0.9);
  CHECK(m["xor_linear_train_acc"].get<double>() < 0.8);  // no line separates XOR
  CHECK(m["xor_mlp_train_acc"].get<double>() > 0.95);
  check_ending(ran.output, out.path, {{"test_acc", "softmax regression, 3 clusters"}, {"logistic_test_acc", "logistic regression"}});
}

TEST_CASE("lesson 03_mlp --quick: spirals need a hidden layer; the MLP language model learns") {
  TempDir out("lesson03");
  const Ran ran = run_lesson("03_mlp", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "summary.json", "spirals_accuracy.png", "spirals_linear.png", "spirals_best.svg",
                         "lm_loss.png", "lm_loss.svg", "samples.txt", "model.safetensors"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() >= 5);
  CHECK(val.back() < val.front() - 0.2);
  CHECK(ran.output.find("1-gram, interpolated (lesson 01)") != std::string::npos);  // printed beside the n-grams
  CHECK(ran.output.find("unseen contexts") != std::string::npos);
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["test_acc"].get<double>() > 0.9);
  CHECK(m["val_ppl"].get<double>() < 15);
  CHECK(m["val_ppl"].get<double>() == doctest::Approx(std::exp(m["val_loss"].get<double>())));
  check_ending(ran.output, out.path, {{"test_acc", "spirals: "}, {"val_loss", "MLP language model"}});
}

TEST_CASE("lesson 04_cnn --quick: the CNN recognises shifted digits, the MLP does not") {
  TempDir out("lesson04");
  const Ran ran = run_lesson("04_cnn", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "metrics_mlp.csv", "summary.json", "accuracy.png", "accuracy.svg", "filters.png",
                         "filters.svg", "input.png", "feature_maps.png", "feature_maps.svg", "model.safetensors"});
  CHECK(ran.output.find("Conv2d(1, 16, kernel=3") != std::string::npos);  // the shape table
  CHECK(ran.output.find("BatchNorm2d(16") != std::string::npos);
  CHECK(ran.output.find("(1,32,5,5)") != std::string::npos);
  const std::vector<double> loss = column(out.path / "metrics.csv", "train_loss");  // the CNN's
  REQUIRE(loss.size() >= 5);
  CHECK(loss.back() < 0.5 * loss.front());
  // Both models evaluated at the same steps; the last row of each holds the accuracies summary.json reports.
  CHECK(column(out.path / "metrics_mlp.csv", "step") == column(out.path / "metrics.csv", "step"));
  CHECK(column(out.path / "metrics_mlp.csv", "test_acc_shifted").back() ==
        doctest::Approx(summary_of(out.path)["metrics"]["mlp_test_acc_shifted"].get<double>()));
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["test_acc"].get<double>() > 0.8);                  // the CNN on shifted digits
  CHECK(m["mlp_test_acc_shifted"].get<double>() < 0.5);      // the MLP never saw digits there
  CHECK(m["mlp_test_acc_seen"].get<double>() > 0.8);         // but learned them where it did
  check_ending(ran.output, out.path, {{"test_acc", "the CNN on 1000 shifted test images"}});
}

TEST_CASE("lesson 05_rnn --quick: the character RNN learns; N-vs-1, 1-vs-N, BPTT and clipping run") {
  TempDir out("lesson05");
  const Ran ran = run_lesson("05_rnn", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "summary.json", "perplexity.png", "perplexity.svg", "samples.txt", "model.safetensors",
                         "bptt_gradients.png", "bptt_gradients.svg", "clipping.png", "clipping.svg", "clipping_grad_norm.png",
                         "clipping_bptt.svg"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() >= 5);
  CHECK(val.back() < val.front() - 0.3);
  CHECK(ran.output.find("sigma 0.80") != std::string::npos);
  CHECK(ran.output.find("before training: |dL/dh| at t = 0") != std::string::npos);
  // Progress lines (plain ones: the output is a pipe) for every part that trains, with its own total.
  for (const char* last : {"step 100/100 | loss", "step 150/150 | loss", "step 60/60 | loss"})
    CHECK_MESSAGE(ran.output.find(last) != std::string::npos, "no progress line ", last);
  CHECK(ran.output.find("seq/s") != std::string::npos);    // part 2
  CHECK(ran.output.find("names/s") != std::string::npos);  // part 3
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["val_ppl"].get<double>() == doctest::Approx(std::exp(m["val_loss"].get<double>())));
  CHECK(m["most_frequent_test_acc"].get<double>() > 0.5);
  CHECK(m["digit_names_right"].get<double>() >= 0.0);
  CHECK(m["digit_names_right"].get<double>() <= 1.0);
  // Zero inputs and W_hh = 0.8 x orthogonal: the ratio is exactly 0.8^49, whatever the training did.
  CHECK(ran.output.find("sigma 0.80: |dL/dh| at t = 0 is 1.78e-05 times") != std::string::npos);
  check_ending(ran.output, out.path, {{"most_frequent_test_acc", "N-vs-1"}, {"val_loss", "the character RNN"}});
  check_refused("05_rnn", "--quick --lines --out " + out.path.string(), {"--lines", "does not apply"});
}

TEST_CASE("--val with characters the training text never had: they are left out of val_loss and counted") {
  // Training text over a, b, c, d; validation text over the same, with every fifth character an x.
  std::string train, val;
  uint32_t state = 7;
  auto letter = [&] { return static_cast<char>('a' + ((state = state * 1103515245u + 12345u) >> 16) % 4); };
  for (int line = 0; line < 300; ++line, train += '\n')
    for (int i = 0; i < 40; ++i) train += letter();
  for (int line = 0; line < 30; ++line, val += '\n')
    for (int i = 0; i < 40; ++i) val += i % 5 == 4 ? 'x' : letter();
  const std::string files = " --data " + write_file("train_abcd.txt", train) + " --val " + write_file("val_abcdx.txt", val);
  for (const char* lesson : {"03_mlp", "05_rnn", "06_gated_rnn"}) {
    TempDir out(std::string("unknown_") + lesson);
    const std::string extra = std::string(lesson) == "06_gated_rnn" ? " --cell gru" : "";
    const Ran ran = run_lesson(lesson, "--quick --threads 1" + extra + files + " --out " + out.path.string());
    INFO(lesson, "\n", ran.output);
    REQUIRE(ran.status == 0);
    CHECK(ran.output.find("240 of the ") != std::string::npos);
    CHECK(ran.output.find("are not in the training text: left out of val_loss") != std::string::npos);
    const nlohmann::json m = summary_of(out.path)["metrics"];
    CHECK(m["val_unknown_tokens"] == 240);
    CHECK(m["val_tokens"].get<int64_t>() > 240);
    // Scored as <unk>, val_ppl was in the thousands; over the known characters it is that of a
    // four-letter text, below the vocabulary size (4 letters, the newline and 4 special tokens).
    CHECK(m["val_ppl"].get<double>() < 9);
  }
}

TEST_CASE("lesson 06_gated_rnn --quick: every cell learns; LSTM and GRU gates plotted; fill-in scored for both directions") {
  TempDir out("lesson06");
  const Ran ran = run_lesson("06_gated_rnn", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics_rnn.csv", "metrics_gru.csv", "metrics_lstm.csv", "metrics_gru_2_layers.csv", "summary.json",
                         "perplexity.png", "perplexity.svg", "lstm_forget_gate.png", "lstm_input_gate.svg", "model.safetensors"});
  for (const char* model : {"rnn", "gru", "lstm", "gru_2_layers"}) {
    const std::vector<double> val = column(out.path / ("metrics_" + std::string(model) + ".csv"), "val_loss");
    REQUIRE_MESSAGE(val.size() >= 5, model);
    CHECK_MESSAGE(val.back() < val.front() - 0.2, model, ": the loss did not fall");
  }
  CHECK(ran.output.find("step 30/30 | loss") != std::string::npos);  // the fill-in task's progress (half the steps)
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["val_ppl"].get<double>() == doctest::Approx(std::exp(m["val_loss"].get<double>())));
  for (const char* key : {"fill_in_acc_unidirectional", "fill_in_acc_bidirectional"}) {
    REQUIRE_MESSAGE(m.contains(key), key);
    CHECK(m[key].get<double>() >= 0.0);
    CHECK(m[key].get<double>() <= 1.0);
  }
  check_ending(ran.output, out.path, {{"fill_in_acc_bidirectional", "reading both ways"}, {"val_loss", "best_model"}});
  for (const char* model : {"rnn", "gru", "lstm", "gru_2_layers"}) CHECK_MESSAGE(m.contains("val_ppl_" + std::string(model)), model);
  // One model is named as it is among the four, so that ./ladder compare pairs its figures with theirs.
  const TempDir single("lesson06_single");
  const Ran one = run_lesson("06_gated_rnn", "--quick --cell gru --layers 2 --bidirectional --out " + single.path.string());
  CHECK(one.status == 0);
  const nlohmann::json single_metrics = summary_of(single.path)["metrics"];
  CHECK(single_metrics["best_model"] == "GRU 2 layers");
  CHECK(single_metrics.contains("val_ppl_gru_2_layers"));
  CHECK(column(single.path / "metrics_gru_2_layers.csv", "val_loss").size() >= 5);
  CHECK_FALSE(fs::exists(single.path / "metrics.csv"));
  check_files(single.path, {"gru_update_gate.png", "gru_reset_gate.svg"});  // a GRU's gates, where the LSTM's were
  const Ran deeper = run_lesson("06_gated_rnn", "--quick --steps 2 --cell lstm --layers 3 --out " + single.path.string());
  CHECK(deeper.status == 0);
  CHECK(summary_of(single.path)["metrics"]["best_model"] == "LSTM 3 layers");
  CHECK(summary_of(single.path)["metrics"].contains("val_ppl_lstm_3_layers"));
  CHECK(fs::exists(single.path / "metrics_lstm_3_layers.csv"));
  check_refused("06_gated_rnn", "--quick --cell tree --out " + out.path.string(), {"--cell: tree not in {rnn,gru,lstm}"});
  check_refused("06_gated_rnn", "--quick --layers 2 --out " + out.path.string(), {"--layers", "go with --cell"});
}
