// Lesson 17: the delta rule, linear attention that can overwrite (DeltaNet: Schlag, Irie and
// Schmidhuber 2021; trained in chunks by Yang et al. 2024; Gated DeltaNet: Yang, Kautz and
// Hatamizadeh 2025). Linear attention adds every key-value pair on top of the others; the delta rule
// first reads what its state holds for the key and writes only the difference.
//
//  1. the state as a memory, no training (lessons/17_delta_rule/memory.h): random pairs written by
//     the additive rule and by the delta rule, read back; a key written again; the gated rule's decay;
//  2. one delta layer three ways, chunked (the training form), recurrent (generation's) and the
//     naive recurrence, and what a layer and a generated token cost against the length, beside full
//     attention and elu+1;
//  3. recall against the state (lessons/17_delta_rule/recall_state.h): lesson 15's multi-query
//     recall with each kind at several head widths, the pairs growing, by the loop in train_recall;
//  4. character GPTs with full attention, elu+1, delta and gated delta on the same text and budget.
// The kinds are nn/attention/delta_attention.h and gated_delta_attention.h, the rule itself
// core/kernels/delta_rule.h; the note that goes with it: docs/17_delta_rule.md.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/batcher.h"
#include "harness/cli.h"
#include "harness/part_flag.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "lessons/17_delta_rule/memory.h"
#include "lessons/17_delta_rule/recall_state.h"
#include "lessons/attention_kinds/classifier_tracker.h"
#include "lessons/attention_kinds/gpt_comparison.h"
#include "lessons/attention_kinds/layer_cost.h"
#include "lessons/char_gpt/char_gpt.h"
#include "lessons/long_range/contenders.h"
#include "lessons/long_range/tasks.h"
#include "lessons/memory/model_memory.h"
#include "models/encoder_tagger.h"
#include "models/gpt.h"
#include "models/predictions.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/delta_attention.h"
#include "nn/attention/feature_map.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/gated_delta_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/taylor_features.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "17_delta_rule";

// ---- 1. the state as a memory: lessons/17_delta_rule/memory.h ----

// ---- 2. one layer three ways, and its cost ----

constexpr int64_t kWaysLength = 45, kWaysDim = 16, kWaysChunk = 8;  // 45 = 5 chunks of 8 and one of 5

// The largest difference of the chunked and the recurrent output from the naive recurrence's
// (the implied matrix, the recurrence run on the identity in double precision, times v).
struct ThreeWays {
  double chunked = 0, recurrent = 0;
  int64_t state_floats = 0;  // after the last position
  bool state_fixed = true;   // the same after every position
};

ThreeWays three_ways(nn::AttentionSettings settings, Generator& gen) {
  NoGradGuard no_grad;
  settings.heads = 2, settings.head_dim = kWaysDim;  // beta's projection (and the gate's) is per head
  const std::shared_ptr<nn::AttentionKind> kind = nn::make_attention(settings);
  const Tensor q = randn({1, settings.heads, kWaysLength, kWaysDim}, gen), k = randn(q.shape(), gen), v = randn(q.shape(), gen);
  const Tensor naive = matmul(kind->implied_weights(q, k, {.causal = true}), v);  // (B,H,T,T) @ (B,H,T,D)
  const Tensor chunked = kind->attend(q, k, v, {.causal = true});                 // chunks of kWaysChunk
  std::unique_ptr<nn::AttentionState> state = kind->start();
  std::vector<Tensor> steps;
  ThreeWays ways;
  for (int64_t t = 0; t < kWaysLength; ++t) {  // one position at a time, as generation feeds them
    steps.push_back(kind->step(narrow(q, 2, t, 1), narrow(k, 2, t, 1), narrow(v, 2, t, 1), *state));
    const int64_t floats = dynamic_cast<const nn::DeltaState&>(*state).memory.numel();
    ways.state_fixed = ways.state_fixed && (t == 0 || floats == ways.state_floats);
    ways.state_floats = floats;
  }
  const Tensor recurrent = concat(steps, 2);
  ways.chunked = amax(abs(chunked - naive)).item(), ways.recurrent = amax(abs(recurrent - naive)).item();
  return ways;
}

