// Lesson 14: Transformer-VQ, softmax attention in linear time through vector-quantised keys.
//
//  1. Exact where it matters: one VQ layer on a small input, its output computed quadratically,
//     softmax(Q Khat^T + causal mask) V, and block by block with the per-code cache of older
//     blocks, side by side, gradients too; which keys each query reads exactly and which through
//     the codes; its attention matrix beside full attention's for the same q, k and v;
//  2. time and peak memory of one causal layer (forward + backward) against the length n, and the
//     time of a generated token against the context: full attention's KV cache, linear attention's
//     fixed sum and Transformer-VQ's per-code cache, its gradient through the cache exact or stopped;
//  3. character GPTs with full, linear (elu+1) and VQ attention on the same text and budget, VQ as
//     the paper builds it and with its parts taken away (plain, + norm, + norm + position bias, the
//     gradient stopped at the cache), each trained by the loop in train_per_kind: a perplexity table
//     and curves, the two gradient modes side by side; the VQ model's codebook over training (the
//     codes its keys take, its perplexity), its counts at the end, the quantisation error of the
//     keys, and keys and codes of one head in 2-D (lessons/14_transformer_vq/codebook.h); the position bias
//     it learned against the offset (lessons/14_transformer_vq/position_bias.h).
// The op is core/ops.h (vq_attention and its naive twin), the codebook nn/vector_quantizer.h, the
// attention kind nn/attention/vq_attention.h; the note that goes with it: docs/14_transformer_vq.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <utility>
#include <nlohmann/json.hpp>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/batcher.h"
#include "lessons/attention_kinds/layer_cost.h"
#include "lessons/char_gpt/char_gpt.h"
#include "harness/cli.h"
#include "lessons/attention_kinds/gpt_comparison.h"
#include "lessons/memory/model_memory.h"
#include "harness/part_flag.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "lessons/14_transformer_vq/codebook.h"
#include "lessons/14_transformer_vq/position_bias.h"
#include "models/gpt.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_workload.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/vq_attention.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "14_transformer_vq";
// Part 3: training steps of each of the six GPTs.
constexpr int64_t kDefaultSteps = 1200;
// Part 1: the head size and the codebook of the small layer.
constexpr int64_t kDim = 8, kSmallCodes = 6;

// ---- 1. exact where it matters ----

struct SmallLayer {
  double output_difference = 0;    // block-wise against quadratic, largest over every output
  double gradient_difference = 0;  // the same over dq, dkhat and dv
  double exact_codebook_difference = 0;  // with a codebook of every key: VQ against full attention
};

// Where query i reads key j from: 0 not at all (the future), 1 exactly in its own block, 2 exactly
// in the block before, 3 through the per-code cache of the older blocks.
int region(int64_t i, int64_t j, int64_t block) {
  if (j > i) return 0;
  if (j / block == i / block) return 1;
  return j / block == i / block - 1 ? 2 : 3;
}

std::vector<std::vector<double>> rows_of(const Tensor& weights) {  // (1,1,T,S) -> [T][S]
  const int64_t T = weights.size(2), S = weights.size(3);
  std::vector<std::vector<double>> out;
  for (int64_t i = 0; i < T; ++i) out.emplace_back(weights.data() + i * S, weights.data() + (i + 1) * S);
  return out;
}

double largest_difference(const Tensor& a, const Tensor& b) { return amax(abs(a - b)).item(); }

