// Lesson 15: a long-range benchmark in the manner of the Long Range Arena (Tay et al. 2020): every
// attention kind in the same small encoder, trained on the same tasks with the same budget.
//
//  1. the tasks (lessons/15_long_range/tasks.h): ListOps (data/listops.h), nested MIN, MAX, MED
//     and SM expressions over digits whose answer is one digit; and multi-query associative recall
//     (data/mqar.h, Zoology's MQAR): key-value pairs, then queries, each answered where it stands,
//     with one token per pair (a single attention hop) and two (an induction circuit of two layers);
//  2. one encoder per attention kind (models/encoder_classifier.h for ListOps, models/encoder_tagger.h
//     for recall, one token per pair), and a baseline without attention (models/lstm_classifier.h) on
//     ListOps, each trained by the same loop (train, below) with the same steps, batch and batches;
//  3. the results as the LRA shows them (lessons/15_long_range/report.h): a table of accuracy with
//     its standard error per task, training steps per second and the memory a training step adds at
//     its peak, and charts of accuracy against speed in which the size of a marker shows the memory;
//  4. how many pairs fit a state, Zoology's figure (lessons/15_long_range/capacity.h): each kind's
//     recall against the number of pairs, and against the numbers its state holds;
//  5. the circuit: full attention learns recall with two tokens per pair, its loss on a plateau
//     then dropping, and the attention maps of both layers that do it.
// The note that goes with it: docs/15_long_range.md.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/peak_memory.h"
#include "data/listops.h"
#include "data/mqar.h"
#include "harness/attention_flags.h"
#include "lessons/15_long_range/report.h"
#include "lessons/attention_kinds/classifier_tracker.h"
#include "models/predictions.h"
#include "harness/cli.h"
#include "lessons/15_long_range/contenders.h"
#include "lessons/15_long_range/tasks.h"
#include "lessons/memory/model_memory.h"
#include "harness/part_flag.h"
#include "lessons/15_long_range/capacity.h"
#include "lessons/15_long_range/recall_maps.h"
#include "harness/run.h"
#include "harness/schedule_flags.h"
#include "harness/tracker.h"
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

// ---- 1. the tasks: lessons/15_long_range/tasks.h ----
using Task = lessons::LongRangeTask;

// ---- 2. the contenders and their training ----

// The contenders and their models: lessons/15_long_range/contenders.h.
using lessons::Contender, lessons::ModelSize;

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
lessons::ContenderResult train(harness::Run& run, Model& model, const Task& task, const std::string& name,
                               Budget budget, const harness::ScheduleFlags& warmup, uint64_t seed) {
  optim::AdamW adamw(optim::decay_groups(model.named_parameters(), 0.01f), {.lr = budget.lr});
  const optim::Schedule schedule = warmup.schedule(budget.lr, budget.steps);
  harness::Tracker tracker =
      lessons::classifier_tracker(run, budget.steps, budget.batch, name, cat("train_", task.name, "_", name, ".csv"));
  Generator batches(seed + 2);
  int64_t peak_bytes = 0;
  model.train();
  for (int64_t step = tracker.resume({model, adamw, {&batches}, harness::carried_integer("peak_bytes", peak_bytes)}); step <= budget.steps; ++step) {
    adamw.set_lr(schedule(step - 1));
    const data::LabelledBatch batch = data::sample_examples(task.train, budget.batch, batches);
    optim::StepResult stepped;
    const auto train_step = [&] { stepped = optim::train_step(model, adamw, batch, 1.0f); };
    if (step == 1) peak_bytes = peak_bytes_added(train_step);
    else train_step();
    tracker.step(step, stepped, adamw.lr());
    if (tracker.evaluation_due(step)) {
      const models::Predictions answers = models::predict(model, task.val, budget.batch);
      tracker.evaluated(step, {answers.loss, answers.accuracy});
    }
  }
  tracker.finish();
  const models::Predictions test = models::predict(model, task.test, budget.batch);
  const lessons::ContenderResult result{.name = name,
                                        .test_acc = test.accuracy,
                                        .steps_per_s = 1 / tracker.mean_step_seconds(),
                                        .peak_mib = static_cast<double>(peak_bytes) / (1 << 20),
                                        .parameters = model.num_parameters(),
                                        .curve = tracker.curve("train_loss"),
                                        .answers = static_cast<int64_t>(test.classes.size())};
  return result;  // printed once, in the tables of parts 3 and 4 (part 5 prints its own)
}