void print_three_ways(harness::Summary& summary, Generator& gen) {
  std::printf("\n== 2. One layer three ways: B=1, H=2, T=%lld, heads of %lld, chunks of %lld ==\n"
              "  %-12s %22s %22s %14s\n", static_cast<long long>(kWaysLength), static_cast<long long>(kWaysDim),
              static_cast<long long>(kWaysChunk), "kind", "chunked - naive", "recurrent - naive", "state floats");
  bool fixed = true;
  for (const auto& [name, settings] : {std::pair{std::string(nn::DeltaAttention::kName), nn::delta_attention_settings(kWaysChunk)},
                                       std::pair{std::string(nn::GatedDeltaAttention::kName),
                                                 nn::gated_delta_attention_settings(kWaysChunk)}}) {
    const ThreeWays ways = three_ways(settings, gen);
    fixed = fixed && ways.state_fixed;
    std::printf("  %-12s %22.2e %22.2e %14lld\n", name.c_str(), ways.chunked, ways.recurrent,
                static_cast<long long>(ways.state_floats));
    summary.report("chunked_vs_naive_" + name, ways.chunked, "part 2: largest difference, chunked against the naive recurrence");
    summary.report("recurrent_vs_naive_" + name, ways.recurrent, "part 2: the same for one position at a time");
  }
  std::printf(fixed ? "  the state after every position: (B,H,D,D), the same size whatever the length\n"
                    : "  the state grew from one position to the next\n");
}

// Full attention's n^2 at 32k would take minutes: it stops at 8192. The linear kinds work in chunks of 64.
const std::vector<lessons::CostKind> kCostKinds = {
    {nn::FullAttention::kName, "softmax (fused)", "KV cache", nn::full_attention(), 8192},
    {nn::LinearAttention::kName, "elu+1", "sum state", nn::linear_attention_settings(nn::EluFeatures::kName)},
    {nn::DeltaAttention::kName, "delta rule", "delta state", nn::delta_attention_settings()},
    {nn::GatedDeltaAttention::kName, "gated delta rule", "gated state", nn::gated_delta_attention_settings()}};

// ---- 3. recall against the state ----

struct RecallSettings {
  std::vector<int64_t> pairs{16, 64}, head_dims{16, 32, 64};
  int64_t heads = 1, steps = 400, batch = 32;  // a model heads x D wide at each width D, as Zoology's grow
  float lr = 3e-3f;
};

// The kinds compared, each causal (every query comes after its pair).
std::vector<lessons::Contender> recall_kinds() {
  return {{nn::FullAttention::kName, nn::full_attention(), true},
          {"linear_elu", nn::linear_attention_settings(nn::EluFeatures::kName), true},
          {"linear_taylor", nn::linear_attention_settings(nn::TaylorFeatures::kName), true},
          {nn::DeltaAttention::kName, nn::delta_attention_settings(), true},
          {nn::GatedDeltaAttention::kName, nn::gated_delta_attention_settings(), true}};
}

// Lesson 15's recall at `pairs` pairs, one token each, each pair asked.
data::MqarOptions recall_options(int64_t pairs, int64_t most_pairs, uint64_t seed) {
  return {.pairs = pairs, .queries = pairs, .keys = std::max<int64_t>(64, most_pairs), .values = 16,
          .length = std::max<int64_t>(3 * pairs, 64), .one_hop = true, .train = 5000, .val = 200, .test = 500, .seed = seed};
}

// The loop of lesson 15: AdamW (no decay on biases, norms and embeddings), a warmup then a cosine
// decay, the gradient clipped to norm 1, a batch of the training set each step; the test accuracy.
models::Predictions train_recall(harness::Run& run, models::EncoderTagger& model, const lessons::LongRangeTask& task,
                                 const std::string& name, const RecallSettings& s, uint64_t seed) {
  optim::AdamW adamw(optim::decay_groups(model.named_parameters(), 0.01f), {.lr = s.lr});
  const optim::Schedule schedule = harness::ScheduleFlags{.warmup = s.steps / 10}.schedule(s.lr, s.steps);
  harness::Tracker tracker = lessons::classifier_tracker(run, s.steps, s.batch, name, cat("train_", name, ".csv"));
  Generator batches(seed + 2);  // the same batches for every kind
  model.train();
  for (int64_t step = tracker.resume({model, adamw, {&batches}}); step <= s.steps; ++step) {
    adamw.set_lr(schedule(step - 1));
    const data::LabelledBatch batch = data::sample_examples(task.train, s.batch, batches);
    tracker.step(step, optim::train_step(model, adamw, batch, 1.0f), adamw.lr());
    if (tracker.evaluation_due(step)) {
      const models::Predictions answers = models::predict(model, task.val, s.batch);
      tracker.evaluated(step, {answers.loss, answers.accuracy});
    }
  }
  tracker.finish();
  return models::predict(model, task.test, s.batch);
}

