// Lesson 15: a long-range benchmark in the manner of the Long Range Arena (Tay et al. 2020): every
// attention kind in the same small encoder, trained on the same tasks with the same budget.
//
//  1. the tasks (lessons/common/long_range_tasks.h): ListOps (data/listops.h), nested MIN, MAX, MED
//     and SM expressions over digits whose answer is one digit; and multi-query associative recall
//     (data/mqar.h, Zoology's MQAR): key-value pairs, then queries, each answered where it stands,
//     with two tokens per pair (an induction circuit of two layers) and one (a single attention hop);
//  2. one encoder per attention kind (models/encoder_classifier.h for ListOps, models/encoder_tagger.h
//     for recall), and a baseline without attention (models/lstm_classifier.h) on ListOps, each
//     trained by the same loop (train, below) with the same steps, batch, learning rate and batches;
//  3. the results as the LRA shows them (lessons/common/benchmark_report.h): a table of accuracy with
//     its standard error per task, training steps per second and the memory a training step adds at
//     its peak, and charts of accuracy against speed in which the size of a marker shows the memory;
//  4. how many pairs fit a state, Zoology's figure (lessons/common/recall_capacity.h): each kind's
//     recall against the number of pairs, and against the numbers its state holds;
//  5. the circuit: the attention maps of both layers of full attention on recall, two tokens per pair.
// The note that goes with it: docs/15_long_range.md.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/peak_memory.h"
#include "data/listops.h"
#include "data/mqar.h"
#include "lessons/common/attention_flags.h"
#include "lessons/common/benchmark_report.h"
#include "lessons/common/classifier_training.h"
#include "lessons/common/cli.h"
#include "lessons/common/long_range_tasks.h"
#include "lessons/common/recall_capacity.h"
#include "lessons/common/recall_maps.h"
#include "lessons/common/run.h"
#include "lessons/common/schedule_flags.h"
#include "lessons/common/tracker.h"
#include "models/encoder_classifier.h"
#include "models/encoder_tagger.h"
#include "models/lstm_classifier.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/vq_attention.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "15_long_range";

// ---- 1. the tasks ----

struct Task {
  std::string name, title;  // "listops", "ListOps"
  data::LabelledBatch train, val, test;
  int64_t vocabulary = 0, classes = 0, length = 0;
  bool tagged = false;  // answered at every asked position (recall) rather than once per sequence (ListOps)
  double chance = 0;    // guessing uniformly
  double majority = 0;  // always answering the training set's most common answer, on the test set
};

Task listops_task(const data::ListOpsOptions& o) {
  const data::ListOpsSplits splits = data::make_listops(o);
  lessons::print_listops(o, splits);
  const auto labelled = [](const data::ListOpsSet& set) { return data::LabelledBatch{set.tokens, set.answers, set.valid}; };
  return {"listops", "ListOps", labelled(splits.train), labelled(splits.val), labelled(splits.test),
          data::kListOpsVocabulary, data::kListOpsClasses, o.max_len, false, 1.0 / data::kListOpsClasses};
}

Task recall_task(const data::MqarOptions& o, const std::string& name, const std::string& title) {
  const data::MqarSplits splits = data::make_mqar(o);
  return {name, title, splits.train, splits.val, splits.test, data::mqar_vocabulary(o), o.values, o.tokens(), true,
          data::mqar_chance(o)};
}

// ---- 2. the contenders and their training ----

// What --kinds names: an attention kind for the encoder, or the baseline without one.
struct Contender {
  std::string name;                                // as --kinds writes it
  std::optional<nn::AttentionSettings> attention;  // none: the LSTM baseline
  // Every position sees only those before it (ListOps reads the answer at the last real token, the
  // one that has seen them all): for the kinds that attend no other way (the registry's causal_only).
  bool causal = false;
};

// Every attention kind of the registry (nn/attention/attention_registry.h: linear once per feature
// map, each causal-only kind causal), then the baseline: a kind registered there joins without a
// change here. `seed` draws BigBird's random blocks, FAVOR+'s features and VQ's initial codes.
std::vector<Contender> all_contenders(const lessons::LessonCli& cli, const lessons::AttentionFlags& attention,
                                      uint64_t seed) {
  std::vector<Contender> list;
  for (const lessons::KindRun& kind : lessons::every_kind(cli, attention, seed))
    list.push_back({kind.name, kind.settings, kind.causal});
  list.push_back({"lstm", std::nullopt});
  return list;
}

