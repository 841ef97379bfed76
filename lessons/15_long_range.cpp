// Lesson 15: a long-range benchmark in the manner of the Long Range Arena (Tay et al. 2020): every
// attention kind in the same small classifier, trained on the same tasks with the same budget.
//
//  1. the tasks: ListOps (data/listops.h), nested MIN, MAX, MED and SM expressions over digits whose
//     answer is one digit, with the distribution of their lengths and answers; and associative
//     recall (data/retrieval.h, lesson 13's task): key-value pairs, then a query key, whose value is
//     the answer;
//  2. one encoder classifier (models/encoder_classifier.h) per attention kind, and a baseline without
//     attention (an LSTM), each trained on each task with the same steps, batch, learning rate and
//     batches;
//  3. the results as the LRA shows them: a table of accuracy per task, training steps per second and
//     the memory a training step adds at its peak, and charts of accuracy against speed in which the
//     size of a marker shows the memory.
// The note that goes with it: docs/15_long_range.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/peak_memory.h"
#include "data/listops.h"
#include "data/retrieval.h"
#include "lessons/common/cli.h"
#include "lessons/common/plot.h"
#include "lessons/common/progress.h"
#include "lessons/common/run.h"
#include "models/encoder_classifier.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/linear_attention.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/recurrent.h"
#include "optim/adam.h"
#include "optim/optimizer.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "15_long_range";
constexpr int64_t kRandomBlocks = 2;   // BigBird's random key blocks per query block
constexpr int64_t kCurvePoints = 40;   // points of each training-loss curve
constexpr int64_t kEvalBatch = 100;

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// ---- 1. the tasks ----

// A task as the training loop sees it: token ids (N,T) as floats, which of them are real (N,T),
// undefined when all are, and the answers (N).
struct Examples {
  Tensor tokens, valid, answers;
};

struct Task {
  std::string name, title;  // "listops", "ListOps"
  Examples train, test;
  int64_t vocabulary = 0, classes = 0, length = 0;
  double chance = 0;    // guessing uniformly
  double majority = 0;  // always answering the training set's most common answer, on the test set
};

double majority_share(const Tensor& train_answers, const Tensor& test_answers, int64_t classes) {
  std::vector<int64_t> counts(static_cast<size_t>(classes));
  for (int64_t n = 0; n < train_answers.numel(); ++n) ++counts[static_cast<size_t>(train_answers.data()[n])];
  const auto most = static_cast<float>(std::max_element(counts.begin(), counts.end()) - counts.begin());
  int64_t right = 0;
  for (int64_t n = 0; n < test_answers.numel(); ++n) right += test_answers.data()[n] == most;
  return static_cast<double>(right) / static_cast<double>(std::max<int64_t>(1, test_answers.numel()));
}

// One line per bin of lengths, its share drawn as a bar.
void print_lengths(const std::vector<int64_t>& lengths, int64_t low, int64_t high) {
  constexpr int64_t kBins = 8;
  const int64_t width = (high - low + kBins) / kBins;  // kBins bins of this width cover low..high
  std::vector<int64_t> counts(static_cast<size_t>(kBins));
  for (const int64_t l : lengths) ++counts[static_cast<size_t>((l - low) / width)];
  const double total = static_cast<double>(lengths.size());
  for (int64_t b = 0; b < kBins && low + b * width <= high; ++b) {
    const double share = static_cast<double>(counts[b]) / total;
    std::printf("   %5lld-%-5lld %5.1f%% %s\n", static_cast<long long>(low + b * width),
                static_cast<long long>(std::min(high, low + (b + 1) * width - 1)), 100 * share,
                std::string(static_cast<size_t>(std::lround(60 * share)), '#').c_str());
  }
}