SmallLayer exact_where_it_matters(harness::Run& run, int64_t length, int64_t block, Generator& gen) {
  std::printf("== 1. Exact where it matters: one VQ layer, T = %lld, block L = %lld, %lld codes of width %lld ==\n",
              static_cast<long long>(length), static_cast<long long>(block), static_cast<long long>(kSmallCodes),
              static_cast<long long>(kDim));
  const Tensor codebook = randn({1, kSmallCodes, kDim}, gen);  // (H,S,D)
  const Tensor keys = randn({1, 1, length, kDim}, gen);        // (B,H,T,D)
  const CodeAssignment assigned = nearest_codes(keys, codebook);
  const std::vector<int64_t>& code_index = assigned.indices;  // (B,H,T)
  // Queries twice as long as the keys, so that each row singles out a few keys and the maps have contrast.
  Tensor q = 2.0f * randn(keys.shape(), gen), v = randn(keys.shape(), gen);
  Tensor khat = gather_codes(codebook, code_index, {1, 1, length});  // each key's code
  for (Tensor* x : {&q, &khat, &v}) x->requires_grad_();
  const VQAttentionOptions options{.block = block};
  const Tensor grad_out = randn(keys.shape(), gen);

  // The same function twice: through the (T,T) weights, and block by block with the cache.
  const Tensor quadratic = vq_attention_naive(q, khat, code_index, codebook, v, options);
  quadratic.backward(grad_out);
  const std::vector<Tensor> quadratic_grads = {q.grad(), khat.grad(), v.grad()};
  for (Tensor* x : {&q, &khat, &v}) x->zero_grad();
  const Tensor blockwise = vq_attention(q, khat, code_index, codebook, v, options);
  blockwise.backward(grad_out);
  const std::vector<Tensor> blockwise_grads = {q.grad(), khat.grad(), v.grad()};

  SmallLayer result;
  result.output_difference = largest_difference(blockwise, quadratic);
  for (size_t g = 0; g < 3; ++g)
    result.gradient_difference =
        std::max(result.gradient_difference, largest_difference(blockwise_grads[g], quadratic_grads[g]));
  std::printf("  output, first feature:\n  %8s %6s %5s %12s %12s %12s %12s\n", "position", "block", "code", "quadratic",
              "block-wise", "keys exact", "keys coded");
  for (int64_t i = 0; i < length; ++i) {
    const int64_t coded = std::max<int64_t>(0, (i / block - 1) * block);  // blocks 0 .. n-2
    std::printf("  %8lld %6lld %5lld %12.6f %12.6f %12lld %12lld\n", static_cast<long long>(i),
                static_cast<long long>(i / block), static_cast<long long>(code_index[static_cast<size_t>(i)]),
                quadratic.data()[i * kDim], blockwise.data()[i * kDim], static_cast<long long>(i + 1 - coded),
                static_cast<long long>(coded));
  }
  std::printf("  largest difference, block-wise - quadratic: outputs %.2e, gradients of q, khat and v %.2e\n",
              result.output_difference, result.gradient_difference);
  std::printf("  where each query reads its keys (row: query, column: key): o its own block, p the block before,\n"
              "  c through the codes' counts and value sums, . the future\n");
  for (int64_t i = 0; i < length; ++i) {
    std::printf("  %4lld  ", static_cast<long long>(i));
    for (int64_t j = 0; j < length; ++j) std::printf("%c", ".opc"[region(i, j, block)]);
    std::printf("\n");
  }

  // A codebook that holds every key exactly (S = T, code t = key t): VQ attention is full attention.
  NoGradGuard no_grad;
  const std::shared_ptr<nn::AttentionKind> full = nn::make_attention(nn::full_attention());
  std::vector<int64_t> every(static_cast<size_t>(length));
  std::iota(every.begin(), every.end(), 0);
  const Tensor raw_keys = keys.detach();
  result.exact_codebook_difference =
      largest_difference(vq_attention(q.detach(), raw_keys, every, reshape(raw_keys, {1, length, kDim}), v.detach(), options),
                         full->attend(q.detach(), raw_keys, v.detach(), {.causal = true}));
  std::printf("  with a codebook of the %lld keys themselves (nothing rounded): VQ - full attention %.2e\n",
              static_cast<long long>(length), result.exact_codebook_difference);

  // The maps: full attention on the raw keys, VQ attention on their codes; where VQ reads from.
  const Tensor full_weights = full->implied_weights(q.detach(), raw_keys, {.causal = true});  // (1,1,T,T)
  const Tensor vq_weights = vq_attention_weights(q.detach(), khat.detach(), code_index, codebook, options);
  plot::Heatmap maps{"Full attention (raw keys) | VQ attention (keys rounded to 6 codes)", "keys", "queries",
                        "attention weight", plot::tile({rows_of(full_weights), rows_of(vq_weights)}, 2)};
  maps.scale_min = 0, maps.scale_max = 1;  // one scale for both; the frame between them is drawn at 1
  run.wrote(plot::save_heatmap(run.path("attention_full_vs_vq"), maps));
  plot::Heatmap regions{"Where VQ attention reads each key: 1 own block, 2 block before, 3 through the codes",
                           "key: position:code", "query", "0 future, 1 own block, 2 block before, 3 codes"};
  for (int64_t i = 0; i < length; ++i) {
    regions.values.emplace_back();
    for (int64_t j = 0; j < length; ++j) regions.values.back().push_back(region(i, j, block));
    regions.row_labels.push_back(std::to_string(i));
    regions.col_labels.push_back(std::to_string(i) + ":" + std::to_string(code_index[static_cast<size_t>(i)]));
  }
  run.wrote(plot::save_heatmap(run.path("vq_regions"), regions));
  return result;
}