std::vector<std::string> names_of(const std::vector<Contender>& list) {
  std::vector<std::string> names;
  for (const Contender& c : list) names.push_back(c.name);
  return names;
}

struct ModelSize {
  int64_t d_model, layers;
};

models::EncoderClassifierConfig encoder_config(const Contender& c, const Task& task, ModelSize size) {
  return {.vocab_size = task.vocabulary, .num_classes = task.classes, .max_len = task.length, .d_model = size.d_model,
          .nhead = 4, .num_layers = size.layers, .dim_feedforward = 2 * size.d_model,
          .pooling = c.causal ? models::Pooling::last : models::Pooling::mean, .attention = *c.attention,
          .causal = c.causal};
}

std::unique_ptr<models::SequenceClassifier> make_classifier(const Contender& c, const Task& task, ModelSize size,
                                                            Generator& gen) {
  if (!c.attention)
    return std::make_unique<models::LstmClassifier>(
        models::LstmClassifierConfig{.vocab_size = task.vocabulary, .num_classes = task.classes, .width = size.d_model,
                                     .pooling = models::Pooling::mean},
        gen);
  return std::make_unique<models::EncoderClassifier>(encoder_config(c, task, size), gen);
}

struct Budget {
  int64_t steps, batch;
  float lr;
};

// The training loop, the same for every contender and task: AdamW (no decay on biases, norms and
// embeddings), a linear warmup then a cosine decay, the gradient clipped to norm 1, each step a
// batch drawn from the training set; every contender sees the same batches (made from the seed). It
// measures a step's mean time (the tracker's, without the evaluations) and what the first step adds
// to the memory at its peak.
template <class Model>
lessons::ContenderResult train(lessons::Run& run, Model& model, const Task& task, const std::string& name,
                               Budget budget, const lessons::ScheduleFlags& warmup, uint64_t seed) {
  optim::AdamW adamw(optim::decay_groups(model.named_parameters(), 0.01f), {.lr = budget.lr});
  const optim::Schedule schedule = warmup.schedule(budget.lr, budget.steps);
  lessons::Tracker tracker =
      lessons::classifier_tracker(run, budget.steps, budget.batch, name, cat("train_", task.name, "_", name, ".csv"));
  Generator batches(seed + 2);
  int64_t peak_bytes = 0;
  model.train();
  for (int64_t step = 1; step <= budget.steps; ++step) {
    adamw.set_lr(schedule(step - 1));
    const data::LabelledBatch batch = data::sample_examples(task.train, budget.batch, batches);
    optim::StepResult stepped;
    const auto train_step = [&] { stepped = optim::train_step(model, adamw, batch, 1.0f); };
    if (step == 1) peak_bytes = peak_bytes_added(train_step);
    else train_step();
    tracker.step(step, stepped, adamw.lr());
    if (tracker.evaluation_due(step)) {
      const lessons::Predictions answers = lessons::predict(model, task.val, budget.batch);
      tracker.evaluated(step, {answers.loss, answers.accuracy});
    }
  }
  tracker.finish();
  const lessons::Predictions test = lessons::predict(model, task.test, budget.batch);
  const lessons::ContenderResult result{.name = name,
                                        .test_acc = test.accuracy,
                                        .steps_per_s = 1 / tracker.mean_step_seconds(),
                                        .peak_mib = static_cast<double>(peak_bytes) / (1 << 20),
                                        .parameters = model.num_parameters(),
                                        .curve = tracker.curve("train_loss"),
                                        .answers = static_cast<int64_t>(test.classes.size())};
  std::printf("   %-16s %-26s test accuracy %5.1f%% +-%4.1f  %6.2f steps/s  peak %7.1f MiB  %7lld parameters\n",
              name.c_str(), task.title.c_str(), 100 * result.test_acc,
              100 * lessons::standard_error(result.test_acc, result.answers), result.steps_per_s, result.peak_mib,
              static_cast<long long>(result.parameters));
  return result;
}