Task listops_task(const data::ListOpsOptions& o) {
  std::printf("\n== 1a. ListOps: %lld to %lld tokens, operators nested up to %lld deep, 2 to %lld arguments ==\n",
              static_cast<long long>(o.min_len), static_cast<long long>(o.max_len),
              static_cast<long long>(o.max_depth), static_cast<long long>(o.max_args));
  const std::string example = "[MAX 4 3 [MIN 2 3 ] 1 0 [MED 1 5 8 9 2 ] ]";
  std::printf("   the rules on a short one: %s = %lld\n", example.c_str(),
              static_cast<long long>(data::evaluate_listops(data::listops_ids(example)).answer));
  data::ListOpsSplits splits = data::make_listops(o);
  const std::string first = data::listops_text(data::listops_row(splits.test, 0));
  std::printf("   a test expression (%lld tokens, answer %d): %s%s\n", static_cast<long long>(splits.test.lengths[0]),
              static_cast<int>(splits.test.answers.data()[0]), first.substr(0, 150).c_str(),
              first.size() > 150 ? " ..." : "");
  int64_t deepest = 0, depth_sum = 0;
  for (int64_t n = 0; n < o.train; ++n) {
    const int64_t depth = data::evaluate_listops(data::listops_row(splits.train, n)).depth;
    deepest = std::max(deepest, depth), depth_sum += depth;
  }
  std::printf("   nesting over the %lld training expressions: %.1f deep on average, %lld at most\n",
              static_cast<long long>(o.train), static_cast<double>(depth_sum) / static_cast<double>(o.train),
              static_cast<long long>(deepest));
  std::printf("   lengths of the training expressions (tokens):\n");
  print_lengths(splits.train.lengths, o.min_len, o.max_len);
  const auto counts = data::answer_counts(splits.train);
  std::printf("   answers:");
  for (int64_t a = 0; a < data::kListOpsClasses; ++a)
    std::printf(" %lld:%.1f%%", static_cast<long long>(a),
                100.0 * static_cast<double>(counts[static_cast<size_t>(a)]) / static_cast<double>(o.train));
  std::printf("\n");
  Task task{"listops", "ListOps",
            {splits.train.tokens, splits.train.valid, splits.train.answers},
            {splits.test.tokens, splits.test.valid, splits.test.answers},
            data::kListOpsVocabulary, data::kListOpsClasses, o.max_len, 1.0 / data::kListOpsClasses, 0};
  task.majority = majority_share(task.train.answers, task.test.answers, task.classes);
  std::printf("   chance: guessing %.1f%%, always the most common answer %.1f%% (of the test set)\n", 100 * task.chance,
              100 * task.majority);
  return task;
}

Task recall_task(const data::RetrievalTaskOptions& o) {
  std::printf("\n== 1b. associative recall: %lld tokens, %lld key-value pairs, the asked key at least %lld back ==\n",
              static_cast<long long>(o.length), static_cast<long long>(o.distractors + 1),
              static_cast<long long>(o.min_distance));
  data::RetrievalSplits splits = data::make_retrieval_task(o);
  const std::string text = data::retrieval_text(splits.test, 0, o);
  std::printf("   ('.' filler, letters keys, digits values, '?' then the asked key; answer %d)\n   %s%s\n",
              static_cast<int>(splits.test.answers.data()[0]), text.substr(0, 150).c_str(),
              text.size() > 150 ? (" ... " + text.substr(text.size() - 20)).c_str() : "");
  Task task{"recall", "associative recall",
            {splits.train.tokens, Tensor(), splits.train.answers},
            {splits.test.tokens, Tensor(), splits.test.answers},
            data::retrieval_vocabulary(o), o.values, o.length, data::retrieval_chance(o), 0};
  task.majority = majority_share(task.train.answers, task.test.answers, task.classes);
  std::printf("   chance: guessing %.1f%%, always the most common answer %.1f%%\n", 100 * task.chance,
              100 * task.majority);
  return task;
}

// ---- 2. the contenders and their training ----

// What --kinds names: an attention kind for the encoder classifier, or the baseline without one.
struct Contender {
  std::string name;  // as --kinds writes it
  std::optional<nn::AttentionSettings> attention;  // none: the LSTM baseline
};

// Every attention kind there is (linear once per feature map), then the baseline: a kind registered
// in nn/attention joins without a change here. `seed` draws BigBird's random blocks and FAVOR+'s features.
std::vector<Contender> all_contenders(int64_t bigbird_block, uint64_t seed) {
  std::vector<Contender> list;
  for (const std::string& kind : nn::attention_kind_names()) {
    if (nn::is_causal_only(kind)) continue;  // vq: a decoder's attention; this encoder is bidirectional
    if (kind == "linear") {
      for (const std::string& map : nn::feature_map_names())
        list.push_back({"linear_" + map, nn::AttentionSettings{.kind = "linear", .feature_map = map, .seed = seed}});
    } else {
      list.push_back({kind, nn::AttentionSettings{.kind = kind, .block = bigbird_block, .random_blocks = kRandomBlocks,
                                                  .seed = seed}});
    }
  }
  list.push_back({"lstm", std::nullopt});
  return list;
}

