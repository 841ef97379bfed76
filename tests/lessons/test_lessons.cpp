// Smoke tests: every lesson runs with --quick, writes its files and learns; and the lesson
// command line answers --help and refuses bad flags with status 2.
#include "lessons/lesson_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/safetensors.h"

namespace fs = std::filesystem;

namespace {

using namespace ladder::testing;

void check_files(const fs::path& folder, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    CHECK_MESSAGE(fs::exists(folder / name), "missing ", (folder / name).string());
    if (fs::exists(folder / name)) CHECK_MESSAGE(fs::file_size(folder / name) > 0, "empty ", (folder / name).string());
  }
}

// The rows of metrics.csv as maps from column to text.
std::vector<std::map<std::string, std::string>> rows(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream head(line);
  for (std::string cell; std::getline(head, cell, ',');) header.push_back(cell);
  std::vector<std::map<std::string, std::string>> out;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::map<std::string, std::string> cells;
    for (const std::string& name : header) std::getline(row, cells[name], ',');
    out.push_back(cells);
  }
  return out;
}

// The values of one column of metrics.csv.
std::vector<double> column(const fs::path& csv, const std::string& name) {
  std::vector<double> values;
  for (const auto& row : rows(csv)) {
    REQUIRE(row.count(name));
    values.push_back(std::stod(row.at(name)));
  }
  return values;
}

// The end of a run's printout: each metric of summary.json on its line, names aligned, numbers
// rounded (at most 4 decimals) yet within rounding of the file's full precision; each of `notes`
// on its metric's line (what an accuracy is of); then the files, and the note to read next.
void check_ending(const std::string& output, const fs::path& folder, const std::map<std::string, std::string>& notes) {
  const nlohmann::json summary = summary_of(folder);
  const nlohmann::json& metrics = summary["metrics"];
  const std::string lesson = summary["lesson"];
  const size_t start = output.find("== " + lesson + " done in");
  REQUIRE(start != std::string::npos);
  size_t width = 0;
  for (const auto& [name, value] : metrics.items()) width = std::max(width, name.size());
  std::stringstream ending(output.substr(start));
  std::string line;
  std::getline(ending, line);  // the header
  std::map<std::string, std::string> lines;
  while (std::getline(ending, line) && line != "files:") {
    INFO(line);
    REQUIRE(line.size() > width + 4);
    const std::string name = line.substr(2, line.find_last_not_of(' ', width + 1) - 1);
    REQUIRE(metrics.contains(name));
    CHECK(line.substr(width + 2, 2) == "  ");
    CHECK(line[width + 4] != ' ');  // every value starts in the same column
    lines[name] = line;
    if (!metrics[name].is_number_float()) continue;
    const std::string value = line.substr(width + 4, line.find(' ', width + 4) - width - 4);
    const double printed = std::stod(value), exact = metrics[name].get<double>();
    const size_t point = value.find('.'), exponent = std::min(value.find('e'), value.size());
    REQUIRE(point != std::string::npos);
    CHECK(exponent - point - 1 <= 4);  // decimals
    CHECK(std::fabs(printed - exact) <= std::max(5e-5, 5e-4 * std::fabs(exact)));
  }
  CHECK(lines.size() == metrics.size());
  for (const auto& [name, note] : notes) CHECK_MESSAGE(lines[name].find(note) != std::string::npos, name, " lacks '", note, "'");
  CHECK(output.find("\nnext: docs/" + lesson + ".md", start) != std::string::npos);
}