// ---- 5. the circuit: test sequence 0 through the trained tagger, each layer's maps drawn ----
void draw_circuit(lessons::Run& run, models::EncoderTagger& model, const Task& task, const data::MqarOptions& o) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  std::vector<Tensor> maps;
  model.forward(narrow(task.test.inputs, 0, 0, 1), Tensor(), &maps);
  std::istringstream text(data::mqar_text(task.test, 0, o));
  std::vector<std::string> words{std::istream_iterator<std::string>(text), std::istream_iterator<std::string>()};
  std::printf("\n== 5. the circuit: full attention's maps on test sequence 0, two tokens per pair ==\n"
              "   layer 1: each value reads the key just before it; layer 2: each query reads the value whose key it\n"
              "   matches (recall_maps_layer1, recall_maps_layer2)\n");
  lessons::save_recall_maps(run, maps, words);
}

// ---- the lesson's own flags ----
struct Flags {
  data::ListOpsOptions listops{.min_len = 0, .max_len = 128, .train = 5000, .val = 200, .test = 500};
  data::MqarOptions recall{.pairs = 16, .queries = 16, .keys = 64, .values = 16, .length = 128, .train = 5000, .val = 200, .test = 500};
  std::vector<int64_t> capacity_pairs{4, 8, 16, 32, 64};
  int64_t capacity_steps = 300;
  std::string kinds = "all";
  ModelSize size{64, 2};
  // BigBird's blocks of 16 positions with 2 random blocks, VQ's of 32 with 64 codes per head.
  lessons::AttentionFlags attention{.defaults = {{"block", 16}, {"random_blocks", 2}, {"codes", 64}},
                                    .kind_defaults = {{nn::VQAttention::kName, {{"block", 32}}}}};
  lessons::ScheduleFlags warmup{.warmup = 50};

  void add_to(lessons::LessonCli& cli) {
    cli.option("--kinds", kinds,
               "which to train, separated by commas, or all: " + nn::joined_names(names_of(all_contenders(cli, attention, 0)))
                   + " (linear_* is linear attention with that feature map; a kind that attends causally only runs "
                     "causal; lstm has no attention and runs ListOps only)");
    cli.option("--max-len", listops.max_len, "ListOps: the longest expression in tokens (the LRA: 2000)", {4, 1 << 15});
    cli.option("--min-len", listops.min_len, "ListOps: the shortest expression in tokens; 0: a quarter of --max-len",
               lessons::non_negative);
    cli.option("--max-depth", listops.max_depth,
               "ListOps: levels of the tree, the digits' counted (operators nest one fewer deep; the LRA: 10)", {2, 64});
    cli.option("--max-args", listops.max_args, "ListOps: arguments per operator at most", {2, 64});
    cli.option("--pairs", recall.pairs, "recall: key-value pairs per sequence", {1, 1 << 14});
    cli.option("--queries", recall.queries, "recall: keys asked per sequence (at most --pairs)", {1, 1 << 14});
    cli.option("--recall-len", recall.length, "recall: tokens per sequence; 0: just enough for pairs and queries",
               lessons::non_negative);
    cli.option("--keys", recall.keys, "recall: distinct keys", {2, 1 << 14});
    cli.option("--values", recall.values, "recall: distinct values (the classes)", {2, 1 << 14});
    cli.option("--capacity-pairs", capacity_pairs, "part 4: the counts of pairs, separated by commas")->delimiter(',');
    cli.option("--capacity-steps", capacity_steps, "part 4: training steps of each model", lessons::positive);
    cli.option("--train", listops.train, "examples in each task's training set", lessons::positive);
    cli.option("--val", listops.val, "examples in each task's validation set (the loss curves)", lessons::positive);
    cli.option("--test", listops.test, "examples in each task's test set", lessons::positive);
    cli.option("--d-model", size.d_model, "width of every model (4 heads)", {4, 1024});
    cli.option("--layers", size.layers, "encoder blocks", {1, 16});
    warmup.add_to(cli);
    lessons::add_every_kind_options(cli, attention);
  }