// ---- 5. the circuit: a causal tagger on recall with two tokens per pair, its loss and its maps ----
double circuit(harness::Run& run, const Contender& c, const data::MqarOptions& o, ModelSize size, Budget budget,
             const harness::ScheduleFlags& warmup, uint64_t seed) {
  const Task task = lessons::recall_task(o, "circuit", "recall, two tokens per pair");
  lessons::print_mqar("5. the circuit: multi-query recall", o, task);
  std::printf("   %s, causal (each position reads those before it), %lld steps\n", c.name.c_str(),
              static_cast<long long>(budget.steps));
  Contender causal = c;  // each query comes after its pair: reading left to right loses nothing
  causal.causal = true;
  Generator init(seed + 3);
  models::EncoderTagger model(lessons::encoder_config(causal, task, size), init);
  const lessons::ContenderResult r = train(run, model, task, c.name, budget, warmup, seed);
  std::printf("   %s: test accuracy %.1f%% +- %.1f\n", c.name.c_str(), 100 * r.test_acc,
              100 * models::standard_error(r.test_acc, r.answers));
  run.wrote(plot::save_line_chart(
      run.path(cat("circuit_loss_", c.name)),
      {cat("Recall, two tokens per pair: ", c.name, "'s training loss"), "step", "cross-entropy (nats)", {r.curve}}));
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  std::vector<Tensor> maps;
  model.forward(narrow(task.test.inputs, 0, 0, 1), Tensor(), &maps);
  std::istringstream text(data::mqar_text(task.test, 0, o));
  const std::vector<std::string> words{std::istream_iterator<std::string>(text), std::istream_iterator<std::string>()};
  lessons::save_recall_maps(run, maps, words, c.name);
  return r.test_acc;
}

// ---- the lesson's own flags ----
struct Flags {
  data::ListOpsOptions listops{.max_len = 64, .train = 20000, .val = 200, .test = 1200};  // min_len: complete()
  int64_t min_len = 0;  // --min-len as given, kept so that the run records the flag, not what it implies
  data::MqarOptions recall{.pairs = 16, .queries = 16, .keys = 64, .values = 16, .length = 64, .one_hop = true,
                           .train = 5000, .val = 200, .test = 500};
  std::vector<int64_t> capacity_pairs{4, 16, 32, 64};
  int64_t capacity_steps = 300;
  data::MqarOptions two_tokens{.pairs = 8, .queries = 8, .keys = 32, .values = 16, .train = 20000, .val = 200, .test = 500};
  int64_t circuit_steps = 3000;
  std::string kinds = "all", parts = "all", circuit_kinds = nn::FullAttention::kName;
  ModelSize size{64, 2};
  // BigBird's blocks of 8 positions with 2 random blocks, VQ's of 16 with 64 codes per head.
  harness::AttentionFlags attention{.defaults = {nn::BigBirdAttention::Settings{.block = 8, .random_blocks = 2},
                                                 nn::VQAttention::Settings{.block = 16, .codes = 64}}};
  harness::ScheduleFlags warmup{.warmup = 50};