std::string write_file(const std::string& name, const std::string& content) {
  const fs::path path = fs::temp_directory_path() / ("ladder_lesson_input_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

}  // namespace

TEST_CASE("lesson 00_autograd --quick: gradients agree, the MLP learns, the checkpoint reloads") {
  TempDir out("lesson00");
  const Ran ran = run_lesson("00_autograd", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
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
                "save_line_chart: cannot write " + (out.path / "fit.png").string() + ": Is a directory");
}

TEST_CASE("lesson command line: --help shows every flag with its default; bad input exits 2") {
  const Ran help = run_lesson("00_autograd", "--help");
  CHECK(help.status == 0);
  for (const char* flag : {"--steps", "--lr", "--batch", "--seed", "--threads", "--out", "--quick", "--hidden", "3000"})
    CHECK_MESSAGE(help.output.find(flag) != std::string::npos, "--help lacks ", flag);
  check_refused("00_autograd", "--bogus", "--bogus");
  check_refused("00_autograd", "--steps -5", "--steps");
  check_refused("00_autograd", "--lr fast", "fast");
  check_refused("00_autograd", "--quick --out /proc/ladder-cannot-write-here",
                "error: run: cannot create the output folder /proc/ladder-cannot-write-here");
}

TEST_CASE("lesson 01_ngram --quick: every estimator, perplexity falls with order, samples") {
  TempDir out("lesson01");
  const Ran ran = run_lesson("01_ngram", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
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
  check_refused("01_ngram", "--smoothing kneser" + tmp, "unknown estimator 'kneser'");
  check_refused("01_ngram", "--data /nonexistent/corpus.txt" + tmp, "/nonexistent/corpus.txt: cannot open");
  check_refused("01_ngram", "--data " + write_file("empty.txt", "\n\n") + tmp, "empty");
  check_refused("01_ngram", "--data " + write_file("binary.bin", std::string("ab\0\x01", 4)) + tmp, "binary");
  check_refused("01_ngram", "--data " + write_file("single.txt", "zzzz\nzz\nzzz\n") + tmp, "1 distinct character");
  const Ran level = run_lesson("01_ngram", "--level byte" + tmp);
  CHECK(level.status == 2);
}

TEST_CASE("lesson 02_regression --quick: perceptron converges, GD meets the normal equations, classifiers learn") {
  TempDir out("lesson02");
  const Ran ran = run_lesson("02_regression", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
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
  check_files(out.path, {"metrics.csv", "summary.json", "accuracy.png", "accuracy.svg", "filters.png", "filters.svg",
                         "input.png", "feature_maps.png", "feature_maps.svg", "model.safetensors"});
  CHECK(ran.output.find("Conv2d(1, 16, kernel=3") != std::string::npos);  // the shape table
  CHECK(ran.output.find("BatchNorm2d(16") != std::string::npos);
  CHECK(ran.output.find("(1,32,5,5)") != std::string::npos);
  const std::vector<double> loss = column(out.path / "metrics.csv", "cnn_train_loss");
  REQUIRE(loss.size() >= 5);
  CHECK(loss.back() < 0.5 * loss.front());
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
  check_refused("05_rnn", "--quick --lines --out " + out.path.string(), "--lines does not apply");
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
  check_files(out.path, {"metrics.csv", "summary.json", "perplexity.png", "perplexity.svg", "lstm_forget_gate.png",
                         "lstm_input_gate.svg", "model.safetensors"});
  std::map<std::string, std::vector<double>> val;
  for (const auto& row : rows(out.path / "metrics.csv")) val[row.at("model")].push_back(std::stod(row.at("val_loss")));
  for (const char* model : {"RNN", "GRU", "LSTM", "GRU 2 layers"}) {
    REQUIRE_MESSAGE(val[model].size() >= 5, model);
    CHECK_MESSAGE(val[model].back() < val[model].front() - 0.2, model, ": the loss did not fall");
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
  const Ran one = run_lesson("06_gated_rnn", "--quick --cell gru --layers 2 --bidirectional --out " + out.path.string());
  CHECK(one.status == 0);
  CHECK(summary_of(out.path)["metrics"]["best_model"] == "gru 2 layers");
  check_files(out.path, {"gru_update_gate.png", "gru_reset_gate.svg"});  // a GRU's gates, where the LSTM's were
  check_refused("06_gated_rnn", "--quick --cell tree --out " + out.path.string(), "unknown cell 'tree'");
  check_refused("06_gated_rnn", "--quick --layers 2 --out " + out.path.string(), "go with --cell");
}

TEST_CASE("lesson 07_seq2seq --quick: the encoder-decoder learns dates; greedy is beam search of width 1; both feedings") {
  TempDir out("lesson07");
  const Ran ran = run_lesson("07_seq2seq", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"metrics.csv", "summary.json", "model.safetensors", "loss.png", "loss.svg", "beam_search.png",
                         "beam_seconds.png", "exact_match_by_length.png", "exact_match_by_length.csv"});
  std::map<std::string, std::vector<double>> val;
  for (const auto& row : rows(out.path / "metrics.csv")) val[row.at("model")].push_back(std::stod(row.at("val_loss")));
  for (const char* model : {"teacher forcing", "own predictions"}) {
    REQUIRE_MESSAGE(val[model].size() >= 5, model);
    CHECK_MESSAGE(val[model].back() < val[model].front() - 0.3, model, ": the loss did not fall");
  }
  const nlohmann::json m = summary_of(out.path)["metrics"];
  // Every source padded to one width: a translation does not depend on its batch, and beam search of
  // width 1 makes exactly the greedy choices.
  CHECK(m["test_bleu_beam1"].get<double>() == m["test_bleu"].get<double>());
  CHECK(m["test_bleu"].get<double>() > 0.1);
  CHECK(ran.output.find("examples (ok: exactly the target):\n  ") != std::string::npos);
  check_ending(ran.output, out.path, {{"test_exact_match", "greedy decoding"}, {"test_bleu_beam8", "width 8"}});
  CHECK(rows(out.path / "exact_match_by_length.csv").size() == 6);
}

TEST_CASE("lesson 09_attention_seq2seq --quick: attention maps; exact match by length beside lesson 07's run of the same task") {
  TempDir plain("lesson09_plain"), out("lesson09");
  // The run compared with only needs its summary: two steps of lesson 07 write one.
  REQUIRE(run_lesson("07_seq2seq", "--quick --no-part3 --steps 2 --out " + plain.path.string()).status == 0);
  const Ran ran = run_lesson("09_attention_seq2seq", "--quick --compare " + plain.path.string() + " --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"metrics.csv", "summary.json", "model.safetensors", "loss.png", "beam_search.png",
                         "attention_map_1.png", "attention_map_4.svg", "exact_match_by_length.png"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() >= 5);
  CHECK(val.back() < val.front() - 0.3);
  CHECK(ran.output.find("beside lesson 07's run in " + plain.path.string()) != std::string::npos);
  // The same metric names as lesson 07, so that the two summaries compare directly.
  const nlohmann::json ours = summary_of(out.path)["metrics"], theirs = summary_of(plain.path)["metrics"];
  for (const auto& [name, value] : ours.items()) CHECK_MESSAGE(theirs.contains(name), name);
  check_ending(ran.output, out.path, {{"test_exact_match", "greedy decoding"}});
  const Ran other = run_lesson("09_attention_seq2seq",
                               "--quick --steps 2 --pad-words 2 --compare " + plain.path.string() + " --out " + out.path.string());
  CHECK(other.status == 0);
  CHECK(other.output.find("translated another task (its --pad-words differs)") != std::string::npos);
}

TEST_CASE("lesson 10_transformer --quick: the Transformer learns dates; the table of 07 and 09; maps; post-LN and pre-LN") {
  TempDir gru("lesson10_gru"), out("lesson10");
  // The run compared with only needs its summary: two steps of lesson 09 write one.
  REQUIRE(run_lesson("09_attention_seq2seq", "--quick --steps 2 --out " + gru.path.string()).status == 0);
  const Ran ran = run_lesson("10_transformer", "--quick --compare " + gru.path.string() + " --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"metrics.csv", "summary.json", "model.safetensors", "loss.png", "beam_search.png",
                         "exact_match_by_length.png", "exact_match_by_length.csv", "positional_encoding.png",
                         "position_dot_products.svg", "attention_encoder.png", "attention_decoder.png", "attention_cross.svg",
                         "norm_first.png", "norm_first.svg"});
  std::map<std::string, std::vector<double>> val, train;
  for (const auto& row : rows(out.path / "metrics.csv")) {
    val[row.at("model")].push_back(std::stod(row.at("val_loss")));
    train[row.at("model")].push_back(std::stod(row.at("train_loss")));
  }
  REQUIRE(val["transformer"].size() >= 5);
  CHECK(val["transformer"].back() < val["transformer"].front() - 0.3);
  for (const char* run : {"post-LN with warmup", "post-LN without warmup", "pre-LN with warmup", "pre-LN without warmup"}) {
    REQUIRE_MESSAGE(train[run].size() == 10, run);
    CHECK_MESSAGE(train[run].back() < train[run].front() - 0.3, run, ": the loss did not fall");
    CHECK(ran.output.find(std::string("\n") + run + " ") != std::string::npos);  // its row of the table
  }
  CHECK(ran.output.find("beside lesson 09's run in " + gru.path.string()) != std::string::npos);
  CHECK(ran.output.find("examples (ok: exactly the target):\n  ") != std::string::npos);
  // The same metric names as lesson 09 (and 07), so that the summaries compare directly.
  const nlohmann::json ours = summary_of(out.path)["metrics"], theirs = summary_of(gru.path)["metrics"];
  for (const auto& [name, value] : theirs.items()) CHECK_MESSAGE(ours.contains(name), name);
  CHECK(ours["test_bleu_beam1"].get<double>() == ours["test_bleu"].get<double>());
  CHECK(ours["test_bleu"].get<double>() > 0.1);
  check_ending(ran.output, out.path, {{"test_exact_match", "greedy decoding"}, {"val_loss_pre_ln_no_warmup", "part 5"}});
  CHECK(rows(out.path / "exact_match_by_length.csv").size() == 6);
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
      check_files(out.path, {"summary.json", "model.safetensors", "exact_match_by_length.csv"});
    }
}

TEST_CASE("lessons 07, 09 and 10: pairs files and task flags that cannot work are refused before training") {
  TempDir out("lesson07_bad");
  const std::string to = " --quick --out " + out.path.string();
  const std::string no_tab = write_file("no_tab.tsv", "Go.\tVa !\nHi. Salut !\n");
  const std::string small = write_file("small.tsv", "Go.\tVa !\nHi.\tSalut !\nRun!\tCours !\n");
  for (const char* lesson : {"07_seq2seq", "09_attention_seq2seq", "10_transformer"}) {
    check_refused(lesson, "--data " + no_tab + to, no_tab + ":2: no tab in \"Hi. Salut !\"");
    check_refused(lesson, "--data " + write_file("empty.tsv", "\n\n") + to, "the file is empty");
    check_refused(lesson, "--data " + write_file("binary.tsv", std::string("Go.\tVa !\n\0\x01", 11)) + to, "binary");
    check_refused(lesson, "--data " + small + to, "are fewer than one batch of 64; give more pairs or a smaller --batch");
    check_refused(lesson, "--data " + write_file("two.tsv", "Go.\tVa !\nHi.\tSalut !\n") + to, "too few to hold out");
    check_refused(lesson, "--data " + small + " --pad-words 3" + to, "--pad-words and --pairs shape the date task");
    check_refused(lesson, "--data " + small + " --level byte" + to, "--level must be word or char, got 'byte'");
    check_refused(lesson, "--val " + small + to, "--val goes with --data");
    check_refused(lesson, "--max-len 5" + to, "--level and --max-len go with --data");
    check_refused(lesson, "--pairs 900000" + to, "--pairs must be");
    CHECK_FALSE(fs::exists(out.path));
  }
}

TEST_CASE("lesson 08_attention_pooling --quick: the kernel learns its width; scoring, the 1/sqrt(d) scale and masks") {
  TempDir out("lesson08");
  const Ran ran = run_lesson("08_attention_pooling", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
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

TEST_CASE("lesson 11_gpt --quick: the GPT learns; samples at three temperatures; KV-cache speed; attention maps; --load samples") {
  TempDir out("lesson11");
  const Ran ran = run_lesson("11_gpt", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"metrics.csv", "summary.json", "perplexity.png", "perplexity.svg", "samples.txt", "model.safetensors",
                         "generation_speed.csv", "generation_speed.png", "generation_speed.svg", "attention_layer1_head1.png",
                         "attention_layer4_head4.svg"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() >= 5);
  CHECK(val.back() < val.front() - 0.3);
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
  check_refused("11_gpt", "--load " + model + " --prompt \"caf\xc3\xa9\"", "has characters the model's vocabulary lacks: '\xc3\xa9'");
  // At temperature 3 the barely trained model spreads its probability over all 90 ids; <unk> and
  // the other special tokens are still never drawn.
  const Ran hot = run_lesson("11_gpt", "--load " + model + " --sample-chars 3000 --temperature 3");
  REQUIRE(hot.status == 0);
  CHECK(hot.output.find("<unk>") == std::string::npos);
  // A shorter context keeps the first positions; a longer one than the model learned is refused, and so
  // are the flags of training, which --load would ignore.
  const Ran shorter = run_lesson("11_gpt", "--load " + model + " --block 16 --sample-chars 100");
  CHECK(shorter.status == 0);
  CHECK(shorter.output.find("context 16 of the 64 it learned") != std::string::npos);
  check_refused("11_gpt", "--load " + model + " --block 65", "--block 65 is longer than the 64 positions the model of " + model +
                                                                  " learned (its block_size); give --block 64 or less");
  check_refused("11_gpt", "--load " + model + " --steps 10 --embd 64 --quick",
                "--load samples from a trained model, so --steps, --embd, --quick would be ignored");

  // A checkpoint of another lesson, and a file that is no checkpoint.
  TempDir other("lesson11_other");
  REQUIRE(run_lesson("00_autograd", "--quick --out " + other.path.string()).status == 0);
  check_refused("11_gpt", "--load " + (other.path / "model.safetensors").string(), "is a checkpoint of lesson 00_autograd, not a GPT of lesson 11");
  check_refused("11_gpt", "--load " + write_file("not_a_model.safetensors", "hello"), "not_a_model.safetensors");
}

TEST_CASE("lesson 11_gpt --attention linear, bigbird and vq: it learns, says which kind ran, and --load samples with that kind") {
  // A small GPT, to keep it to a second or two: one block, 32 wide, context 32 (BigBird: 8 blocks of 4).
  const std::string small = "--quick --threads 1 --steps 20 --lr 3e-3 --eval-every 5 --warmup 2 --layers 1 --embd 32 --heads 2 --block 32";
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
                                                      : "vq (blocks of 8, 16 codes per head)";
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
                  "--load samples from a trained model, so --attention, --random-blocks would be ignored");
  }
}

TEST_CASE("lesson 10_transformer --attention linear: the encoder's self attention takes it, the decoder stays full") {
  TempDir out("lesson10_linear");
  const Ran ran = run_lesson("10_transformer", "--quick --threads 1 --attention linear --norm-steps 0 --steps 15 --warmup 2 "
                                               "--layers 1 --pairs 300 --batch 32 --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"summary.json", "model.safetensors", "beam_search.png", "attention_encoder.png", "attention_decoder.png",
                         "attention_cross.png"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() == 15);
  CHECK(val.back() < val.front() - 0.3);
  CHECK(ran.output.find("encoder self attention: linear (feature map elu); the decoder's attention: full") != std::string::npos);
  // One encoder layer of linear attention; the decoder's self and cross attention are full.
  size_t linear_layers = 0;
  for (size_t at = ran.output.find("LinearAttention("); at != std::string::npos; at = ran.output.find("LinearAttention(", at + 1))
    ++linear_layers;
  CHECK(linear_layers == 1);
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["encoder_attention"] == "linear");
  CHECK(m["test_bleu_beam4"].get<double>() > 0);
}