// The widest recall model on the longest sequences, with full attention's scores.
harness::MemoryEstimate recall_memory(const RecallSettings& s) {
  const int64_t most = *std::max_element(s.pairs.begin(), s.pairs.end());
  const int64_t widest = *std::max_element(s.head_dims.begin(), s.head_dims.end());
  const data::MqarOptions o = recall_options(most, most, 0);
  return lessons::encoder_memory({o.train + o.val + o.test, o.length, s.batch, s.heads * widest, 1, s.heads, o.length, "--recall-batch"},
                                 cat("--recall-pairs ", most), cat("--head-dims ", widest, ", --recall-heads ", s.heads));
}

// Every kind at every head width D (a model heads x D wide) and count of pairs, one encoder block. Full
// attention, the reference that reads every pair, runs at the narrowest width only; a kind whose
// state outgrows its KV cache at the longest sequence is not run at that width: it would save
// nothing (the Taylor map beyond heads of 16).
std::vector<lessons::RecallPoint> recall_against_state(harness::Run& run, const RecallSettings& s, uint64_t seed) {
  const int64_t most = *std::max_element(s.pairs.begin(), s.pairs.end());
  const int64_t longest = recall_options(most, most, seed).length;
  std::printf("\n== 3. Recall against the state: one block, %lld head%s of D = ", static_cast<long long>(s.heads),
              s.heads == 1 ? "" : "s");
  for (const int64_t d : s.head_dims) std::printf("%lld%s", static_cast<long long>(d), d == s.head_dims.back() ? "" : ", ");
  std::printf(", %lld steps of %lld sequences ==\n", static_cast<long long>(s.steps), static_cast<long long>(s.batch));
  std::vector<lessons::RecallPoint> points;
  for (const lessons::Contender& c : recall_kinds()) {
    const nn::KindDescription& kind = nn::registered_kind(c.attention->kind);
    for (const int64_t d : s.head_dims) {
      if (c.name == nn::FullAttention::kName && d != s.head_dims.front()) continue;
      if (c.name != nn::FullAttention::kName && kind.state_numbers(*c.attention, longest, d, true) > 2 * longest * d) {
        std::printf("   %s with heads of %lld: not run, its state (%lld numbers) is more than full attention's cache\n",
                    c.name.c_str(), static_cast<long long>(d),
                    static_cast<long long>(kind.state_numbers(*c.attention, longest, d, true)));
        continue;
      }
      for (const int64_t pairs : s.pairs) {
        const data::MqarOptions o = recall_options(pairs, most, seed);
        const lessons::LongRangeTask task = lessons::recall_task(o, cat("recall_", pairs), cat("recall, ", pairs, " pairs"));
        Generator init(seed + 3);
        models::EncoderTagger model(lessons::encoder_config(c, task, {s.heads * d, 1, s.heads}), init);
        const models::Predictions test = train_recall(run, model, task, cat(c.name, "_", d, "_", pairs), s, seed);
        points.push_back({c.name, d, pairs, kind.state_numbers(*c.attention, o.length, d, true), test.accuracy,
                          static_cast<int64_t>(test.classes.size())});
      }
    }
  }
  return points;
}

// ---- 4. character GPTs with each kind ----

const std::vector<lessons::AttentionVariant> kGPTKinds = {
    {nn::FullAttention::kName, nn::FullAttention::kLabel, nn::full_attention()},
    {"linear_elu", "linear elu+1", nn::linear_attention_settings(nn::EluFeatures::kName)},
    {nn::DeltaAttention::kName, "delta rule", nn::delta_attention_settings()},
    {nn::GatedDeltaAttention::kName, "gated delta rule", nn::gated_delta_attention_settings()}};