std::string names_of(const std::vector<Contender>& list) {
  std::string names;
  for (const Contender& c : list) names += (names.empty() ? "" : ",") + c.name;
  return names;
}

// The contenders --kinds asks for, in its order: "all", or names separated by commas.
std::vector<Contender> chosen(const std::string& kinds, const std::vector<Contender>& all) {
  if (kinds == "all") return all;
  std::vector<Contender> list;
  size_t at = 0;
  while (at <= kinds.size()) {
    const size_t end = std::min(kinds.find(',', at), kinds.size());
    const std::string name = kinds.substr(at, end - at);
    const auto found = std::find_if(all.begin(), all.end(), [&](const Contender& c) { return c.name == name; });
    if (found == all.end())
      fail(kLesson, "--kinds: '", name, "' is not a kind; give 'all' or some of ", names_of(all), " separated by commas");
    if (std::any_of(list.begin(), list.end(), [&](const Contender& c) { return c.name == name; }))
      fail(kLesson, "--kinds: '", name, "' is named twice; name each kind once");
    list.push_back(*found);
    at = end + 1;
  }
  return list;
}

// The baseline without attention: embedding, one LSTM layer over the sequence, the mean of its
// outputs over the real positions (the encoder's pooling), a linear head.
class LstmClassifier : public nn::Module {
 public:
  LstmClassifier(int64_t vocabulary, int64_t width, int64_t classes, Generator& gen) : Module("LstmClassifier") {
    embedding = register_module("embedding", std::make_shared<nn::Embedding>(vocabulary, width, 0.02f, gen));
    lstm = register_module("lstm", std::make_shared<nn::LSTM>(width, width, nn::RecurrentOptions{.batch_first = true}, gen));
    head = register_module("head", std::make_shared<nn::Linear>(width, classes, nn::LinearOptions{}, gen));
  }
  // ids (B,T), valid (B,T) or undefined (all real) -> logits (B,classes)
  Tensor forward(const Tensor& ids, const Tensor& valid) {
    const Tensor h = lstm->forward(embedding->forward(ids)).output;  // (B,T,E)
    if (!valid.defined()) return head->forward(mean(h, {1}));
    const Tensor weights = unsqueeze(valid, 2);  // (B,T,1)
    return head->forward(sum(h * weights, {1}) / sum(weights, {1}));
  }
  Tensor forward(const Tensor& ids) override { return forward(ids, Tensor()); }
  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::LSTM> lstm;
  std::shared_ptr<nn::Linear> head;
};

// A model to train: its parameters, and its forward as (ids, valid) -> logits.
struct Classifier {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&, const Tensor&)> forward;
};

struct ModelSize {
  int64_t d_model, layers;
};

Classifier make_classifier(const Contender& c, const Task& task, ModelSize size, Generator& gen) {
  if (!c.attention) {
    auto lstm = std::make_shared<LstmClassifier>(task.vocabulary, size.d_model, task.classes, gen);
    return {lstm, [lstm](const Tensor& ids, const Tensor& valid) { return lstm->forward(ids, valid); }};
  }
  auto encoder = std::make_shared<models::EncoderClassifier>(
      models::EncoderClassifierConfig{.vocab_size = task.vocabulary,
                                      .num_classes = task.classes,
                                      .max_len = task.length,
                                      .d_model = size.d_model,
                                      .nhead = 4,
                                      .num_layers = size.layers,
                                      .dim_feedforward = 2 * size.d_model,
                                      .attention = *c.attention},
      gen);
  return {encoder, [encoder](const Tensor& ids, const Tensor& valid) { return encoder->forward(ids, valid); }};
}

struct Result {
  double test_acc = 0, steps_per_s = 0, peak_mib = 0, final_loss = 0;
  int64_t parameters = 0;
  lessons::Series curve;  // the training loss, averaged over stretches of steps
};

