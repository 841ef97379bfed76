// Lesson 14: Transformer-VQ, softmax attention in linear time through vector-quantised keys.
//
//  1. Exact where it matters: one VQ layer on a small input, its output computed quadratically,
//     softmax(Q Khat^T + causal mask) V, and block by block with the per-code cache of older
//     blocks, side by side, gradients too; which keys each query reads exactly and which through
//     the codes; its attention matrix beside full attention's for the same q, k and v;
//  2. time and peak memory of one causal layer (forward + backward) against the length n, and the
//     time of a generated token against the context: full attention's KV cache, linear attention's
//     fixed sum and Transformer-VQ's per-code cache;
//  3. character GPTs with full, linear (elu+1) and VQ attention on the same text and budget: a
//     perplexity table and curves; the VQ model's codebook over training (the codes its keys
//     take, its perplexity), its counts at the end, the quantisation error of the keys, and
//     keys and codes of one head in 2-D.
// The op is core/ops.h (vq_attention and its naive twin), the codebook nn/vector_quantizer.h, the
// attention kind nn/attention/vq_attention.h; the note that goes with it: docs/14_transformer_vq.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <nlohmann/json.hpp>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "lessons/common/attention_cost.h"
#include "lessons/common/char_gpt.h"
#include "lessons/common/cli.h"
#include "lessons/common/gpt_comparison.h"
#include "lessons/common/plot.h"
#include "lessons/common/run.h"
#include "models/gpt.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_workload.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/vq_attention.h"
#include "nn/vector_quantizer.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "14_transformer_vq";
// Part 3: training steps of each of the three GPTs (about 40 seconds on an idle 2-core machine).
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

SmallLayer exact_where_it_matters(lessons::Run& run, int64_t length, int64_t block, Generator& gen) {
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
  lessons::Heatmap maps{"Full attention (raw keys) | VQ attention (keys rounded to 6 codes)", "keys", "queries",
                        "attention weight", lessons::tile({rows_of(full_weights), rows_of(vq_weights)}, 2, 1.0)};
  maps.scale_min = 0, maps.scale_max = 1;  // one scale for both; the frame between them is drawn at 1
  run.wrote(lessons::save_heatmap(run.path("attention_full_vs_vq"), maps));
  lessons::Heatmap regions{"Where VQ attention reads each key: 1 own block, 2 block before, 3 through the codes",
                           "key: position:code", "query", "0 future, 1 own block, 2 block before, 3 codes"};
  for (int64_t i = 0; i < length; ++i) {
    regions.values.emplace_back();
    for (int64_t j = 0; j < length; ++j) regions.values.back().push_back(region(i, j, block));
    regions.row_labels.push_back(std::to_string(i));
    regions.col_labels.push_back(std::to_string(i) + ":" + std::to_string(code_index[static_cast<size_t>(i)]));
  }
  run.wrote(lessons::save_heatmap(run.path("vq_regions"), regions));
  return result;
}

// ---- 2. cost against length (lessons/common/attention_cost.h) ----

// VQ with the paper's codebook of 512 codes per head, in blocks of kCostBlock positions.
constexpr int64_t kCostCodes = 512, kCostBlock = 256;

std::vector<lessons::CostKind> cost_kinds() {
  return {{nn::FullAttention::kName, "softmax (full, fused)", "KV cache", nn::full_attention()},
          {nn::LinearAttention::kName, "linear elu+1 (chunk 64)", "state",
           nn::linear_attention_settings(nn::EluFeatures::kName)},
          {nn::VQAttention::kName, "Transformer-VQ (L=256, S=512)", "VQ cache", nn::vq_attention_settings(kCostBlock, kCostCodes)}};
}