  // --quick: everything tiny but what the command line sets.
  void shrink_for_quick(lessons::LessonCli& cli) {
    const auto tiny = [&](const char* flag, int64_t& value, int64_t small) { value = cli.given(flag) ? value : small; };
    tiny("--max-len", listops.max_len, 64), tiny("--pairs", recall.pairs, 4), tiny("--queries", recall.queries, 4);
    tiny("--keys", recall.keys, 8), tiny("--values", recall.values, 4), tiny("--recall-len", recall.length, 64);
    tiny("--train", listops.train, 300), tiny("--val", listops.val, 50), tiny("--test", listops.test, 100);
    tiny("--d-model", size.d_model, 16), tiny("--capacity-steps", capacity_steps, 20);
    if (!cli.given("--capacity-pairs")) capacity_pairs = {2, 4};
    attention.defaults["block"] = attention.kind_defaults[nn::VQAttention::kName]["block"] = 8;
    attention.defaults["codes"] = 16;
    tiny("--steps", cli.common.steps, 40), tiny("--batch", cli.common.batch, 16), tiny("--warmup", warmup.warmup, 5);
    if (!cli.given("--lr")) cli.common.lr = 3e-3f;  // tiny models take a larger step
  }

  // The tasks' options the flags imply: the same sizes and seed for every task.
  void complete(uint64_t seed) {
    if (listops.min_len == 0) listops.min_len = std::max<int64_t>(4, listops.max_len / 4);
    listops.seed = recall.seed = seed;
    recall.train = listops.train, recall.val = listops.val, recall.test = listops.test;
  }

  // part 4's recall at `pairs` pairs, one token each, each pair asked, every count in sequences of one length.
  data::MqarOptions capacity(int64_t pairs) const {
    data::MqarOptions o = recall;
    const int64_t most = *std::max_element(capacity_pairs.begin(), capacity_pairs.end());
    o.pairs = o.queries = pairs, o.keys = std::max(o.keys, most), o.one_hop = true, o.length = std::max(3 * most, recall.tokens());
    return o;
  }

  // Refuses what cannot run, before any work.
  void check(const lessons::CommonFlags& common, const std::vector<Contender>& contenders) const {
    if (size.d_model % 4 != 0)
      fail(kLesson, "--d-model ", size.d_model, " must be a multiple of the 4 heads; give ", size.d_model / 4 * 4 + 4);
    if (listops.min_len > listops.max_len)
      fail(kLesson, "--min-len ", listops.min_len, " is above --max-len ", listops.max_len, "; give a smaller --min-len");
    if (capacity_pairs.empty() || *std::min_element(capacity_pairs.begin(), capacity_pairs.end()) < 1)
      fail(kLesson, "--capacity-pairs needs counts of at least 1 pair");
    warmup.check(kLesson, common.steps);
    const int64_t longest = capacity(capacity_pairs.front()).length;
    for (const Contender& c : contenders) {  // BigBird over a sequence it would cover whole is refused
      if (!c.attention) continue;
      lessons::check_pattern_fits(kLesson, *c.attention, listops.max_len, false, cat("--max-len ", listops.max_len));
      lessons::check_pattern_fits(kLesson, *c.attention, recall.tokens(), false, cat("--recall-len ", recall.tokens()));
      lessons::check_pattern_fits(kLesson, *c.attention, longest, false, cat("part 4's ", longest, " tokens"));
    }
    listops.check(), recall.check();
  }
};

}  // namespace

