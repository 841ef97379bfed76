#include "lessons/14_transformer_vq/codebook.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/line_batch.h"
#include "plot/plot.h"
#include "nn/attention/vq_attention.h"
#include "nn/vector_quantizer.h"

namespace ladder::lessons {

namespace {

// The keys that every VQ layer rounds for the sample's real positions, one (1,H,N,D) per layer (the
// sample's (B,H,T,D) when every position is real): the model's k as its forward hands them back,
// normalised as the layer prepares them. A line's padding comes after it, so no real position reads it.
std::vector<Tensor> keys_of(models::GPT& model, const KeySample& sample) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const std::vector<nn::VQAttention*> layers = vq_layers(model);
  const std::vector<nn::AttentionHeads> heads = model.forward_with_heads(sample.ids).heads;
  std::vector<Tensor> keys;
  for (size_t l = 0; l < layers.size(); ++l)
    keys.push_back(at_real_positions(layers[l]->prepare(heads[l].q, heads[l].k, true).keys, sample.real));
  return keys;
}

// How the keys (B,H,T,D) of one layer take its codes.
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

}  // namespace

std::vector<nn::VQAttention*> vq_layers(models::GPT& model) {
  std::vector<nn::VQAttention*> layers;
  for (const auto& block : model.transformer->h)
    if (auto* vq = dynamic_cast<nn::VQAttention*>(block->attn->attention_kind.get())) layers.push_back(vq);
  return layers;
}

KeySample validation_sample(const data::CharCorpus& corpus, int64_t context, int64_t count) {
  if (corpus.lines) {
    const std::vector<std::vector<int>> first(corpus.val_lines.begin(),
                                              corpus.val_lines.begin() + std::min<int64_t>(count, std::ssize(corpus.val_lines)));
    const data::Batch framed = data::frame_lines(first, context, data::line_markers(corpus.tokenizer));
    return {framed.x, framed.key_padding_mask, "lines"};
  }
  const int64_t B = std::min<int64_t>(count, std::ssize(corpus.val_ids) / context);
  return {tensor(std::vector<float>(corpus.val_ids.begin(), corpus.val_ids.begin() + B * context), {B, context}), Tensor(),
          "windows"};
}

Tensor at_real_positions(const Tensor& per_position, const Tensor& real) {  // (B,H,T,D), (B,T) -> (1,H,N,D)
  if (!real.defined()) return per_position;
  const int64_t B = per_position.size(0), H = per_position.size(1), T = per_position.size(2), D = per_position.size(3);
  std::vector<float> kept;  // b * T + t of every real position
  for (int64_t i = 0; i < B * T; ++i)
    if (real.data()[i] != 0) kept.push_back(static_cast<float>(i));
  const Tensor by_head = reshape(permute(per_position, {1, 0, 2, 3}), {H, B * T, D});  // (H,B*T,D)
  return unsqueeze(index_select(by_head, 1, tensor(kept)), 0);
}

void record_codebooks(models::GPT& model, int64_t step, CodebookHistory& history) {
  const std::vector<nn::VQAttention*> layers = vq_layers(model);
  if (layers.empty()) return;
  history.layers.resize(layers.size());
  history.steps.push_back(static_cast<double>(step));
  const std::vector<Tensor> keys = keys_of(model, history.sample);
  for (size_t l = 0; l < layers.size(); ++l) history.layers[l].push_back(codebook_state(*layers[l], keys[l]));
}

harness::Carried codebook_carried(CodebookHistory& history) {
  return {[&history] {
            std::map<std::string, Tensor> state = {{"codebook.steps", harness::exact_tensor(history.steps)}};
            for (size_t l = 0; l < history.layers.size(); ++l) {
              std::vector<double> values;  // used, perplexity, error per evaluation
              for (const CodebookState& c : history.layers[l]) values.insert(values.end(), {c.used, c.perplexity, c.error});
              state["codebook.layer" + std::to_string(l)] = harness::exact_tensor(values);
            }
            return state;
          },
          [&history](const std::map<std::string, Tensor>& state) {
            history.steps = harness::exact_values(state.at("codebook.steps")), history.layers.clear();
            for (size_t l = 0; state.count("codebook.layer" + std::to_string(l)); ++l) {
              const std::vector<double> values = harness::exact_values(state.at("codebook.layer" + std::to_string(l)));
              history.layers.emplace_back();
              for (size_t e = 0; e + 2 < values.size(); e += 3) history.layers[l].push_back({values[e], values[e + 1], values[e + 2]});
            }
          }};
}

