// Lesson 12: linear attention, where softmax(q . k) becomes phi(q) . phi(k) for a feature map phi.
//
//  1. "Transformers are RNNs": one causal linear-attention layer computed three ways, the
//     quadratic masked form (its implied (T,T) matrix times v), the chunked product, and the
//     recurrent form (a state of fixed size, stepped one position at a time), side by side;
//  2. the attention matrices that elu+1, 1+cos and double softmax imply, next to softmax's, for
//     queries that each match one key well: what is lost when the exponential goes;
//  3. the rank of those matrices: their singular values, for softmax, each feature map and
//     Linformer, bidirectional and causal, on one input: a bidirectional linear map's matrix has
//     rank at most its M features, softmax's does not, and the causal mask lifts the bound;
//  4. character GPTs, one with softmax attention and one with each feature map, trained on the
//     same text with the same budget and the same initial weights by the loop in train_per_kind:
//     perplexity curves and a table;
//  5. time and peak memory of one attention layer (forward + backward) against the length n,
//     softmax against linear, and the time of a generated token against the context: full
//     attention's growing KV cache against linear attention's fixed state.
// The kinds are nn/attention (linear_attention.h, full_attention.h); the note that goes with it:
// docs/12_linear_attention.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/batcher.h"
#include "lessons/attention_kinds/layer_cost.h"
#include "lessons/12_linear_attention/spectra.h"
#include "harness/attention_flags.h"
#include "lessons/char_gpt/char_gpt.h"
#include "harness/cli.h"
#include "lessons/attention_kinds/gpt_comparison.h"
#include "lessons/memory/model_memory.h"
#include "harness/part_flag.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "models/gpt.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_workload.h"
#include "nn/attention/feature_map.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/linformer_attention.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "12_linear_attention";
// Part 4: training steps of each GPT (the rest of the run takes about 20 seconds).
constexpr int64_t kDefaultSteps = 600;
constexpr int64_t kDim = 4;  // part 1: the size of a head, small enough to print
// Part 2: positions and head size of the maps; each query is kMatch times one key plus noise.
constexpr int64_t kMapLength = 16, kMapDim = 16;
constexpr float kMatch = 2.0f, kMapNoise = 0.3f;
// Part 3: positions and head size of the matrices whose spectra are taken.
constexpr int64_t kSpectrumLength = 256, kSpectrumDim = 16;
// ---- 1. three ways to compute one causal layer ----

struct ThreeWays {
  double chunked_vs_quadratic = 0, recurrent_vs_quadratic = 0;
  int64_t state_floats = 0;  // the recurrent state's size, the same after every position
};

// The floats a linear-attention state holds: the (M,D) sum, the normaliser and, for double
// softmax, the running largest key feature.
int64_t state_floats(const nn::LinearState& state) {
  return state.sums.numel() + state.normaliser.numel() + (state.shift.defined() ? state.shift.numel() : 0);
}