int main(int argc, char** argv) {
  return lessons::lesson_main([&] {
    lessons::LessonCli cli(kLesson,
                           "Lesson 15: a long-range benchmark: every attention kind in the same encoder, trained on\n"
                           "ListOps and multi-query recall with the same budget; accuracy, speed, memory, recall's capacity.",
                           {.steps = 500, .lr = 2e-3f, .batch = 16});
    Flags flags;
    flags.add_to(cli);
    cli.parse(argc, argv);
    if (cli.common.quick) flags.shrink_for_quick(cli);
    if (!cli.given("--warmup")) flags.warmup.warmup = std::min(flags.warmup.warmup, cli.common.steps / 10);
    const std::vector<Contender> every = all_contenders(cli, flags.attention, cli.common.seed);
    std::vector<Contender> contenders;  // those --kinds names, in its order
    for (const std::string& name : lessons::chosen_names(kLesson, "--kinds", flags.kinds, names_of(every), "kind"))
      contenders.push_back(*std::find_if(every.begin(), every.end(), [&](const Contender& c) { return c.name == name; }));
    flags.complete(cli.common.seed);
    flags.check(cli.common, contenders);
    lessons::Run run(cli);
    lessons::Summary summary;

    Task listops = listops_task(flags.listops);
    listops.majority = lessons::majority_share(listops.train.labels, listops.test.labels, listops.classes);
    std::printf("   chance: guessing %.1f%%, always the most common answer %.1f%% (of the test set)\n",
                100 * listops.chance, 100 * listops.majority);
    data::MqarOptions one_hop = flags.recall;
    one_hop.one_hop = true;
    std::vector<Task> tasks = {listops, recall_task(flags.recall, "mqar", "recall, two tokens per pair"),
                               recall_task(one_hop, "mqar_one_hop", "recall, one token per pair")};
    lessons::print_mqar(flags.recall, tasks[1].train, tasks[2].train);
    for (Task& t : tasks) t.majority = lessons::majority_share(t.train.labels, t.test.labels, t.classes);
    std::printf("   chance: guessing %.1f%% per query, always the most common answer %.1f%%\n", 100 * tasks[1].chance,
                100 * tasks[1].majority);

    const nn::AttentionSettings bigbird =
        lessons::kind_settings(cli, flags.attention, nn::BigBirdAttention::kName, cli.common.seed);
    std::printf("\n== 2. training: %lld steps of %lld examples, AdamW lr %g (warmup %lld, cosine), d_model %lld, "
                "%lld blocks, 4 heads; BigBird blocks of %lld, %lld random ==\n",
                static_cast<long long>(cli.common.steps), static_cast<long long>(cli.common.batch),
                static_cast<double>(cli.common.lr), static_cast<long long>(flags.warmup.warmup),
                static_cast<long long>(flags.size.d_model), static_cast<long long>(flags.size.layers),
                static_cast<long long>(bigbird.number("block")), static_cast<long long>(bigbird.number("random_blocks")));
    for (const Contender& c : contenders)
      if (c.causal)
        std::printf("   %s runs causal: %s,\n"
                    "   so each position sees only those before it: ListOps reads its answer at the last real token,\n"
                    "   recall at each query, which comes after its pair; the others read both ways\n",
                    lessons::describe_attention(*c.attention, /*causal=*/true).c_str(),
                    nn::registered_kind(c.attention->kind).why_one_way.c_str());
    const Budget budget{cli.common.steps, cli.common.batch, cli.common.lr};
    std::vector<lessons::TaskResults> results;
    for (const Task& task : tasks) {
      results.push_back({task.name, task.title, task.chance, task.majority, {}});
      for (const Contender& c : contenders) {
        Generator init(cli.common.seed + 3);  // every contender starts from the same generator
        if (!task.tagged) {
          const auto model = make_classifier(c, task, flags.size, init);
          results.back().contenders.push_back(train(run, *model, task, c.name, budget, flags.warmup, cli.common.seed));
          continue;
        }
        if (!c.attention) continue;  // the LSTM classifier answers once per sequence
        models::EncoderTagger model(encoder_config(c, task, flags.size), init);
        results.back().contenders.push_back(train(run, model, task, c.name, budget, flags.warmup, cli.common.seed));
        if (task.name == "mqar" && c.attention->kind == nn::FullAttention::kName) draw_circuit(run, model, task, flags.recall);
      }
    }
    lessons::report_benchmark(run, results, summary);

    std::printf("\n== 4. training for the capacity: %lld steps at each count of pairs, one token per pair ==\n",
                static_cast<long long>(flags.capacity_steps));
    std::vector<lessons::KindCapacity> capacity;
    for (const Contender& c : contenders) {
      if (!c.attention) continue;
      capacity.push_back({c.name, {}});
      for (const int64_t pairs : flags.capacity_pairs) {
        const data::MqarOptions o = flags.capacity(pairs);
        const Task task = recall_task(o, cat("capacity_", pairs), cat("recall, ", pairs, " pairs"));
        Generator init(cli.common.seed + 3);
        models::EncoderTagger model(encoder_config(c, task, flags.size), init);
        const lessons::ContenderResult r =
            train(run, model, task, c.name, {flags.capacity_steps, budget.batch, budget.lr}, flags.warmup, cli.common.seed);
        const int64_t state = lessons::state_numbers(*c.attention, o.length, flags.size.d_model / 4);
        capacity.back().points.push_back({pairs, o.length, state, r.test_acc, r.answers});
      }
    }
    if (!capacity.empty()) lessons::report_capacity(run, capacity, 1.0 / static_cast<double>(flags.recall.values), summary);
    run.finish(summary.metrics, summary.notes,
               "docs/15_long_range.md, section 3 (The results); then exercise 1: --max-len 2000");
  });
}