CodebookSummary codebook_report(harness::Run& run, models::GPT& model, const CodebookHistory& history) {
  const std::vector<nn::VQAttention*> layers = vq_layers(model);
  const int64_t S = layers.front()->quantizer->num_codes();
  std::printf("  the VQ model's codebooks at the end, on the keys of %lld validation %s (%lld codes per head):\n",
              static_cast<long long>(history.sample.ids.size(0)), history.sample.unit.c_str(), static_cast<long long>(S));
  std::printf("  %6s %22s %22s %24s\n", "layer", "codes the keys take", "codebook perplexity", "error / key spread");
  plot::LineChart over_training{"The VQ model's codebooks during training (mean over heads)", "step",
                                   "codes (of " + std::to_string(S) + " per head)", {}};
  plot::LineChart error_chart{"Quantisation error of the validation keys", "step",
                                 "mean |k - code|^2 / mean |k - mean k|^2", {}};
  plot::LineChart counts{"Codebook usage at the end: how many keys each code takes", "EMA count of keys per step",
                            "codes (every head)", {}};
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string name = "layer " + std::to_string(l + 1);
    const CodebookState& last = history.layers[l].back();
    std::printf("  %6zu %22.1f %22.1f %24.3f\n", l + 1, last.used, last.perplexity, last.error);
    plot::Series used{name + ": codes the validation keys take", history.steps, {}};
    plot::Series perplexity{name + ": codebook perplexity", history.steps, {}};
    plot::Series error{name, history.steps, {}};
    for (const CodebookState& state : history.layers[l]) {
      used.y.push_back(state.used), perplexity.y.push_back(state.perplexity), error.y.push_back(state.error);
    }
    over_training.series.push_back(used), over_training.series.push_back(perplexity);
    error_chart.series.push_back(error);
    // The histogram as its outline: up and across each bin.
    const nn::CodebookUsage usage = layers[l]->quantizer->usage(12);
    plot::Series outline{name, {usage.bin_edges.front()}, {0}};
    for (size_t b = 0; b < usage.histogram.size(); ++b) {
      const auto height = static_cast<double>(usage.histogram[b]);
      outline.x.insert(outline.x.end(), {usage.bin_edges[b], usage.bin_edges[b + 1]});
      outline.y.insert(outline.y.end(), {height, height});
    }
    outline.x.push_back(usage.bin_edges.back()), outline.y.push_back(0);
    counts.series.push_back(outline);
  }
  run.wrote(plot::save_line_chart(run.path("vq_codebook"), over_training));
  run.wrote(plot::save_line_chart(run.path("vq_key_error"), error_chart));
  run.wrote(plot::save_line_chart(run.path("vq_code_counts"), counts));

  // Layer 1, head 1: its validation keys (N,D) and its codes (S,D) on the keys' principal plane.
  const Tensor keys = keys_of(model, history.sample).front();  // (B,H,T,D), or (1,H,N,D) of a lines' real positions
  const int64_t D = keys.size(3);
  const Tensor head_keys = reshape(narrow(keys, 1, 0, 1), {-1, D});
  const Tensor head_codes = reshape(narrow(layers.front()->quantizer->codes, 0, 0, 1), {S, D});
  const Projection project = principal_plane(head_keys);
  plot::Series key_dots{"validation keys", {}, {}, /*dots=*/true}, code_dots{"codes", {}, {}, /*dots=*/true, 2.5};
  for (int64_t i = 0; i < head_keys.size(0); ++i) {
    const auto [a, b] = project(head_keys.data() + i * D);
    key_dots.x.push_back(a), key_dots.y.push_back(b);
  }
  for (int64_t s = 0; s < S; ++s) {
    const auto [a, b] = project(head_codes.data() + s * D);
    code_dots.x.push_back(a), code_dots.y.push_back(b);
  }
  run.wrote(plot::save_line_chart(run.path("vq_keys_and_codes"),
                                     {"Layer 1, head 1: keys and codes on the keys' two principal directions",
                                      "first principal direction", "second principal direction", {key_dots, code_dots}}));
  return {history.layers.front().back(), S};
}

void add_codebook_metrics(const CodebookSummary& codebook, nlohmann::ordered_json& metrics, harness::MetricNotes& notes,
                          const std::string& part) {
  const std::string of_codes = " (of " + std::to_string(codebook.codes) + " per head, mean over heads)";
  metrics["vq_codes_used"] = codebook.first_layer.used;
  notes["vq_codes_used"] = part + "codes the VQ GPT's validation keys take in layer 1" + of_codes;
  metrics["vq_codebook_perplexity"] = codebook.first_layer.perplexity;
  notes["vq_codebook_perplexity"] = part + "layer 1's codes in effective use by its EMA counts" + of_codes;
  metrics["vq_key_error"] = codebook.first_layer.error;
  notes["vq_key_error"] = part + "layer 1's mean |k - code|^2 over the keys' spread mean |k - mean k|^2";
}

}  // namespace ladder::lessons