ThreeWays three_ways(const std::string& feature_map, int64_t length, int64_t chunk, Generator& gen) {
  std::printf("\n== 1. Transformers are RNNs: one causal layer (phi = %s), three ways ==\n", feature_map.c_str());
  NoGradGuard no_grad;
  const std::shared_ptr<nn::AttentionKind> kind =
      nn::make_attention(nn::linear_attention_settings(feature_map, chunk));
  const Tensor q = randn({1, 1, length, kDim}, gen), k = randn(q.shape(), gen), v = randn(q.shape(), gen);  // (B,H,T,D)

  const Tensor quadratic = matmul(kind->implied_weights(q, k, {.causal = true}), v);  // (T,T) masked matrix @ v
  const Tensor chunked = kind->attend(q, k, v, {.causal = true});                    // chunks of `chunk` positions
  std::unique_ptr<nn::AttentionState> state = kind->start();
  std::vector<Tensor> steps;
  std::vector<int64_t> sizes;
  for (int64_t t = 0; t < length; ++t) {  // one position at a time, as generation feeds them
    steps.push_back(kind->step(narrow(q, 2, t, 1), narrow(k, 2, t, 1), narrow(v, 2, t, 1), *state));
    sizes.push_back(state_floats(dynamic_cast<const nn::LinearState&>(*state)));
  }
  const Tensor recurrent = concat(steps, 2);

  std::printf("  T = %lld positions, head size %lld, chunk %lld (%lld chunks, the last of %lld)\n",
              static_cast<long long>(length), static_cast<long long>(kDim), static_cast<long long>(chunk),
              static_cast<long long>((length + chunk - 1) / chunk), static_cast<long long>(length - (length - 1) / chunk * chunk));
  std::printf("  output, first feature:\n  %8s %12s %12s %12s %14s %16s\n", "position", "quadratic", "chunked", "recurrent",
              "state floats", "a KV cache holds");
  for (int64_t t = 0; t < length; ++t) {
    const auto at = static_cast<size_t>(t * kDim);
    std::printf("  %8lld %12.6f %12.6f %12.6f %14lld %16lld\n", static_cast<long long>(t), quadratic.data()[at],
                chunked.data()[at], recurrent.data()[at], static_cast<long long>(sizes[static_cast<size_t>(t)]),
                static_cast<long long>(2 * (t + 1) * kDim));
  }
  ThreeWays result;
  result.chunked_vs_quadratic = amax(abs(chunked - quadratic)).item();
  result.recurrent_vs_quadratic = amax(abs(recurrent - quadratic)).item();
  result.state_floats = sizes.back();
  std::printf("  largest difference over all %lld outputs: chunked - quadratic %.2e, recurrent - quadratic %.2e\n",
              static_cast<long long>(quadratic.numel()), result.chunked_vs_quadratic, result.recurrent_vs_quadratic);
  if (std::all_of(sizes.begin(), sizes.end(), [&](int64_t s) { return s == sizes.front(); }))
    std::printf("  the recurrent state does not grow: %lld floats after every position\n",
                static_cast<long long>(result.state_floats));
  else
    std::printf("  the recurrent state grew, from %lld floats to %lld\n", static_cast<long long>(sizes.front()),
                static_cast<long long>(sizes.back()));
  return result;
}

// ---- 2. the matrices the feature maps imply ----

// Softmax attention, then linear attention with each feature map (nn/attention/feature_map.h). A
// map's name is its --feature-map value, double softmax's "double_softmax", not to be taken for
// softmax attention itself. Part 3 takes their spectra, part 4 trains a GPT with each.
std::vector<lessons::AttentionVariant> map_kinds() {
  std::vector<lessons::AttentionVariant> kinds = {{nn::FullAttention::kLabel, nn::FullAttention::kLabel, nn::full_attention()}};
  for (const std::string& name : nn::feature_map_names()) {
    const std::unique_ptr<nn::FeatureMap> map = nn::make_feature_map(name);
    kinds.push_back({map->keys_over_positions() ? "double_" + name : name, map->label(),
                     nn::linear_attention_settings(name)});
  }
  return kinds;
}

const std::vector<lessons::AttentionVariant> kMapKinds = map_kinds();

struct Sharpness {
  double on_match = 0;  // the weight on the key the query was built from, averaged over queries
  double entropy = 0;   // the entropy of a row in nats, averaged over queries
};

Sharpness sharpness(const Tensor& weights, const std::vector<int64_t>& match) {  // weights (1,1,T,S)
  const int64_t T = weights.size(2), S = weights.size(3);
  Sharpness s;
  for (int64_t i = 0; i < T; ++i) {
    const float* row = weights.data() + i * S;
    s.on_match += row[match[static_cast<size_t>(i)]];
    for (int64_t j = 0; j < S; ++j)
      if (row[j] > 0) s.entropy -= row[j] * std::log(static_cast<double>(row[j]));
  }
  s.on_match /= static_cast<double>(T), s.entropy /= static_cast<double>(T);
  return s;
}

