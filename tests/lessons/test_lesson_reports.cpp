// What the long-range lessons share from the kit: predict in batches, accuracy by group, the
// majority's share, a tagger's answers, standard errors, the classifiers' tracker, the benchmark's
// report and the capacity's report.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "lessons/15_long_range/report.h"
#include "lessons/attention_kinds/classifier_tracker.h"
#include "models/predictions.h"
#include "lessons/15_long_range/capacity.h"
#include "harness/run.h"
#include "lessons/char_gpt/char_gpt.h"
#include "harness/tracker.h"
#include "lessons/14_transformer_vq/codebook.h"
#include "harness/cli_fixtures.h"
#include "lessons/lesson_checks.h"
#include "models/encoder_tagger.h"
#include "models/lstm_classifier.h"

namespace fs = std::filesystem;
using namespace ladder;
using namespace ladder::testing;

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
  const models::Predictions p = models::predict(model, set, 2);  // batches of 2, 2 and 1
  CHECK(p.loss == doctest::Approx(cross_entropy(logits, set.labels).item()).epsilon(1e-5));
  const Tensor best = argmax(logits, 1);
  double right = 0;
  for (int64_t n = 0; n < 5; ++n) {
    CHECK(p.classes[static_cast<size_t>(n)] == static_cast<int64_t>(best.data()[n]));
    right += best.data()[n] == set.labels.data()[n] ? 1 : 0;
  }
  CHECK(p.accuracy == right / 5);
  CHECK(model.is_training());  // eval mode only inside predict

  const models::Predictions answers{.classes = {0, 1, 1, 1, 0}};
  const std::vector<double> by_group = models::accuracy_by_group(answers, set.labels, {0, 0, 2, 2, 2}, 4);
  CHECK(by_group[0] == 1);    // both right
  CHECK(std::isnan(by_group[1]));  // no sequence in group 1
  CHECK(by_group[2] == doctest::Approx(2.0 / 3));  // 2 wrong, 1 and 0 right
  CHECK(std::isnan(by_group[3]));
  CHECK_THROWS_WITH_AS(models::accuracy_by_group(answers, set.labels, {0, 0}, 4), doctest::Contains("5 predictions and 2 groups for 5 labels"), Error);
  CHECK_THROWS_WITH_AS(models::accuracy_by_group(answers, set.labels, {0, 0, 4, 0, 0}, 4), doctest::Contains("group 4 is outside [0, 4)"), Error);

  CHECK(models::majority_share(tensor({1, 1, 2}), tensor({1, 2, 2, 0}), 3) == 0.25);  // always 1: one test label of four
  const float none = static_cast<float>(data::kNoAnswer);  // positions where nothing is asked count for nothing
  CHECK(models::majority_share(tensor({2, none, none, 2, 1}), tensor({none, 2, 1, none}), 3) == 0.5);
  CHECK_THROWS_WITH_AS(models::majority_share(tensor({1, 3}), tensor({1}), 3), doctest::Contains("label 3 is outside [0, 3)"), Error);
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
  const models::Predictions p = models::predict(model, {ids, labels, Tensor()}, 2);  // batches of 2, 2 and 1
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
  CHECK_THROWS_WITH_AS(models::predict(model, {ids, tensor({0, 1, 2, 1, 0}), Tensor()}, 2),
                       doctest::Contains("a tagger's labels must be (N,T)"), Error);

  CHECK(models::standard_error(0.5, 100) == doctest::Approx(0.05));
  CHECK(models::standard_error(0.9, 1000) == doctest::Approx(std::sqrt(0.09 / 1000)));
  CHECK(models::standard_error(1.0, 10) == 0);
  CHECK_THROWS_WITH_AS(models::standard_error(0.5, 0), doctest::Contains("at least one answer"), Error);
}

TEST_CASE("the classifiers' tracker: validation loss and accuracy at ten evaluations, examples per second") {
  TempDir out("kit_classifier_tracker");
  ParsedCli parsed({"--out", out.path.string()});
  harness::Run run(parsed.cli);
  harness::Tracker tracker = lessons::classifier_tracker(run, 25, 4, "toy", "train_toy.csv");
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

TEST_CASE("the benchmark's report: a row per contender and task with standard errors, the metrics, two charts per task") {
  TempDir out("kit_benchmark");
  ParsedCli parsed({"--out", out.path.string()});
  harness::Run run(parsed.cli);
  const auto contender = [](const std::string& name, double acc) {
    return lessons::ContenderResult{name, acc, 10, 2, 100, {name, {1, 2}, {2, 1}}, 400};
  };
  const std::vector<lessons::TaskResults> tasks = {{"a", "Task A", 0.1, 0.2, {contender("full", 0.5), contender("lstm", 0.25)}},
                                                   {"b", "Task B", 0.5, 0.5, {contender("full", 1)}}};
  harness::Summary summary;
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


TEST_CASE("the capacity's report: a row per kind and count of pairs, the metrics, both charts") {
  TempDir out("kit_capacity");
  ParsedCli parsed({"--out", out.path.string()});
  harness::Run run(parsed.cli);
  const std::vector<lessons::KindCapacity> kinds = {{"full", {{4, 64, 2048, 1.0, 400}, {64, 192, 6144, 0.99, 6400}}},
                                                    {"linear_elu", {{4, 64, 272, 0.9, 400}, {64, 192, 272, 0.3, 6400}}}};
  harness::Summary summary;
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

TEST_CASE("at_real_positions: the rows of the real positions of every sequence, head by head, in order") {
  // (B,H,T,D) = (2,2,3,1): the value of (b,h,t) is 100 b + 10 h + t; sequence 0 has 2 real positions, sequence 1 one.
  std::vector<float> values;
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 2; ++h)
      for (int t = 0; t < 3; ++t) values.push_back(static_cast<float>(100 * b + 10 * h + t));
  const Tensor per_position = tensor(values, {2, 2, 3, 1});
  const Tensor real = tensor({1, 1, 0, 1, 0, 0}, {2, 3});
  const Tensor kept = lessons::at_real_positions(per_position, real);
  REQUIRE(kept.shape() == Shape{1, 2, 3, 1});
  CHECK(std::vector<float>(kept.data(), kept.data() + 6) == std::vector<float>{0, 1, 100, 10, 11, 110});
  CHECK(lessons::at_real_positions(per_position, Tensor()).data() == per_position.data());  // every position real: itself
}

TEST_CASE("prompt_ids: an empty prompt starts at a newline, or the first character; a character the vocabulary lacks is refused") {
  const data::Tokenizer stream = data::Tokenizer::chars({"ab\n"}, {});
  CHECK(lessons::prompt_ids("11_gpt", stream, "") == std::vector<int>{stream.id("\n")});
  CHECK(lessons::prompt_ids("11_gpt", data::Tokenizer::chars({"ab"}, {}), "") == std::vector<int>{0});  // no newline: the first character
  const data::Tokenizer old = data::Tokenizer::chars({"ab"});  // the four specials of an older vocabulary come first
  CHECK(lessons::prompt_ids("11_gpt", old, "") == std::vector<int>{4});
  CHECK_THROWS_WITH_AS(lessons::prompt_ids("11_gpt", stream, "abc"), doctest::Contains("'c'"), Error);
}
