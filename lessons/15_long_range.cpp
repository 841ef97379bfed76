// Lesson 15: a long-range benchmark in the manner of the Long Range Arena (Tay et al. 2020): every
// attention kind in the same small encoder, trained on the same tasks with the same budget.
//
//  1. the tasks (lessons/long_range/tasks.h): ListOps (data/listops.h), nested MIN, MAX, MED
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
#include <cstdio>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/peak_memory.h"
#include "harness/cli.h"
#include "harness/part_flag.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "lessons/15_long_range/capacity.h"
#include "lessons/15_long_range/flags.h"
#include "lessons/15_long_range/recall_maps.h"
#include "lessons/15_long_range/report.h"
#include "lessons/attention_kinds/classifier_tracker.h"
#include "lessons/long_range/contenders.h"
#include "lessons/long_range/tasks.h"
#include "models/encoder_tagger.h"
#include "models/predictions.h"
#include "nn/attention/attention_registry.h"
#include "optim/adam.h"
#include "optim/train_step.h"
#include "plot/plot.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "15_long_range";

// ---- 1. the tasks: lessons/long_range/tasks.h ----
using Task = lessons::LongRangeTask;

// ---- 2. the contenders and their training ----

// The contenders and their models: lessons/long_range/contenders.h.
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

// Part 2's heading: the budget every contender gets, and the kinds that run causal, and why.
void print_budget(Budget budget, const lessons::LongRangeFlags& f, const nn::BigBirdAttention::Settings& bigbird,
                  const std::vector<Contender>& contenders) {
  std::printf("\n== 2. training: %lld steps of %lld examples, AdamW lr %g (warmup %lld, cosine), d_model %lld, "
              "%lld blocks (recall: 1), 4 heads; BigBird blocks of %lld, %lld random ==\n",
              static_cast<long long>(budget.steps), static_cast<long long>(budget.batch), static_cast<double>(budget.lr),
              static_cast<long long>(f.warmup.warmup), static_cast<long long>(f.size.d_model),
              static_cast<long long>(f.size.layers), static_cast<long long>(bigbird.block),
              static_cast<long long>(bigbird.random_blocks));
  for (const Contender& c : contenders)
    if (c.causal)
      std::printf("   %s runs causal: %s,\n"
                  "   so each position sees only those before it: ListOps reads its answer at the last real token,\n"
                  "   recall at each query, which comes after its pair; the others read both ways\n",
                  harness::describe_attention(*c.attention, /*causal=*/true).c_str(),
                  nn::registered_kind(c.attention->kind).why_one_way.c_str());
}

// Part 2: every contender trained on each task, from the same initial weights; a classifier on
// ListOps, a tagger of one block on recall (one token per pair: a single hop).
std::vector<lessons::TaskResults> benchmark(harness::Run& run, const std::vector<const Task*>& tasks,
                                            const std::vector<Contender>& contenders, const lessons::LongRangeFlags& f,
                                            Budget budget, uint64_t seed) {
  std::vector<lessons::TaskResults> results;
  for (const Task* task : tasks) {
    results.push_back({task->name, task->title, task->chance, task->majority, {}});
    for (const Contender& c : contenders) {
      Generator init(seed + 3);  // every contender starts from the same generator
      if (!task->tagged) {
        const auto model = lessons::make_classifier(c, *task, f.size, init);
        results.back().contenders.push_back(train(run, *model, *task, c.name, budget, f.warmup, seed));
      } else if (c.attention) {  // the LSTM classifier answers once per sequence
        models::EncoderTagger model(lessons::encoder_config(c, *task, f.one_hop()), init);
        results.back().contenders.push_back(train(run, model, *task, c.name, budget, f.warmup, seed));
      }
    }
  }
  return results;
}

// ---- 3. the results: lessons/15_long_range/report.h ----