// ---- 2. cost against length (lessons/attention_kinds/layer_cost.h) ----

// VQ with the paper's codebook of 512 codes per head, in blocks of kCostBlock positions.
constexpr int64_t kCostCodes = 512, kCostBlock = 256;
// The name of the VQ variant whose gradient stops at the cache of older blocks, in parts 2 and 3.
constexpr const char* kStopped = "vq_stopped";

nn::AttentionSettings stopped_at_cache(nn::AttentionSettings vq) {
  vq.kind.as<nn::VQAttention::Settings>().cache_gradient = nn::VQAttention::kStopped;
  return vq;
}

std::vector<lessons::CostKind> cost_kinds() {
  const nn::AttentionSettings vq = nn::vq_attention_settings(kCostBlock, kCostCodes);
  return {{nn::FullAttention::kName, "softmax (full, fused)", "KV cache", nn::full_attention()},
          {nn::LinearAttention::kName, "linear elu+1 (chunk 64)", "state",
           nn::linear_attention_settings(nn::EluFeatures::kName)},
          {nn::VQAttention::kName, "Transformer-VQ (L=256, S=512)", "VQ cache", vq},
          {kStopped, "VQ, gradient stopped at the cache", "VQ cache", stopped_at_cache(vq)}};
}

lessons::Costs cost_against_length(harness::Run& run, int64_t max_n, Generator& gen) {
  std::printf("\n== 2. Cost against length: one causal layer, B=1 H=%lld D=%lld ==\n",
              static_cast<long long>(nn::kWorkloadHeads), static_cast<long long>(nn::kWorkloadHeadDim));
  return lessons::cost_against_length(run, cost_kinds(), max_n, gen);
}

// ---- 3. character GPTs with full, linear and VQ attention ----

// The VQ GPT's codebook and blocks as flags.
struct VQFlags {
  int64_t codes = 64, block = 16;

  void add_to(harness::LessonCli& cli) {
    cli.option("--codes", codes, "part 3: codes per head of the VQ GPT's codebooks (S)", {1, 4096});
    cli.option("--attention-block", block, "part 3: positions per block of the VQ GPT (L)", {1, 1024});
  }
  // Refuses blocks so long that no query of a window of `context` reads the per-code cache; with
  // --lines and no --attention-block, the default block shrinks to the longest that leaves 3 blocks
  // (short lines make a short context). After the corpus is read.
  void settle(int64_t context, bool lines, bool block_given) {
    const int64_t longest = (context - 1) / 2;  // the longest that leaves 3 blocks in a window
    if (lines && !block_given && block > longest && longest >= 1) {
      block = longest;
      std::printf("--attention-block %lld: the lines' context of %lld holds 3 blocks of it\n", static_cast<long long>(block),
                  static_cast<long long>(context));
    }
    if (block > longest)
      fail(kLesson, "--attention-block ", block, " cuts --context ", context, " into fewer than 3 blocks, so no query ever "
           "reads the per-code cache of older blocks; ", longest >= 1 ? cat("give --attention-block ", longest, " or less, or ") : "give ",
           "--context ", 2 * block + 1, " or more");
  }
};