std::vector<std::vector<double>> rows_of(const Tensor& weights) {  // (1,1,T,S) -> [T][S]
  const int64_t T = weights.size(2), S = weights.size(3);
  std::vector<std::vector<double>> out;
  for (int64_t i = 0; i < T; ++i) out.emplace_back(weights.data() + i * S, weights.data() + (i + 1) * S);
  return out;
}

using MapSharpness = std::vector<std::pair<std::string, Sharpness>>;  // "elu_causal" -> its numbers

MapSharpness implied_maps(harness::Run& run, Generator& gen) {
  std::printf("\n== 2. The attention each feature map implies, next to softmax's ==\n");
  NoGradGuard no_grad;
  // Query i is kMatch times key match[i] plus noise, match[i] <= i so that the causal maps see it too.
  const Tensor k = randn({1, 1, kMapLength, kMapDim}, gen);
  std::vector<int64_t> match;
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < kMapLength; ++i) {
    match.push_back(gen.randint(0, i + 1));
    rows.push_back(kMatch * narrow(k, 2, match.back(), 1) + kMapNoise * randn({1, 1, 1, kMapDim}, gen));
  }
  const Tensor q = concat(rows, 2);  // (1,1,T,D)
  // Rows spread evenly over the keys each query sees, for comparison: their weight on key m(i) and entropy.
  double uniform_causal_weight = 0, uniform_causal_entropy = 0;
  for (int64_t i = 0; i < kMapLength; ++i) {
    uniform_causal_weight += 1.0 / static_cast<double>((i + 1) * kMapLength);
    uniform_causal_entropy += std::log(static_cast<double>(i + 1)) / kMapLength;
  }
  std::printf("  %lld keys of N(0, 1) entries in %lld dimensions; query i = %g x key m(i) + noise of sd %g, m(i) <= i\n",
              static_cast<long long>(kMapLength), static_cast<long long>(kMapDim), kMatch, kMapNoise);
  std::printf("  %-16s %24s %24s\n", "", "weight on key m(i)", "row entropy (nats)");
  std::printf("  %-16s %12s %11s %12s %11s\n", "kind", "non-causal", "causal", "non-causal", "causal");
  std::printf("  %-16s %12.3f %11.3f %12.3f %11.3f\n", "uniform rows", 1.0 / kMapLength, uniform_causal_weight,
              std::log(static_cast<double>(kMapLength)), uniform_causal_entropy);

  MapSharpness result;
  std::vector<std::vector<std::vector<double>>> tiles(2 * kMapKinds.size());  // row 0 non-causal, row 1 causal
  for (size_t m = 0; m < kMapKinds.size(); ++m) {
    const std::shared_ptr<nn::AttentionKind> kind = nn::make_attention(kMapKinds[m].attention);
    Sharpness both[2];
    for (const size_t causal : {0, 1}) {
      const Tensor weights = kind->implied_weights(q, k, {.causal = causal == 1});  // (1,1,T,S)
      both[causal] = sharpness(weights, match);
      tiles[causal * kMapKinds.size() + m] = rows_of(weights);
      result.emplace_back(kMapKinds[m].name + (causal ? "_causal" : ""), both[causal]);
    }
    std::printf("  %-16s %12.3f %11.3f %12.3f %11.3f\n", kMapKinds[m].label.c_str(), both[0].on_match, both[1].on_match,
                both[0].entropy, both[1].entropy);
  }
  std::string title = "Implied attention, left to right:";
  for (const lessons::AttentionVariant& kind : kMapKinds) title += " " + kind.label + (&kind == &kMapKinds.back() ? "" : " |");
  plot::Heatmap map{title, "keys (16 per map)", "queries: non-causal (top), causal (bottom)", "attention weight",
                       plot::tile(tiles, static_cast<int>(kMapKinds.size()))};
  map.scale_min = 0, map.scale_max = 1;  // one scale for all eight; the frames between maps are drawn at 1
  run.wrote(plot::save_heatmap(run.path("implied_attention"), map));
  return result;
}