lessons::Costs cost_against_length(lessons::Run& run, int64_t max_n, Generator& gen) {
  std::printf("\n== 2. Cost against length: one causal layer, B=1 H=%lld D=%lld ==\n",
              static_cast<long long>(nn::kWorkloadHeads), static_cast<long long>(nn::kWorkloadHeadDim));
  return lessons::cost_against_length(run, cost_kinds(), max_n, gen);
}

// ---- 3. the VQ model's codebook ----

// The keys (B,H,T,D) that every block's attention quantises for ids (B,T), one per block, as the
// model's forward hands them back.
std::vector<Tensor> keys_of(models::GPT& model, const Tensor& ids) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  std::vector<Tensor> keys;
  for (const nn::AttentionHeads& heads : model.forward_with_heads(ids).heads) keys.push_back(heads.k);
  return keys;
}

// The two directions along which the rows of `points` (N,d) spread most, and their mean: the
// first two principal components, by power iteration on the covariance, the first taken out of it
// before the second is found.
struct Projection {
  std::vector<double> mean, first, second;
  std::pair<double, double> operator()(const float* row) const {
    double a = 0, b = 0;
    for (size_t c = 0; c < mean.size(); ++c) a += (row[c] - mean[c]) * first[c], b += (row[c] - mean[c]) * second[c];
    return {a, b};
  }
};

Projection principal_plane(const Tensor& points) {  // points (N,d)
  const int64_t n = points.size(0), d = points.size(1);
  Projection p;
  p.mean.assign(static_cast<size_t>(d), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < d; ++c) p.mean[c] += points.data()[i * d + c] / static_cast<double>(n);
  std::vector<double> cov(static_cast<size_t>(d * d), 0);  // (d,d)
  for (int64_t i = 0; i < n; ++i)
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b)
        cov[a * d + b] += (points.data()[i * d + a] - p.mean[a]) * (points.data()[i * d + b] - p.mean[b]) / static_cast<double>(n);
  for (std::vector<double>* direction : {&p.first, &p.second}) {
    std::vector<double> v(static_cast<size_t>(d), 1.0), next(static_cast<size_t>(d));
    double eigenvalue = 0;
    for (int iteration = 0; iteration < 300; ++iteration) {
      for (int64_t a = 0; a < d; ++a) {
        next[a] = 0;
        for (int64_t b = 0; b < d; ++b) next[a] += cov[a * d + b] * v[b];
      }
      double norm = 0;
      for (const double x : next) norm += x * x;
      eigenvalue = std::sqrt(norm);
      for (int64_t a = 0; a < d; ++a) v[a] = next[a] / eigenvalue;
    }
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b) cov[a * d + b] -= eigenvalue * v[a] * v[b];  // deflation
    *direction = v;
  }
  return p;
}

// The VQ attention of every block of a model, in order (none when the model attends otherwise).
std::vector<nn::VQAttention*> vq_layers(models::GPT& model) {
  std::vector<nn::VQAttention*> layers;
  for (const auto& block : model.transformer->h)
    if (auto* vq = dynamic_cast<nn::VQAttention*>(block->attn->attention_kind.get())) layers.push_back(vq);
  return layers;
}

// How one layer's codebook serves the keys of the validation windows.
struct CodebookState {
  double used = 0;        // codes that some validation key takes, per head (mean over heads)
  double perplexity = 0;  // exp(entropy) of the EMA counts: codes in effective use, per head (mean)
  double error = 0;       // mean |k - code|^2 over mean |k - mean k|^2: the share of the keys' spread the codes miss
};