TEST_CASE("lesson 12_linear_attention --quick: one layer three ways agrees; the implied maps; GPTs per kind; cost against length") {
  TempDir out("lesson12");
  const Ran ran = run_lesson("12_linear_attention", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"summary.json", "implied_attention.png", "implied_attention.svg", "layer_cost.csv", "layer_time.png",
                         "layer_time.svg", "layer_memory.png", "generation.csv", "generation_time.png", "generation_time.svg",
                         "gpt_perplexity.png", "gpt_perplexity.svg", "gpt_softmax.csv", "gpt_elu.csv", "gpt_cos.csv",
                         "gpt_double_softmax.csv", "gpt_favor.csv"});
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["chunked_vs_quadratic"].get<double>() < 1e-5);
  CHECK(m["recurrent_vs_quadratic"].get<double>() < 1e-5);
  CHECK(m["state_floats"] == 4 * 4 + 4);  // elu+1, head size 4: the (4,4) sum and the normaliser
  CHECK(ran.output.find("chunk 4 (3 chunks, the last of 3)") != std::string::npos);
  CHECK(ran.output.find("the recurrent state does not grow: 20 floats after every position") != std::string::npos);
  // Softmax puts most of each row on the key the query was built from; the feature maps spread it.
  CHECK(m["match_weight_softmax"].get<double>() > 0.8);
  CHECK(m["match_weight_softmax_causal"].get<double>() > 0.8);
  for (const std::string map : {"elu", "cos", "double_softmax", "favor"}) {
    CHECK(m["match_weight_" + map].get<double>() < m["match_weight_softmax"].get<double>());
    CHECK(m["entropy_" + map].get<double>() > m["entropy_softmax"].get<double>());
    CHECK(m["entropy_" + map + "_causal"].get<double>() > m["entropy_softmax_causal"].get<double>());
  }
  // Part 3: every GPT learned something in its 60 steps (a uniform guess over ~80 characters: perplexity ~80).
  for (const std::string kind : {"softmax", "elu", "cos", "double_softmax", "favor"}) {
    INFO(kind);
    CHECK(m["gpt_val_ppl_" + kind].get<double>() < 30);
    CHECK(rows(out.path / ("gpt_" + kind + ".csv")).size() == 6);  // evaluations at steps 10, 20, ..., 60
  }
  CHECK(rows(out.path / "layer_cost.csv").size() == 2);  // n = 256, 512
  CHECK(rows(out.path / "generation.csv").size() == 2);
  for (const char* name : {"layer_ms_full", "layer_ms_linear", "token_ms_full", "token_ms_linear"}) CHECK(m[name].get<double>() > 0);
  check_ending(ran.output, out.path, {{"chunked_vs_quadratic", "chunked product"}, {"token_ms_linear", "recurrent state"}});
  // The other feature maps agree three ways too, on a length and chunk of their own.
  for (const std::string map : {"cos", "softmax"}) {
    TempDir other("lesson12_" + map);
    const Ran again = run_lesson("12_linear_attention", "--quick --feature-map " + map + " --length 9 --chunk 2 --out " +
                                                             other.path.string());
    INFO(again.output);
    REQUIRE(again.status == 0);
    const nlohmann::json n = summary_of(other.path)["metrics"];
    CHECK(n["chunked_vs_quadratic"].get<double>() < 1e-5);
    CHECK(n["recurrent_vs_quadratic"].get<double>() < 1e-5);
    CHECK(again.output.find("the recurrent state does not grow") != std::string::npos);
  }
}