Tensor pick(const Tensor& x, const Tensor& rows) { return x.defined() ? index_select(x, 0, rows) : Tensor(); }

double accuracy(Classifier& model, const Examples& test) {
  NoGradGuard no_grad;
  model.module->eval();
  const int64_t n = test.answers.numel();
  int64_t right = 0;
  for (int64_t start = 0; start < n; start += kEvalBatch) {
    const int64_t count = std::min(kEvalBatch, n - start);
    const Tensor valid = test.valid.defined() ? narrow(test.valid, 0, start, count) : Tensor();
    const Tensor guess = argmax(model.forward(narrow(test.tokens, 0, start, count), valid), 1);
    for (int64_t i = 0; i < count; ++i) right += guess.data()[i] == test.answers.data()[start + i];
  }
  model.module->train();
  return static_cast<double>(right) / static_cast<double>(std::max<int64_t>(1, n));
}

// Trains one model with AdamW; every contender sees the same batches (the generator made from the
// seed). The first step runs under peak_bytes_added, so the clock starts after it.
Result train(lessons::Run& run, const Task& task, const Contender& c, const lessons::CommonFlags& flags, ModelSize size,
             lessons::CsvWriter& metrics) {
  Generator init(flags.seed + 1), batches(flags.seed + 2);
  Classifier model = make_classifier(c, task, size, init);
  optim::AdamW adam(model.module->named_parameters(), {.lr = flags.lr, .weight_decay = 0.01f});
  const std::vector<Tensor> parameters = model.module->parameters();
  Result result;
  result.curve.name = c.name;
  result.parameters = model.module->num_parameters();
  const int64_t examples = task.train.answers.numel(), every = std::max<int64_t>(1, flags.steps / kCurvePoints);
  lessons::Progress progress(flags.steps, "ex", /*show_ppl=*/false);
  auto clock = std::chrono::steady_clock::now();
  double recent = 0;
  for (int64_t step = 1; step <= flags.steps; ++step) {
    std::vector<float> picks(static_cast<size_t>(flags.batch));
    for (float& p : picks) p = static_cast<float>(batches.randint(0, examples));
    const Tensor rows = tensor(picks, {flags.batch});
    const Tensor ids = pick(task.train.tokens, rows), valid = pick(task.train.valid, rows);
    Tensor loss;
    const auto forward_backward = [&] {
      loss = cross_entropy(model.forward(ids, valid), pick(task.train.answers, rows));
      adam.zero_grad();
      loss.backward();
    };
    if (step == 1) {
      result.peak_mib = mib(peak_bytes_added(forward_backward));
    } else {
      forward_backward();
    }
    optim::clip_grad_norm(parameters, 1.0f);
    adam.step();
    if (step == 1) clock = std::chrono::steady_clock::now();
    const double value = loss.item();
    run.check_loss(step, value, lessons::LossKind::cross_entropy, "the " + c.name + " model's loss on " + task.title);
    progress.update(step, value, step * flags.batch);
    recent += value;
    if (step % every == 0 || step == flags.steps) {
      result.final_loss = recent / static_cast<double>(step % every == 0 ? every : step % every);
      recent = 0;
      result.curve.x.push_back(static_cast<double>(step)), result.curve.y.push_back(result.final_loss);
      metrics.row({std::to_string(step), task.name, c.name, std::to_string(result.final_loss)});
    }
  }
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock).count();
  // Without a timed step (--steps 1) the rate is unknown: 0.
  result.steps_per_s = flags.steps > 1 ? static_cast<double>(flags.steps - 1) / seconds : 0;
  result.test_acc = accuracy(model, task.test);
  std::printf("   %-16s %-20s test accuracy %5.1f%%  %6.2f steps/s  peak %7.1f MiB  %7lld parameters\n",
              c.name.c_str(), task.title.c_str(), 100 * result.test_acc, result.steps_per_s, result.peak_mib,
              static_cast<long long>(result.parameters));
  return result;
}

// ---- 3. the results ----