CodebookState codebook_state(nn::VQAttention& layer, const Tensor& keys) {  // keys (B,H,T,D)
  const int64_t H = keys.size(1), S = layer.quantizer->num_codes(), per_head = keys.size(0) * keys.size(2);
  const nn::QuantizedKeys rounded = layer.quantizer->assign(keys);
  CodebookState state;
  std::vector<std::vector<bool>> taken(static_cast<size_t>(H), std::vector<bool>(static_cast<size_t>(S), false));
  for (size_t e = 0; e < rounded.indices.size(); ++e)
    taken[e / static_cast<size_t>(keys.size(2)) % static_cast<size_t>(H)][static_cast<size_t>(rounded.indices[e])] = true;
  for (const std::vector<bool>& head : taken) state.used += static_cast<double>(std::count(head.begin(), head.end(), true)) / H;
  const nn::CodebookUsage usage = layer.quantizer->usage();
  for (const double p : usage.perplexity) state.perplexity += p / H;
  const Tensor spread = keys - mean(keys, {0, 2}, /*keepdim=*/true);  // each head's keys about their mean
  state.error = mean(rounded.distances).item() / (sum(spread * spread).item() / static_cast<double>(H * per_head));
  return state;
}

// What part 3 follows of the VQ model: its codebooks at every evaluation, per layer.
struct CodebookHistory {
  Tensor windows;  // (B,T): the validation windows the keys come from
  std::vector<double> steps;
  std::vector<std::vector<CodebookState>> layers;  // [layer][evaluation]
};

void record_codebooks(models::GPT& model, int64_t step, CodebookHistory& history) {
  const std::vector<nn::VQAttention*> layers = vq_layers(model);
  if (layers.empty()) return;
  history.layers.resize(layers.size());
  history.steps.push_back(static_cast<double>(step));
  const std::vector<Tensor> keys = keys_of(model, history.windows);
  for (size_t l = 0; l < layers.size(); ++l) history.layers[l].push_back(codebook_state(*layers[l], keys[l]));
}

Tensor validation_windows(const std::vector<int>& ids, int64_t block, int64_t count) {  // -> (B,T)
  const int64_t B = std::min<int64_t>(count, static_cast<int64_t>(ids.size()) / block);
  return tensor(std::vector<float>(ids.begin(), ids.begin() + B * block), {B, block});
}

struct CodebookSummary {
  CodebookState first_layer;  // at the end of training
  int64_t codes = 0;
};