// Full and linear attention, then VQ part by part: plain (keys rounded as they come), + norm (q and
// k normalised), the paper's form (+ the position bias), and that form with the gradient stopped at the cache.
std::vector<lessons::AttentionVariant> gpt_kinds(const VQFlags& vq) {
  const nn::AttentionSettings paper = nn::vq_attention_settings(vq.block, vq.codes);
  nn::AttentionSettings plain = paper, normalised = paper;
  plain.kind.as<nn::VQAttention::Settings>().normalise = false;
  plain.kind.as<nn::VQAttention::Settings>().position_bias = false;
  normalised.kind.as<nn::VQAttention::Settings>().position_bias = false;
  return {{nn::FullAttention::kName, "softmax (full)", nn::full_attention()},
          {nn::LinearAttention::kName, "linear elu+1", nn::linear_attention_settings(nn::EluFeatures::kName)},
          {"vq_plain", "VQ plain", plain},
          {"vq_norm", "VQ + norm", normalised},
          {nn::VQAttention::kName, "VQ + norm + bias (paper)", paper},
          {kStopped, "VQ paper, grad stopped", stopped_at_cache(paper)}};
}

struct TrainedGPTs {
  lessons::GPTComparison comparison;
  lessons::CodebookSummary codebook;  // the VQ model's
};

// The six GPTs, each from the same initial weights on the same batches for the same steps: lesson
// 11's loop, in each kind's gpt_NAME.csv. At every evaluation the paper's VQ model's codebooks are
// recorded (lessons/14_transformer_vq/codebook.h), and reported once it is trained, with its position bias.
TrainedGPTs train_per_kind(harness::Run& run, const harness::CommonFlags& flags, const data::CharCorpus& corpus,
                           models::GPTConfig gpt, const lessons::GPTTraining& training, const VQFlags& vq) {
  std::printf("\n== 3. Character GPTs: full, linear and VQ attention part by part, same text and budget ==\n");
  lessons::print_compared_gpts(gpt, flags, corpus);
  TrainedGPTs trained;
  lessons::CodebookHistory history{.sample = lessons::validation_sample(corpus, gpt.block_size, 8)};
  for (const lessons::AttentionVariant& kind : gpt_kinds(vq)) {
    const bool followed = kind.name == nn::VQAttention::kName;  // the paper's VQ: its codebooks and bias
    std::printf("-- %s\n", kind.label.c_str());
    gpt.attention = kind.attention;
    Generator init(flags.seed);
    models::GPT model(gpt, init);
    optim::AdamW adamw = training.optimizer(model, flags.lr);
    const optim::Schedule lr = training.schedule.schedule(flags.lr, flags.steps);
    const data::TrainingBatches batches_of(corpus, gpt.block_size);  // windows, or with --lines whole lines
    Generator batches(flags.seed + 1);  // the same batches for every kind
    harness::Tracker tracker = training.tracker(run, flags, gpt.block_size, "gpt_" + kind.name + ".csv", kind.label);
    model.train();
    for (int64_t step = tracker.resume({model, adamw, {&batches}, lessons::codebook_carried(history)}); step <= flags.steps; ++step) {
      adamw.set_lr(lr(step - 1));
      const data::Batch batch = batches_of.sample(flags.batch, batches);  // x, y (B,T)
      tracker.step(step, optim::train_step(model, adamw, batch, training.clip), adamw.lr());
      if (!tracker.evaluation_due(step)) continue;
      const std::vector<double> figures = lessons::validation_figures(model, corpus);
      if (followed) lessons::record_codebooks(model, step, history);  // before the checkpoint, which keeps the history
      tracker.evaluated(step, figures);
    }
    tracker.finish();
    trained.comparison.add(kind, tracker);
    if (!followed) continue;
    trained.codebook = lessons::codebook_report(run, model, history);
    lessons::position_bias_report(run, model, history.sample);
  }
  trained.comparison.report(run);
  return trained;
}