  void add_to(harness::LessonCli& cli) {
    cli.option("--kinds", kinds,
               "which to train, separated by commas, or all: " + nn::joined_names(lessons::names_of(lessons::all_contenders(cli, attention, 0)))
                   + " (linear_* is linear attention with that feature map; a kind that attends causally only runs "
                     "causal; lstm has no attention and runs ListOps only)");
    cli.option("--tasks", parts, "which to run, separated by commas, or all: listops, recall, capacity, circuit");
    cli.option("--max-len", listops.max_len, "ListOps: the longest expression in tokens (the LRA: 2000)", {4, 1 << 15});
    cli.option("--min-len", min_len, "ListOps: the shortest expression in tokens; 0: a quarter of --max-len",
               {0, 1 << 15});
    cli.option("--max-depth", listops.max_depth,
               "ListOps: levels of the tree, the digits' counted (operators nest one fewer deep; the LRA: 10)", {2, 64});
    cli.option("--max-args", listops.max_args, "ListOps: arguments per operator at most", {2, 64});
    cli.option("--pairs", recall.pairs, "recall: key-value pairs per sequence", {1, 1 << 14});
    cli.option("--queries", recall.queries, "recall: keys asked per sequence (at most --pairs)", {1, 1 << 14});
    cli.option("--recall-len", recall.length, "recall: tokens per sequence; 0: just enough for pairs and queries",
               {0, 1 << 15});
    cli.option("--keys", recall.keys, "recall: distinct keys", {2, 1 << 14});
    cli.option("--values", recall.values, "recall: distinct values (the classes)", {2, 1 << 14});
    cli.option("--capacity-pairs", capacity_pairs, "part 4: the counts of pairs, separated by commas");
    cli.option("--capacity-steps", capacity_steps, "part 4: training steps of each model", harness::positive);
    cli.option("--circuit-kinds", circuit_kinds, "part 5: the kinds that learn two tokens per pair (as --kinds)");
    cli.option("--circuit-pairs", two_tokens.pairs, "part 5: key-value pairs per sequence, each asked", {1, 1 << 14});
    cli.option("--circuit-steps", circuit_steps, "part 5: training steps", harness::positive);
    cli.option("--train", listops.train, "examples in each task's training set", {1, 1 << 20});
    cli.option("--val", listops.val, "examples in each task's validation set (the loss curves)", {1, 1 << 20});
    cli.option("--test", listops.test, "examples in each task's test set", {1, 1 << 20});
    cli.option("--d-model", size.d_model, "width of every model (4 heads)", {4, 1024});
    cli.option("--layers", size.layers, "encoder blocks (recall with one token per pair: one, a single hop)", {1, 16});
    warmup.add_to(cli);
    harness::add_every_kind_options(cli, attention);
  }

  ModelSize one_hop() const { return {size.d_model, 1}; }  // recall, one token per pair: a single hop, one block

  // --quick: everything tiny but what the command line sets.
  void shrink_for_quick(harness::LessonCli& cli) {
    const auto tiny = [&](const char* flag, int64_t& value, int64_t small) { value = cli.given(flag) ? value : small; };
    tiny("--max-len", listops.max_len, 64), tiny("--pairs", recall.pairs, 4), tiny("--queries", recall.queries, 4);
    tiny("--keys", recall.keys, 8), tiny("--values", recall.values, 4), tiny("--recall-len", recall.length, 64);
    tiny("--train", listops.train, 300), tiny("--val", listops.val, 50), tiny("--test", listops.test, 100);
    tiny("--d-model", size.d_model, 16), tiny("--capacity-steps", capacity_steps, 20);
    tiny("--circuit-pairs", two_tokens.pairs, 4), tiny("--circuit-steps", circuit_steps, 20);
    if (!cli.given("--capacity-pairs")) capacity_pairs = {2, 4};
    attention.defaults = {nn::BigBirdAttention::Settings{.block = 8, .random_blocks = 2},
                          nn::VQAttention::Settings{.block = 8, .codes = 16}};
    tiny("--steps", cli.common.steps, 40), tiny("--batch", cli.common.batch, 16), tiny("--warmup", warmup.warmup, 5);
    if (!cli.given("--lr")) cli.common.lr = 3e-3f;  // tiny models take a larger step
  }

  // The tasks' options the flags imply: the same sizes and seed for every task.
  void complete(uint64_t seed) {
    listops.min_len = min_len > 0 ? min_len : std::max<int64_t>(4, listops.max_len / 4);
    listops.seed = recall.seed = two_tokens.seed = seed;
    recall.train = listops.train, recall.val = listops.val, recall.test = listops.test;
    two_tokens.queries = two_tokens.pairs, two_tokens.test = listops.test;
  }

  // part 4's recall at `pairs` pairs, one token each, each pair asked, at least as long as part 2's.
  data::MqarOptions capacity(int64_t pairs) const {
    data::MqarOptions o = recall;
    const int64_t most = *std::max_element(capacity_pairs.begin(), capacity_pairs.end());
    o.pairs = o.queries = pairs, o.keys = std::max(o.keys, most), o.length = std::max(3 * pairs, recall.tokens());
    return o;
  }