TEST_CASE("lesson 13_bigbird --quick: the pattern, the retrieval task, time against length, the four patterns trained") {
  TempDir out("lesson13");
  const Ran ran = run_lesson("13_bigbird", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"summary.json", "pattern.png", "pattern.svg", "timing.csv", "attention_time.png",
                         "attention_time.svg", "train_full.csv", "train_window.csv", "train_window_global.csv",
                         "train_bigbird.csv", "accuracy_by_distance.csv", "accuracy_by_distance.png",
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
  // Part 4 (--quick: 4 steps, 1 layer, 64 test sequences): every variant trained and scored, the
  // test sequences counted once by their distance in blocks.
  for (const char* name : {"full", "window", "window_global", "bigbird"}) {
    CHECK(column(out.path / (std::string("train_") + name + ".csv"), "step") == std::vector<double>{1, 2, 3, 4});
    const double accuracy = m[std::string("test_acc_") + name].get<double>();
    CHECK(accuracy >= 0);
    CHECK(accuracy <= 1);
  }
  double counted = 0;
  for (const double count : column(out.path / "accuracy_by_distance.csv", "count")) counted += count;
  CHECK(counted == 64);
  CHECK(column(out.path / "accuracy_by_distance.csv", "blocks_back").size() == 16);
  CHECK(ran.output.find("window + global") != std::string::npos);
  check_ending(ran.output, out.path, {{"tiles_bidirectional", "tiles BigBird computes"}, {"task_chance", "guessing"},
                                      {"test_acc_bigbird", "BigBird, test sequences answered right"}});
}

TEST_CASE("lesson 13_bigbird --quick with a task length that --block does not divide: the last block padded") {
  TempDir out("lesson13_padded");
  const Ran ran = run_lesson("13_bigbird", "--quick --task-length 100 --examples 0 --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  // 100 = 12 blocks of 8 and a padded 13th; the question at 99 is in block 12.
  CHECK(column(out.path / "accuracy_by_distance.csv", "blocks_back").size() == 13);
  CHECK(ran.output.find("n = 100, blocks of 8") != std::string::npos);
}

TEST_CASE("lesson 14_transformer_vq --quick: one VQ layer two ways agrees; cost against length; GPTs per kind; the codebook") {
  TempDir out("lesson14");
  const Ran ran = run_lesson("14_transformer_vq", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"summary.json", "attention_full_vs_vq.png", "attention_full_vs_vq.svg", "vq_regions.png",
                         "vq_regions.svg", "layer_cost.csv", "layer_time.png", "layer_memory.png", "generation.csv",
                         "generation_time.png", "gpt_perplexity.png", "gpt_full.csv", "gpt_linear.csv", "gpt_vq.csv",
                         "vq_codebook.png", "vq_key_error.png", "vq_code_counts.png", "vq_keys_and_codes.png"});
  const nlohmann::json m = summary_of(out.path)["metrics"];
  // Part 1: the block-wise op is the quadratic formula, values and gradients; with nothing rounded it is full attention.
  CHECK(m["blockwise_vs_quadratic"].get<double>() < 1e-5);
  CHECK(m["blockwise_vs_quadratic_grad"].get<double>() < 1e-5);
  CHECK(m["exact_codebook_vs_full"].get<double>() < 1e-5);
  // T = 16 in blocks of 4: the last query reads 8 keys exactly and 8 through the codes.
  CHECK(ran.output.find("    15  ccccccccppppoooo") != std::string::npos);
  CHECK(rows(out.path / "layer_cost.csv").size() == 2);  // n = 256, 512
  CHECK(rows(out.path / "generation.csv").size() == 2);
  for (const std::string kind : {"full", "linear", "vq"}) {
    INFO(kind);
    CHECK(m["layer_ms_" + kind].get<double>() > 0);
    CHECK(m["token_ms_" + kind].get<double>() > 0);
    CHECK(m["gpt_val_ppl_" + kind].get<double>() < 30);  // a uniform guess over ~80 characters: ~80
    CHECK(rows(out.path / ("gpt_" + kind + ".csv")).size() == 6);  // evaluations at steps 10, 20, ..., 60
  }
  // The VQ model's codebook: its keys take some of the 64 codes of each head, and the codes miss part of their spread.
  CHECK(m["vq_codes_used"].get<double>() >= 1);
  CHECK(m["vq_codes_used"].get<double>() <= 64);
  CHECK(m["vq_codebook_perplexity"].get<double>() >= 1);
  CHECK(m["vq_codebook_perplexity"].get<double>() <= 64);
  CHECK(m["vq_key_error"].get<double>() > 0);
  CHECK(m["vq_key_error"].get<double>() < 1);
  CHECK(ran.output.find("the VQ model's codebooks at the end") != std::string::npos);
  check_ending(ran.output, out.path, {{"blockwise_vs_quadratic", "(T,T) weights"}, {"token_ms_vq", "VQ cache"}});
}

TEST_CASE("lesson 15_long_range --quick: both tasks printed, every kind trained on each, the table and the charts") {
  TempDir out("lesson15");
  const Ran ran = run_lesson("15_long_range", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_files(out.path, {"summary.json", "results.csv", "train_listops_full.csv", "train_recall_lstm.csv",
                         "accuracy_speed_listops.png", "accuracy_speed_listops.svg", "accuracy_speed_recall.png",
                         "loss_listops.png", "loss_recall.svg"});
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["listops_chance"].get<double>() == doctest::Approx(0.1));
  CHECK(m["recall_chance"].get<double>() == doctest::Approx(0.1));
  const auto results = rows(out.path / "results.csv");
  const std::vector<std::string> kinds = {"full",         "linear_elu", "linear_cos", "linear_softmax",
                                          "linear_favor", "bigbird",    "vq",         "lstm"};
  REQUIRE(results.size() == 2 * kinds.size());
  for (size_t r = 0; r < results.size(); ++r) {
    const auto& row = results[r];
    CHECK(row.at("kind") == kinds[r / 2]);  // kind by kind, each on both tasks
    CHECK(row.at("task") == (r % 2 ? "recall" : "listops"));
    const double acc = std::stod(row.at("test_acc"));
    CHECK(acc >= 0);
    CHECK(acc <= 1);
    CHECK(m["test_acc_" + row.at("task") + "_" + row.at("kind")].get<double>() == doctest::Approx(acc).epsilon(1e-5));
    CHECK(std::stod(row.at("steps_per_s")) > 0);
    CHECK(std::stod(row.at("peak_mib")) > 0);
  }
  // Every kind's loss fell on ListOps: its best validation loss after the first evaluation is below
  // the first by 0.04 nats or more (the best, not the last: 50 validation examples make VQ's and the
  // LSTM's curves jump by 0.1 between evaluations, more than they fall in 100 steps). Associative
  // recall is only checked finite: 100 tiny steps leave it near chance.
  for (const std::string& kind : kinds) {
    for (const std::string task : {"listops", "recall"}) {
      INFO(task, " ", kind);
      const auto curve = rows(out.path / ("train_" + task + "_" + kind + ".csv"));
      REQUIRE(curve.size() >= 10);
      for (const auto& point : curve) CHECK(std::isfinite(std::stod(point.at("train_loss"))));
      if (task != "listops") continue;
      double best = INFINITY;
      for (size_t i = 1; i < curve.size(); ++i) best = std::min(best, std::stod(curve[i].at("val_loss")));
      CHECK(best < std::stod(curve.front().at("val_loss")) - 0.04);
    }
  }
  CHECK(ran.output.find("[MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ] = 5") != std::string::npos);
  CHECK(ran.output.find("answers: 0:") != std::string::npos);
  CHECK(ran.output.find("vq (blocks of 8, 16 codes per head) runs causal: Transformer-VQ is a decoder") != std::string::npos);
  check_ending(ran.output, out.path, {{"test_acc_listops_full", "ListOps, test accuracy"}, {"recall_chance", "guessing"}});

  TempDir two("lesson15_kinds");  // --kinds picks and orders
  const Ran picked = run_lesson("15_long_range", "--quick --kinds lstm,full --steps 3 --out " + two.path.string());
  REQUIRE(picked.status == 0);
  const auto picked_rows = rows(two.path / "results.csv");
  REQUIRE(picked_rows.size() == 4);
  CHECK(picked_rows[0].at("kind") == "lstm");
  CHECK(picked_rows[2].at("kind") == "full");
}