// Accuracy against speed, a dot per contender whose area grows with the memory it used, and the
// chance level as a line.
void accuracy_chart(lessons::Run& run, const Task& task, const std::vector<Contender>& contenders,
                    const std::vector<Result>& results) {
  double most_memory = 0, fastest = 0;
  for (const Result& r : results) most_memory = std::max(most_memory, r.peak_mib), fastest = std::max(fastest, r.steps_per_s);
  lessons::LineChart chart{task.title + ": test accuracy against training speed (dot area: peak memory)",
                           "training steps per second", "test accuracy (%)", {}};
  for (size_t k = 0; k < results.size(); ++k) {
    const Result& r = results[k];
    const double size = most_memory > 0 ? 4 * std::sqrt(r.peak_mib / most_memory) : 1;
    chart.series.push_back({cat(contenders[k].name, ", ", std::round(10 * r.peak_mib) / 10, " MiB"), {r.steps_per_s},
                            {100 * r.test_acc}, true, std::max(1.0, size)});
  }
  chart.series.push_back({cat("chance, ", std::lround(100 * task.chance), "%"), {0, fastest}, {100 * task.chance, 100 * task.chance}});
  run.wrote(lessons::save_line_chart(run.path("accuracy_speed_" + task.name), chart));
}

void loss_chart(lessons::Run& run, const Task& task, const std::vector<Result>& results) {
  lessons::LineChart chart{task.title + ": training loss (cross entropy, nats)", "step", "training loss", {}};
  for (const Result& r : results) chart.series.push_back(r.curve);
  run.wrote(lessons::save_line_chart(run.path("loss_" + task.name), chart));
}

}  // namespace