// Prints the codebooks' last state and draws them: over training, the counts at the end, and
// layer 1 head 1's keys and codes projected on their keys' two principal directions.
CodebookSummary codebook_report(lessons::Run& run, models::GPT& model, const CodebookHistory& history) {
  const std::vector<nn::VQAttention*> layers = vq_layers(model);
  const int64_t S = layers.front()->quantizer->num_codes();
  std::printf("  the VQ model's codebooks at the end, on the keys of %lld validation windows (%lld codes per head):\n",
              static_cast<long long>(history.windows.size(0)), static_cast<long long>(S));
  std::printf("  %6s %22s %22s %24s\n", "layer", "codes the keys take", "codebook perplexity", "error / key spread");
  lessons::LineChart over_training{"The VQ model's codebooks during training (mean over heads)", "step",
                                   "codes (of " + std::to_string(S) + " per head)", {}};
  lessons::LineChart error_chart{"Quantisation error of the validation keys", "step",
                                 "mean |k - code|^2 / mean |k - mean k|^2", {}};
  lessons::LineChart counts{"Codebook usage at the end: how many keys each code takes", "EMA count of keys per step",
                            "codes (every head)", {}};
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string name = "layer " + std::to_string(l + 1);
    const CodebookState& last = history.layers[l].back();
    std::printf("  %6zu %22.1f %22.1f %24.3f\n", l + 1, last.used, last.perplexity, last.error);
    lessons::Series used{name + ": codes the validation keys take", history.steps, {}};
    lessons::Series perplexity{name + ": codebook perplexity", history.steps, {}};
    lessons::Series error{name, history.steps, {}};
    for (const CodebookState& state : history.layers[l]) {
      used.y.push_back(state.used), perplexity.y.push_back(state.perplexity), error.y.push_back(state.error);
    }
    over_training.series.push_back(used), over_training.series.push_back(perplexity);
    error_chart.series.push_back(error);
    // The histogram as its outline: up and across each bin.
    const nn::CodebookUsage usage = layers[l]->quantizer->usage(12);
    lessons::Series outline{name, {usage.bin_edges.front()}, {0}};
    for (size_t b = 0; b < usage.histogram.size(); ++b) {
      const auto height = static_cast<double>(usage.histogram[b]);
      outline.x.insert(outline.x.end(), {usage.bin_edges[b], usage.bin_edges[b + 1]});
      outline.y.insert(outline.y.end(), {height, height});
    }
    outline.x.push_back(usage.bin_edges.back()), outline.y.push_back(0);
    counts.series.push_back(outline);
  }
  run.wrote(lessons::save_line_chart(run.path("vq_codebook"), over_training));
  run.wrote(lessons::save_line_chart(run.path("vq_key_error"), error_chart));
  run.wrote(lessons::save_line_chart(run.path("vq_code_counts"), counts));

  // Layer 1, head 1: its validation keys (N,D) and its codes (S,D) on the keys' principal plane.
  const Tensor keys = keys_of(model, history.windows).front();  // (B,H,T,D)
  const int64_t D = keys.size(3);
  const Tensor head_keys = reshape(narrow(keys, 1, 0, 1), {-1, D});
  const Tensor head_codes = reshape(narrow(layers.front()->quantizer->codes, 0, 0, 1), {S, D});
  const Projection project = principal_plane(head_keys);
  lessons::Series key_dots{"validation keys", {}, {}, /*dots=*/true}, code_dots{"codes", {}, {}, /*dots=*/true, 2.5};
  for (int64_t i = 0; i < head_keys.size(0); ++i) {
    const auto [a, b] = project(head_keys.data() + i * D);
    key_dots.x.push_back(a), key_dots.y.push_back(b);
  }
  for (int64_t s = 0; s < S; ++s) {
    const auto [a, b] = project(head_codes.data() + s * D);
    code_dots.x.push_back(a), code_dots.y.push_back(b);
  }
  run.wrote(lessons::save_line_chart(run.path("vq_keys_and_codes"),
                                     {"Layer 1, head 1: keys and codes on the keys' two principal directions",
                                      "first principal direction", "second principal direction", {key_dots, code_dots}}));
  return {history.layers.front().back(), S};
}

}  // namespace