// The gradient through the cache, exact (the keys and values of older blocks learn from every query
// that reads their codes) or stopped there: part 2's layer at its longest n beside part 3's GPTs.
void gradient_modes(const lessons::Costs& costs, const lessons::GPTComparison& gpts) {
  std::printf("\n  the gradient through the cache: one layer at n = %lld (part 2), the GPT (part 3)\n",
              static_cast<long long>(costs.max_n.at(nn::VQAttention::kName)));
  std::printf("  %-10s %12s %12s %14s %16s\n", "gradient", "layer ms", "layer MiB", "GPT seconds", "validation ppl");
  for (const auto& [mode, name] : {std::pair{"exact", nn::VQAttention::kName}, std::pair{"stopped", kStopped}}) {
    const lessons::LayerCost& layer = costs.at_max.at(name);
    const lessons::GPTComparison::Result gpt = gpts.result(name);
    std::printf("  %-10s %12.2f %12.1f %14.1f %16.2f\n", mode, layer.ms,
                static_cast<double>(layer.peak_bytes) / (1 << 20), gpt.seconds, gpt.perplexity);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli(kLesson,
                           "Lesson 14: Transformer-VQ. One VQ layer computed quadratically and block by block, its "
                           "attention beside full attention's; time and memory against length, and per generated token, "
                           "for full, linear and VQ attention; character GPTs with each on the same text and budget, "
                           "and the VQ model's codebook.",
                           {.steps = kDefaultSteps, .lr = 2e-3f, .batch = 12});
    harness::TextFlags text;
    cli.text_options(text, "/usr/share/common-licenses", /*default_lines=*/false);
    models::GPTConfig gpt = lessons::compared_gpt();
    lessons::GPTTraining training = lessons::compared_gpt_training();
    int64_t length = 16, small_block = 4, max_n = 16384;
    VQFlags vq;
    cli.option("--length", length, "part 1: positions of the small layer", {2, 64});
    cli.option("--small-block", small_block, "part 1: positions per block L of the small layer", {1, 64});
    lessons::add_max_n_option(cli, max_n, "part 2: ");
    lessons::add_gpt_shape_options(cli, gpt, "part 3: ");
    vq.add_to(cli);
    training.add_to(cli);
    harness::PartFlag part(cli, 3);
    cli.parse(argc, argv);
    training.settle(kLesson, cli.common);
    const data::CharCorpus corpus = lessons::load_char_corpus(kLesson, cli.common, text, gpt.block_size, cli.given("--context"));
    gpt.vocab_size = corpus.tokenizer.vocab_size();
    vq.settle(gpt.block_size, corpus.lines, cli.given("--attention-block"));
    harness::check_memory(kLesson, lessons::gpt_training_memory(gpt, cli.common.batch, lessons::gpt_flags_text(gpt)));
    if (cli.common.quick) max_n = std::min<int64_t>(max_n, 512);
    harness::Run run(cli);
    Generator gen(cli.common.seed);

    nlohmann::ordered_json metrics;
    harness::MetricNotes notes;
    if (part.runs(1)) {
      const SmallLayer small = exact_where_it_matters(run, length, small_block, gen);
      metrics = {{"blockwise_vs_quadratic", small.output_difference},
                 {"blockwise_vs_quadratic_grad", small.gradient_difference},
                 {"exact_codebook_vs_full", small.exact_codebook_difference}};
      notes = {{"blockwise_vs_quadratic", "part 1: largest difference, block-wise VQ attention against the (T,T) weights @ v"},
               {"blockwise_vs_quadratic_grad", "part 1: the same for the gradients of q, khat and v"},
               {"exact_codebook_vs_full", "part 1: VQ attention with a codebook of every key against full attention"}};
    }
    const lessons::Costs costs = part.runs(2) ? cost_against_length(run, max_n, gen) : lessons::Costs{};
    if (part.runs(2)) lessons::add_cost_metrics(metrics, notes, costs, cost_kinds(), "part 2: ");
    if (part.runs(3)) {
      const TrainedGPTs gpts = train_per_kind(run, cli.common, corpus, gpt, training, vq);
      if (part.all()) gradient_modes(costs, gpts.comparison);  // part 2's layer beside part 3's GPTs
      gpts.comparison.add_metrics(metrics, notes, "part 3: ");
      lessons::add_codebook_metrics(gpts.codebook, metrics, notes, "part 3: ");
    }
    run.finish(metrics, notes,
               "docs/14_transformer_vq.md, section 2 (Why rounded keys make attention linear); then exercise 1:\n"
               "      --small-block 1 and --small-block 16, and compare the columns");
  });
}