int main(int argc, char** argv) {
  return lessons::lesson_main([&] {
    lessons::LessonCli cli(kLesson,
                           "Lesson 15: a long-range benchmark: every attention kind in the same encoder classifier,\n"
                           "trained on ListOps and associative recall with the same budget; accuracy, speed, memory.",
                           {.steps = 500, .lr = 1e-3f, .batch = 16});
    data::ListOpsOptions listops{.min_len = 0, .max_len = 256, .train = 5000, .val = 0, .test = 500};
    data::RetrievalTaskOptions recall{.length = 256, .keys = 16, .values = 10, .train = 5000, .val = 0, .test = 500};
    std::string kinds = "all";
    ModelSize size{64, 2};
    int64_t bigbird_block = 16;
    const std::vector<Contender> every = all_contenders(bigbird_block, 0);  // the names, for --help
    cli.option("--kinds", kinds,
               "which to train, separated by commas, or all: " + names_of(every) +
                   " (linear_* is linear attention with that feature map; lstm has no attention)");
    cli.option("--max-len", listops.max_len, "ListOps: the longest expression in tokens (the LRA: 2000)", {4, 1 << 15});
    cli.option("--min-len", listops.min_len, "ListOps: the shortest expression in tokens; 0: a quarter of --max-len",
               lessons::non_negative);
    cli.option("--max-depth", listops.max_depth, "ListOps: operators nested at most", {1, 64});
    cli.option("--max-args", listops.max_args, "ListOps: arguments per operator at most", {2, 64});
    cli.option("--recall-len", recall.length, "associative recall: tokens per sequence", {16, 1 << 15});
    cli.option("--train", listops.train, "examples in each task's training set", lessons::positive);
    cli.option("--test", listops.test, "examples in each task's test set", lessons::positive);
    cli.option("--d-model", size.d_model, "width of every model (4 heads)", {4, 1024});
    cli.option("--layers", size.layers, "encoder blocks", {1, 16});
    cli.option("--bigbird-block", bigbird_block, "BigBird: positions per block", {1, 4096});
    cli.parse(argc, argv);
    if (cli.common.quick) {  // everything tiny but what the command line sets
      const auto tiny = [&](const char* flag, int64_t& value, int64_t small) {
        if (!cli.given(flag)) value = small;
      };
      tiny("--max-len", listops.max_len, 64), tiny("--recall-len", recall.length, 64);
      tiny("--train", listops.train, 300), tiny("--test", listops.test, 100);
      tiny("--d-model", size.d_model, 16), tiny("--layers", size.layers, 1), tiny("--bigbird-block", bigbird_block, 8);
      tiny("--steps", cli.common.steps, 40), tiny("--batch", cli.common.batch, 16);
    }
    if (size.d_model % 4 != 0) fail(kLesson, "--d-model ", size.d_model, " must be a multiple of the 4 heads; give ", size.d_model / 4 * 4 + 4);
    if (listops.min_len == 0) listops.min_len = std::max<int64_t>(4, listops.max_len / 4);
    if (listops.min_len > listops.max_len)
      fail(kLesson, "--min-len ", listops.min_len, " is above --max-len ", listops.max_len, "; give a smaller --min-len");
    const std::vector<Contender> contenders = chosen(kinds, all_contenders(bigbird_block, cli.common.seed));
    listops.seed = recall.seed = cli.common.seed;
    recall.train = listops.train, recall.test = listops.test, recall.val = 0;
    recall.min_distance = recall.length / 2;
    recall.distractors = (recall.length - 2) / 4 - 1;  // as many pairs as the task allows: half of the positions
    data::ListOpsOptions no_expressions = listops;  // each task's own checks, before any work
    no_expressions.train = no_expressions.test = 0;
    data::make_listops(no_expressions);
    data::RetrievalTaskOptions no_sequences = recall;
    no_sequences.train = no_sequences.test = 0;
    data::make_retrieval_task(no_sequences);
    lessons::Run run(cli);

    const std::vector<Task> tasks = {listops_task(listops), recall_task(recall)};
    std::printf("\n== 2. training: %lld steps of %lld examples, AdamW lr %g, d_model %lld, %lld blocks, 4 heads; "
                "BigBird blocks of %lld, %lld random ==\n",
                static_cast<long long>(cli.common.steps), static_cast<long long>(cli.common.batch),
                static_cast<double>(cli.common.lr), static_cast<long long>(size.d_model),
                static_cast<long long>(size.layers), static_cast<long long>(bigbird_block),
                static_cast<long long>(kRandomBlocks));
    lessons::CsvWriter metrics(run.file("metrics.csv"), {"step", "task", "kind", "train_loss"});
    std::vector<std::vector<Result>> results(tasks.size());
    for (size_t t = 0; t < tasks.size(); ++t)
      for (const Contender& c : contenders) results[t].push_back(train(run, tasks[t], c, cli.common, size, metrics));

    std::printf("\n== 3. results (test accuracy; steps/s and peak MiB of a training step) ==\n");
    std::printf("   %-16s", "kind");
    for (const Task& task : tasks) std::printf(" %20s %8s %9s", task.title.c_str(), "steps/s", "peak MiB");
    std::printf("\n");
    lessons::CsvWriter table(run.file("results.csv"), {"task", "kind", "test_acc", "steps_per_s", "peak_mib", "parameters"});
    nlohmann::ordered_json summary;
    lessons::MetricNotes notes;
    for (size_t k = 0; k < contenders.size(); ++k) {
      std::printf("   %-16s", contenders[k].name.c_str());
      for (size_t t = 0; t < tasks.size(); ++t) {
        const Result& r = results[t][k];
        std::printf(" %19.1f%% %8.2f %9.1f", 100 * r.test_acc, r.steps_per_s, r.peak_mib);
        table.row(std::vector<std::string>{tasks[t].name, contenders[k].name, std::to_string(r.test_acc),
                                           std::to_string(r.steps_per_s), std::to_string(r.peak_mib),
                                           std::to_string(r.parameters)});
        const std::string key = tasks[t].name + "_acc_" + contenders[k].name;
        summary[key] = r.test_acc;
        notes[key] = tasks[t].title + ", test accuracy";
      }
      std::printf("\n");
    }
    for (const Task& task : tasks) {
      std::printf("   %s: chance %.1f%%, the most common answer %.1f%%\n", task.title.c_str(), 100 * task.chance,
                  100 * task.majority);
      summary[task.name + "_chance"] = task.chance;
      summary[task.name + "_majority"] = task.majority;
      notes[task.name + "_chance"] = task.title + ": guessing";
      notes[task.name + "_majority"] = task.title + ": always the most common training answer";
    }
    for (size_t t = 0; t < tasks.size(); ++t) {
      accuracy_chart(run, tasks[t], contenders, results[t]);
      loss_chart(run, tasks[t], results[t]);
    }
    run.finish(summary, notes, "docs/15_long_range.md, section 3 (The results); then exercise 1: --max-len 2000");
  });
}