// ---- 3. the rank of the implied matrices (lessons/12_linear_attention/spectra.h) ----

// Softmax, each feature map with its M features, and Linformer with its k projected rows.
std::vector<lessons::Spectrum> implied_ranks(harness::Run& run, Generator& gen) {
  std::printf("\n== 3. The rank of the implied matrices: %lld positions, heads of %lld, q and k of N(0, 1) entries ==\n",
              static_cast<long long>(kSpectrumLength), static_cast<long long>(kSpectrumDim));
  std::vector<lessons::SpectrumKind> kinds;
  for (const lessons::AttentionVariant& kind : kMapKinds) {
    const auto* linear = kind.attention.kind.find<nn::LinearAttention::Settings>();
    kinds.push_back({kind.name, kind.label, kind.attention,
                     linear ? nn::make_feature_map(linear->feature_map)->features(kSpectrumDim) : 0});
  }
  const nn::LinformerAttention::Settings projection;
  const nn::AttentionSettings linformer{.kind = projection, .max_length = kSpectrumLength};
  kinds.push_back({nn::LinformerAttention::kName, "Linformer", linformer, projection.k});
  const Tensor q = randn({1, 1, kSpectrumLength, kSpectrumDim}, gen), k = randn(q.shape(), gen);
  return lessons::attention_spectra(run, kinds, q, k);
}

// ---- 4. character GPTs with each kind ----