  // Refuses what cannot run, before any work.
  void check(const harness::CommonFlags& common, const std::vector<Contender>& contenders,
             const std::vector<Contender>& circuit_kinds) const {
    if (size.d_model % 4 != 0)
      fail(kLesson, "--d-model ", size.d_model, " must be a multiple of the 4 heads; give ", size.d_model / 4 * 4 + 4);
    if (listops.min_len > listops.max_len)
      fail(kLesson, "--min-len ", listops.min_len, " is above --max-len ", listops.max_len, "; give a smaller --min-len");
    if (capacity_pairs.empty() || *std::min_element(capacity_pairs.begin(), capacity_pairs.end()) < 1)
      fail(kLesson, "--capacity-pairs needs counts of at least 1 pair");
    warmup.check(kLesson, common.steps);
    for (const Contender& c : contenders) {  // BigBird over a sequence it would cover whole is refused
      if (!c.attention) continue;
      harness::check_pattern_fits(kLesson, *c.attention, listops.max_len, false, cat("--max-len ", listops.max_len), "--kinds");
      harness::check_pattern_fits(kLesson, *c.attention, recall.tokens(), false, cat("--recall-len ", recall.tokens()), "--kinds");
      for (const int64_t pairs : capacity_pairs)
        harness::check_pattern_fits(kLesson, *c.attention, capacity(pairs).length, false, cat("--capacity-pairs ", pairs), "--kinds");
    }
    for (const Contender& c : circuit_kinds)
      if (!c.attention || nn::registered_kind(c.attention->kind).directions == nn::Directions::bidirectional_only)
        fail(kLesson, "--circuit-kinds ", c.name, " cannot attend causally; part 5 reads left to right");
    listops.check(), recall.check(), two_tokens.check();
    harness::check_memory(kLesson, lessons::long_range_memory(listops, recall, common.batch, size, contenders));
  }
};

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli(kLesson,
                           "Lesson 15: a long-range benchmark: every attention kind in the same encoder, trained on\n"
                           "ListOps and multi-query recall with the same budget; accuracy, speed, memory, recall's capacity.",
                           {.steps = 500, .lr = 3e-3f, .batch = 32});
    Flags flags;
    flags.add_to(cli);
    harness::PartFlag part(cli, 5);  // part 1 describes the tasks --tasks asks for
    cli.parse(argc, argv);
    if (cli.common.quick) flags.shrink_for_quick(cli);
    if (!cli.given("--warmup")) flags.warmup.warmup = std::min(flags.warmup.warmup, cli.common.steps / 10);
    const std::vector<Contender> every = lessons::all_contenders(cli, flags.attention, cli.common.seed);
    const auto chosen_contenders = [&](const std::string& flag, const std::string& given) {
      std::vector<Contender> list;  // those the flag names, in its order
      for (const std::string& name : harness::chosen_names(kLesson, flag, given, lessons::names_of(every), "kind"))
        list.push_back(*std::find_if(every.begin(), every.end(), [&](const Contender& c) { return c.name == name; }));
      return list;
    };
    const std::vector<Contender> contenders = chosen_contenders("--kinds", flags.kinds);
    const std::vector<Contender> circuit_kinds = chosen_contenders("--circuit-kinds", flags.circuit_kinds);
    const std::vector<std::string> parts = harness::chosen_names(
        kLesson, "--tasks", flags.parts, {"listops", "recall", "capacity", "circuit"}, "task");
    if (cli.given("--part") && cli.given("--tasks")) fail(kLesson, "--part and --tasks both choose what runs; give one of them");
    const auto asked = [&](const std::string& task) { return std::find(parts.begin(), parts.end(), task) != parts.end(); };
    const auto chosen = [&](const std::string& task) {  // parts 2 and 3 are the training on listops and recall, and its table
      const int number = task == "capacity" ? 4 : task == "circuit" ? 5 : 2;
      return (part.runs(number) || (number == 2 && part.runs(3))) && asked(task);
    };
    flags.complete(cli.common.seed);
    flags.check(cli.common, contenders, circuit_kinds);
    harness::Run run(cli);
    harness::Summary summary{nlohmann::ordered_json::object(), {}};  // part 1 alone reports no metrics

    const Task listops = lessons::listops_task(flags.listops, part.runs(1) && asked("listops"));
    const Task recall = lessons::recall_task(flags.recall, "recall", "recall, one token per pair");
    if (part.runs(1) && asked("recall")) lessons::print_mqar("1b. multi-query associative recall", flags.recall, recall);

    const auto bigbird = harness::kind_settings<nn::BigBirdAttention::Settings>(cli, flags.attention);
    std::printf("\n== 2. training: %lld steps of %lld examples, AdamW lr %g (warmup %lld, cosine), d_model %lld, "
                "%lld blocks (recall: 1), 4 heads; BigBird blocks of %lld, %lld random ==\n",
                static_cast<long long>(cli.common.steps), static_cast<long long>(cli.common.batch),
                static_cast<double>(cli.common.lr), static_cast<long long>(flags.warmup.warmup),
                static_cast<long long>(flags.size.d_model), static_cast<long long>(flags.size.layers),
                static_cast<long long>(bigbird.block), static_cast<long long>(bigbird.random_blocks));
    for (const Contender& c : contenders)
      if (c.causal)
        std::printf("   %s runs causal: %s,\n"
                    "   so each position sees only those before it: ListOps reads its answer at the last real token,\n"
                    "   recall at each query, which comes after its pair; the others read both ways\n",
                    harness::describe_attention(*c.attention, /*causal=*/true).c_str(),
                    nn::registered_kind(c.attention->kind).why_one_way.c_str());
    const Budget budget{cli.common.steps, cli.common.batch, cli.common.lr};
    std::vector<lessons::TaskResults> results;
    for (const Task* task : {&listops, &recall}) {
      if (!chosen(task->name)) continue;
      results.push_back({task->name, task->title, task->chance, task->majority, {}});
      for (const Contender& c : contenders) {
        Generator init(cli.common.seed + 3);  // every contender starts from the same generator
        if (!task->tagged) {
          const auto model = lessons::make_classifier(c, *task, flags.size, init);
          results.back().contenders.push_back(train(run, *model, *task, c.name, budget, flags.warmup, cli.common.seed));
        } else if (c.attention) {  // the LSTM classifier answers once per sequence
          models::EncoderTagger model(lessons::encoder_config(c, *task, flags.one_hop()), init);
          results.back().contenders.push_back(train(run, model, *task, c.name, budget, flags.warmup, cli.common.seed));
        }
      }
    }
    if (!results.empty()) lessons::report_benchmark(run, results, summary);

    std::vector<lessons::KindCapacity> capacity;
    if (chosen("capacity"))
      std::printf("\n== 4. how many pairs fit a state: %lld steps at each count of pairs, one token per pair, one layer ==\n",
                  static_cast<long long>(flags.capacity_steps));
    for (const Contender& c : contenders) {
      if (!c.attention || !chosen("capacity")) continue;
      capacity.push_back({c.name, {}});
      for (const int64_t pairs : flags.capacity_pairs) {
        const data::MqarOptions o = flags.capacity(pairs);
        const Task task = lessons::recall_task(o, cat("capacity_", pairs), cat("recall, ", pairs, " pairs"));
        Generator init(cli.common.seed + 3);
        models::EncoderTagger model(lessons::encoder_config(c, task, flags.one_hop()), init);
        const lessons::ContenderResult r =
            train(run, model, task, c.name, {flags.capacity_steps, budget.batch, budget.lr}, flags.warmup, cli.common.seed);
        const int64_t state =
            nn::registered_kind(c.attention->kind).state_numbers(*c.attention, o.length, flags.size.d_model / 4, c.causal);
        capacity.back().points.push_back({pairs, o.length, state, r.test_acc, r.answers});
      }
    }
    if (!capacity.empty()) lessons::report_capacity(run, capacity, data::mqar_chance(flags.recall), summary);

    if (chosen("circuit")) {
      for (const Contender& c : circuit_kinds)
        summary.report(cat("circuit_acc_", c.name),
                       circuit(run, c, flags.two_tokens, flags.size, {flags.circuit_steps, budget.batch, budget.lr},
                               flags.warmup, cli.common.seed),
                       "part 5: recall with two tokens per pair, test accuracy");
    }
    run.finish(summary.metrics, summary.notes,
               "docs/15_long_range.md, section 3 (The results); then exercise 1: --max-len 2000", harness::Run::Metrics::shown_above);
  });
}