// ---- 4. how many pairs fit a state: each attention kind's recall at each count of pairs ----
std::vector<lessons::KindCapacity> capacity(harness::Run& run, const std::vector<Contender>& contenders,
                                            const lessons::LongRangeFlags& f, Budget budget, uint64_t seed) {
  std::printf("\n== 4. how many pairs fit a state: %lld steps at each count of pairs, one token per pair, one layer ==\n",
              static_cast<long long>(f.capacity_steps));
  std::vector<lessons::KindCapacity> kinds;
  for (const Contender& c : contenders) {
    if (!c.attention) continue;
    kinds.push_back({c.name, {}});
    for (const int64_t pairs : f.capacity_pairs) {
      const data::MqarOptions o = f.capacity(pairs);
      const Task task = lessons::recall_task(o, cat("capacity_", pairs), cat("recall, ", pairs, " pairs"));
      Generator init(seed + 3);
      models::EncoderTagger model(lessons::encoder_config(c, task, f.one_hop()), init);
      const lessons::ContenderResult r =
          train(run, model, task, c.name, {f.capacity_steps, budget.batch, budget.lr}, f.warmup, seed);
      const int64_t state =
          nn::registered_kind(c.attention->kind).state_numbers(*c.attention, o.length, f.size.d_model / 4, c.causal);
      kinds.back().points.push_back({pairs, o.length, state, r.test_acc, r.answers});
    }
  }
  return kinds;
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

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli(kLesson,
                           "Lesson 15: a long-range benchmark: every attention kind in the same encoder, trained on\n"
                           "ListOps and multi-query recall with the same budget; accuracy, speed, memory, recall's capacity.",
                           {.steps = 500, .lr = 3e-3f, .batch = 32});
    lessons::LongRangeFlags flags;  // and what chooses what runs: lessons/15_long_range/flags.h
    flags.add_to(cli);
    harness::PartFlag part(cli, 5);  // part 1 describes the tasks --tasks asks for
    cli.parse(argc, argv);
    const lessons::LongRangeChoice chosen = flags.settle(cli, part);
    harness::Run run(cli);
    harness::Summary summary{nlohmann::ordered_json::object(), {}};  // part 1 alone reports no metrics
    const uint64_t seed = cli.common.seed;

    // 1. the tasks, drawn for every part, printed by part 1
    const Task listops = lessons::listops_task(flags.listops, chosen.describes("listops"));
    const Task recall = lessons::recall_task(flags.recall, "recall", "recall, one token per pair");
    if (chosen.describes("recall")) lessons::print_mqar("1b. multi-query associative recall", flags.recall, recall);

    // 2. every contender trained on each task; 3. the results
    const Budget budget{cli.common.steps, cli.common.batch, cli.common.lr};
    print_budget(budget, flags, harness::kind_settings<nn::BigBirdAttention::Settings>(cli, flags.attention), chosen.contenders);
    std::vector<const Task*> trained;
    for (const Task* task : {&listops, &recall})
      if (chosen.runs(task->name)) trained.push_back(task);
    const std::vector<lessons::TaskResults> results = benchmark(run, trained, chosen.contenders, flags, budget, seed);
    if (!results.empty()) lessons::report_benchmark(run, results, summary);

    // 4. how many pairs fit a state
    if (chosen.runs("capacity")) {
      const std::vector<lessons::KindCapacity> kinds = capacity(run, chosen.contenders, flags, budget, seed);
      if (!kinds.empty()) lessons::report_capacity(run, kinds, data::mqar_chance(flags.recall), summary);
    }

    // 5. the circuit
    if (chosen.runs("circuit"))
      for (const Contender& c : chosen.circuit_kinds)
        summary.report(cat("circuit_acc_", c.name),
                       circuit(run, c, flags.two_tokens, flags.size, {flags.circuit_steps, budget.batch, budget.lr},
                               flags.warmup, seed),
                       "part 5: recall with two tokens per pair, test accuracy");
    run.finish(summary.metrics, summary.notes,
               "docs/15_long_range.md, section 3 (The results); then exercise 1: --max-len 2000", harness::Run::Metrics::shown_above);
  });
}