// One GPT per kind of kMapKinds, each from the same initial weights (the attention kinds have no
// parameters), trained on the same batches for the same steps: lesson 11's loop, in each kind's
// gpt_NAME.csv.
lessons::GPTComparison train_per_kind(harness::Run& run, const harness::CommonFlags& flags, const data::CharCorpus& corpus,
                                      models::GPTConfig gpt, const lessons::GPTTraining& training) {
  std::printf("\n== 4. Character GPTs: softmax attention against each feature map, same text and budget ==\n");
  lessons::print_compared_gpts(gpt, flags, corpus);
  lessons::GPTComparison comparison;
  for (const lessons::AttentionVariant& kind : kMapKinds) {
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
    for (int64_t step = tracker.resume({model, adamw, {&batches}}); step <= flags.steps; ++step) {  // 1, or after --resume's checkpoint
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

// ---- 5. cost against length (lessons/attention_kinds/layer_cost.h) ----

const std::vector<lessons::CostKind> kCostKinds = {
    {nn::FullAttention::kName, "softmax (full, fused)", "KV cache", nn::full_attention()},
    {nn::LinearAttention::kName, "linear elu+1 (chunk 64)", "recurrent state", nn::linear_attention_settings(nn::EluFeatures::kName)}};

lessons::Costs cost_against_length(harness::Run& run, int64_t max_n, Generator& gen) {
  std::printf("\n== 5. Cost against length: one causal layer, B=1 H=%lld D=%lld ==\n",
              static_cast<long long>(nn::kWorkloadHeads), static_cast<long long>(nn::kWorkloadHeadDim));
  return lessons::cost_against_length(run, kCostKinds, max_n, gen);
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli(kLesson,
                           "Lesson 12: linear attention. One causal layer three ways (quadratic, chunked, recurrent); the "
                           "attention matrices of each feature map next to softmax's, and their rank; character GPTs with "
                           "each, on the same text and budget; time and memory against length, and per generated token.",
                           {.steps = kDefaultSteps, .lr = 2e-3f, .batch = 12});
    harness::TextFlags text;
    cli.text_options(text, "/usr/share/common-licenses", /*default_lines=*/false);
    models::GPTConfig gpt = lessons::compared_gpt();
    lessons::GPTTraining training = lessons::compared_gpt_training();
    std::string feature_map = nn::EluFeatures::kName;
    int64_t length = 11, chunk = 4, max_n = 8192;
    cli.option("--feature-map", feature_map,
               "part 1: the feature map phi, one of " + nn::joined_names(nn::feature_map_names()), "MAP");
    cli.option("--length", length, "part 1: positions of the sequence", {2, 64});
    cli.option("--chunk", chunk, "part 1: positions per chunk of the chunked product", {1, 64});
    lessons::add_max_n_option(cli, max_n, "part 5: ");
    lessons::add_gpt_shape_options(cli, gpt, "part 4: ");
    training.add_to(cli);
    harness::PartFlag part(cli, 5);
    cli.parse(argc, argv);
    harness::check_feature_map(kLesson, feature_map);
    training.settle(kLesson, cli.common);
    const data::CharCorpus corpus = lessons::load_char_corpus(kLesson, cli.common, text, gpt.block_size, cli.given("--context"));
    gpt.vocab_size = corpus.tokenizer.vocab_size();
    harness::check_memory(kLesson, lessons::gpt_training_memory(gpt, cli.common.batch, lessons::gpt_flags_text(gpt)));
    if (cli.common.quick) max_n = std::min<int64_t>(max_n, 512);
    harness::Run run(cli);
    Generator gen(cli.common.seed);

    nlohmann::ordered_json metrics;
    harness::MetricNotes notes;
    if (part.runs(1)) {
      const ThreeWays ways = three_ways(feature_map, length, chunk, gen);
      metrics = {{"chunked_vs_quadratic", ways.chunked_vs_quadratic},
                 {"recurrent_vs_quadratic", ways.recurrent_vs_quadratic},
                 {"state_floats", ways.state_floats}};
      notes = {{"chunked_vs_quadratic", "part 1: largest difference, chunked product against the masked (T,T) matrix @ v"},
               {"recurrent_vs_quadratic", "part 1: the same for the recurrent form, one position at a time"},
               {"state_floats", "part 1: floats in the recurrent state, after every position alike"}};
    }
    const MapSharpness maps_sharpness = part.runs(2) ? implied_maps(run, gen) : MapSharpness{};
    for (const auto& [name, s] : maps_sharpness) {
      const std::string causal = name.ends_with("_causal") ? ", causal" : ", non-causal";
      metrics["match_weight_" + name] = s.on_match;
      notes["match_weight_" + name] = "part 2: mean weight on the key each query was built from" + causal;
    }
    for (const auto& [name, s] : maps_sharpness) {
      metrics["entropy_" + name] = s.entropy;
      notes["entropy_" + name] = "part 2: mean row entropy in nats (uniform over 16 keys: 2.773)";
    }
    Generator spectrum_inputs = gen.child();  // its own draws: the later parts' stay as they were
    for (const lessons::Spectrum& s : part.runs(3) ? implied_ranks(run, spectrum_inputs) : std::vector<lessons::Spectrum>{}) {
      const std::string name = "rank_" + s.name + (s.causal ? "_causal" : "");
      metrics[name] = s.rank;
      notes[name] = cat("part 3: numerical rank of the implied (", kSpectrumLength, ",", kSpectrumLength, ") matrix",
                        s.causal ? ", causal" : ", bidirectional");
    }
    if (part.runs(4)) train_per_kind(run, cli.common, corpus, gpt, training).add_metrics(metrics, notes, "part 4: ");
    if (part.runs(5)) lessons::add_cost_metrics(metrics, notes, cost_against_length(run, max_n, gen), kCostKinds, "part 5: ");
    run.finish(metrics, notes,
               "docs/12_linear_attention.md, section 4 (Causal: the chunked product); then exercise 1: --feature-map softmax\n"
               "      and --chunk 1, and compare the three columns");
  });
}