int main(int argc, char** argv) {
  return lessons::lesson_main([&] {
    lessons::LessonCli cli(kLesson,
                           "Lesson 14: Transformer-VQ. One VQ layer computed quadratically and block by block, its "
                           "attention beside full attention's; time and memory against length, and per generated token, "
                           "for full, linear and VQ attention; character GPTs with each on the same text and budget, "
                           "and the VQ model's codebook.",
                           {.steps = kDefaultSteps, .lr = 2e-3f, .batch = 12});
    lessons::TextFlags text;
    cli.text_options(text, "/usr/share/common-licenses", /*default_lines=*/false);
    models::GPTConfig gpt = lessons::compared_gpt();
    lessons::GPTTraining training = lessons::compared_gpt_training();
    int64_t length = 16, small_block = 4, max_n = 16384, codes = 64, vq_block = 16;
    cli.option("--length", length, "part 1: positions of the small layer", {2, 64});
    cli.option("--small-block", small_block, "part 1: positions per block L of the small layer", {1, 64});
    lessons::add_max_n_option(cli, max_n, "part 2: ");
    lessons::add_gpt_shape_options(cli, gpt, "part 3: ");
    cli.option("--codes", codes, "part 3: codes per head of the VQ GPT's codebooks (S)", {1, 4096});
    cli.option("--attention-block", vq_block, "part 3: positions per block of the VQ GPT (L)", {1, 1024});
    lessons::add_gpt_training_options(cli, training);
    cli.parse(argc, argv);
    lessons::check_gpt_shape(kLesson, text, gpt);
    const int64_t longest_vq_block = (gpt.block_size - 1) / 2;  // the longest that leaves 3 blocks in a window
    if (vq_block > longest_vq_block)
      fail(kLesson, "--attention-block ", vq_block, " cuts --block ", gpt.block_size, " into fewer than 3 blocks, so no "
           "query ever reads the per-code cache of older blocks; ",
           longest_vq_block >= 1 ? cat("give --attention-block ", longest_vq_block, " or less, or ") : "give ", "--block ",
           2 * vq_block + 1, " or more");
    lessons::settle_gpt_training(kLesson, cli.common, training);
    const lessons::CharCorpus corpus = lessons::load_char_corpus(kLesson, cli.common, text, gpt.block_size);
    gpt.vocab_size = corpus.tokenizer.vocab_size();
    if (cli.common.quick) max_n = std::min<int64_t>(max_n, 512);
    lessons::Run run(cli);
    Generator gen(cli.common.seed);

    const SmallLayer small = exact_where_it_matters(run, length, small_block, gen);
    const lessons::Costs costs = cost_against_length(run, max_n, gen);
    std::printf("\n== 3. Character GPTs: full, linear and VQ attention, same text and budget ==\n");
    const std::vector<lessons::AttentionVariant> variants = {
        {nn::FullAttention::kName, "softmax (full)", nn::full_attention()},
        {nn::LinearAttention::kName, "linear elu+1", nn::linear_attention_settings(nn::EluFeatures::kName)},
        {nn::VQAttention::kName, "Transformer-VQ", nn::vq_attention_settings(vq_block, codes)}};
    CodebookHistory history{.windows = validation_windows(corpus.val_ids, gpt.block_size, 8)};
    training.after_evaluation = [&](models::GPT& model, int64_t step) { record_codebooks(model, step, history); };
    CodebookSummary codebook;
    const std::map<std::string, lessons::GPTTrainingReport> gpts = lessons::train_per_attention(
        run, cli.common, corpus, gpt, training, variants, [&](const lessons::AttentionVariant& variant, models::GPT& model) {
          if (variant.name == nn::VQAttention::kName) codebook = codebook_report(run, model, history);
        });

    nlohmann::ordered_json metrics = {{"blockwise_vs_quadratic", small.output_difference},
                                      {"blockwise_vs_quadratic_grad", small.gradient_difference},
                                      {"exact_codebook_vs_full", small.exact_codebook_difference}};
    lessons::MetricNotes notes = {
        {"blockwise_vs_quadratic", "part 1: largest difference, block-wise VQ attention against the (T,T) weights @ v"},
        {"blockwise_vs_quadratic_grad", "part 1: the same for the gradients of q, khat and v"},
        {"exact_codebook_vs_full", "part 1: VQ attention with a codebook of every key against full attention"}};
    lessons::add_cost_metrics(metrics, notes, costs, cost_kinds(), "part 2: ");
    lessons::add_perplexity_metrics(metrics, notes, gpts, variants, "part 3: ");
    const std::string of_codes = " (of " + std::to_string(codebook.codes) + " per head, mean over heads)";
    metrics["vq_codes_used"] = codebook.first_layer.used;
    notes["vq_codes_used"] = "part 3: codes the VQ GPT's validation keys take in layer 1" + of_codes;
    metrics["vq_codebook_perplexity"] = codebook.first_layer.perplexity;
    notes["vq_codebook_perplexity"] = "part 3: layer 1's codes in effective use by its EMA counts" + of_codes;
    metrics["vq_key_error"] = codebook.first_layer.error;
    notes["vq_key_error"] = "part 3: layer 1's mean |k - code|^2 over the keys' spread mean |k - mean k|^2";
    run.finish(metrics, notes,
               "docs/14_transformer_vq.md, section 2 (why rounded keys make attention linear); then exercise 1:\n"
               "      --small-block 1 and --small-block 16, and compare the columns");
  });
}