// One GPT per kind, each from the same initial weights on the same batches: lesson 12's loop.
lessons::GPTComparison train_per_kind(harness::Run& run, const harness::CommonFlags& flags, const data::CharCorpus& corpus,
                                      models::GPTConfig gpt, const lessons::GPTTraining& training) {
  std::printf("\n== 4. Character GPTs: full attention, elu+1, delta and gated delta, same text and budget ==\n");
  lessons::print_compared_gpts(gpt, flags, corpus);
  lessons::GPTComparison comparison;
  for (const lessons::AttentionVariant& kind : kGPTKinds) {
    std::printf("-- %s\n", kind.label.c_str());
    gpt.attention = kind.attention;
    Generator init(flags.seed);
    models::GPT model(gpt, init);
    optim::AdamW adamw = training.optimizer(model, flags.lr);
    const optim::Schedule lr = training.schedule.schedule(flags.lr, flags.steps);
    const data::TrainingBatches batches_of(corpus, gpt.block_size);
    Generator batches(flags.seed + 1);  // the same batches for every kind
    harness::Tracker tracker = training.tracker(run, flags, gpt.block_size, "gpt_" + kind.name + ".csv", kind.label);
    model.train();
    for (int64_t step = tracker.resume({model, adamw, {&batches}}); step <= flags.steps; ++step) {
      adamw.set_lr(lr(step - 1));
      const data::Batch batch = batches_of.sample(flags.batch, batches);  // x, y (B,T)
      tracker.step(step, optim::train_step(model, adamw, batch, training.clip), adamw.lr());
      if (tracker.evaluation_due(step)) tracker.evaluated(step, lessons::validation_figures(model, corpus));
    }
    tracker.finish();
    comparison.add(kind, tracker);
  }
  comparison.report(run);
  return comparison;
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli(kLesson,
                           "Lesson 17: the delta rule, linear attention that can overwrite. Pairs written into one state "
                           "and read back; one layer three ways and its cost against length; recall against the state's "
                           "size; character GPTs with full, elu+1, delta and gated delta attention.",
                           {.steps = 600, .lr = 2e-3f, .batch = 12});
    harness::TextFlags text;
    cli.text_options(text, "/usr/share/common-licenses", /*default_lines=*/false);
    lessons::MemorySettings memory;
    RecallSettings recall;
    models::GPTConfig gpt = lessons::compared_gpt();
    lessons::GPTTraining training = lessons::compared_gpt_training();
    int64_t max_n = 32768;
    cli.option("--dim", memory.dim, "part 1: numbers per key and value (the state holds dim x dim)", {4, 256});
    cli.option("--most-pairs", memory.most_pairs, "part 1: the most pairs written (from 4, in steps of 4)", {8, 1024});
    lessons::add_max_n_option(cli, max_n, "part 2: ");
    cli.option("--recall-pairs", recall.pairs, "part 3: the counts of pairs, separated by commas", {1, 1024});
    cli.option("--head-dims", recall.head_dims, "part 3: the head widths D, separated by commas", {2, 128});
    cli.option("--recall-heads", recall.heads, "part 3: heads of every recall model (heads x D wide)", {1, 8});
    cli.option("--recall-steps", recall.steps, "part 3: training steps of each recall model", {10, 100000});
    cli.option("--recall-batch", recall.batch, "part 3: sequences in each step's batch", {1, 1024});
    lessons::add_gpt_shape_options(cli, gpt, "part 4: ");
    training.add_to(cli);
    harness::PartFlag part(cli, 4);
    cli.parse(argc, argv);
    if (cli.common.quick) {  // a smoke test of every part: tiny sizes, a few steps, but what the command line sets
      const auto tiny = [&](const char* flag, auto& value, auto small) {
        if (!cli.given(flag)) value = small;
      };
      tiny("--most-pairs", memory.most_pairs, int64_t{16}), tiny("--max-n", max_n, int64_t{512});
      tiny("--recall-pairs", recall.pairs, std::vector<int64_t>{4}), tiny("--head-dims", recall.head_dims, std::vector<int64_t>{8});
      tiny("--recall-steps", recall.steps, int64_t{10});
      tiny("--recall-batch", recall.batch, int64_t{8});
      memory.draws = 1, memory.sweeps = 2;
    }
    harness::check_memory(kLesson, recall_memory(recall));
    training.settle(kLesson, cli.common);
    const data::CharCorpus corpus = lessons::load_char_corpus(kLesson, cli.common, text, gpt.block_size, cli.given("--context"));
    gpt.vocab_size = corpus.tokenizer.vocab_size();
    harness::check_memory(kLesson, lessons::gpt_training_memory(gpt, cli.common.batch, lessons::gpt_flags_text(gpt)));
    harness::Run run(cli);
    harness::Summary summary{nlohmann::ordered_json::object(), {}};
    Generator gen(cli.common.seed);

    if (part.runs(1)) lessons::state_as_memory(run, memory, gen, summary);
    if (part.runs(2)) {
      print_three_ways(summary, gen);
      std::printf("\n  cost against length: one causal layer, B=1 H=4 D=64\n");
      lessons::add_cost_metrics(summary.metrics, summary.notes, lessons::cost_against_length(run, kCostKinds, max_n, gen),
                                kCostKinds, "part 2: ");
    }
    if (part.runs(3)) {
      const std::vector<lessons::RecallPoint> points = recall_against_state(run, recall, cli.common.seed);
      lessons::report_recall_state(run, points, data::mqar_chance(recall_options(4, 4, 0)), summary);
    }
    if (part.runs(4)) train_per_kind(run, cli.common, corpus, gpt, training).add_metrics(summary.metrics, summary.notes, "part 4: ");
    run.finish(summary.metrics, summary.notes,
               "docs/17_delta_rule.md, section 1 (The state as a memory); then exercise 1: --dim 16 and --most-pairs 64");
  });
}
