#include "nn/vector_quantizer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/vector_quantize.h"
#include "core/ops.h"
#include "nn/init.h"

namespace ladder::nn {

namespace {

constexpr float kCountFloor = 0.01f;  // the paper's code's: a count decayed to (or loaded as) 0 never divides

float mean_count(const float* head_counts, int64_t S) {
  return std::accumulate(head_counts, head_counts + S, 0.0f) / static_cast<float>(S);
}

}  // namespace

VectorQuantizer::VectorQuantizer(int64_t codes_per_head, int64_t width, VectorQuantizerOptions options,
                                 Generator& gen)
    : Module("VectorQuantizer"), options_(options), gen_(gen.child()) {
  const char* op = "VectorQuantizer";
  register_generator(gen_);
  if (codes_per_head < 1 || width < 1 || options.heads < 1)
    fail(op, "needs at least one code, one head and width >= 1, got S = ", codes_per_head, ", heads = ",
         options.heads, ", width = ", width);
  if (!(options.gamma > 0 && options.gamma < 1))
    fail(op, "gamma (the EMA decay) must be in (0, 1), got ", options.gamma, "; the paper uses 0.99");
  if (!(options.beta >= 0)) fail(op, "beta (the commitment weight) must be >= 0, got ", options.beta);
  if (!(options.revive_below >= 0 && options.revive_below < 1))
    fail(op, "revive_below must be in [0, 1) (a fraction of the mean count; 0 never revives), got ",
         options.revive_below);
  const int64_t H = options.heads, S = codes_per_head;
  sums = register_buffer("sums", empty({H, S, width}));
  init_normal(sums, 0, 1 / std::sqrt(static_cast<float>(H * S)), gen);
  counts = register_buffer("counts", ones({H, S}));
  codes = register_buffer("codes", sums.clone());
}

void VectorQuantizer::check_keys(const char* op, const Tensor& keys, const Tensor& key_padding_mask) const {
  if (keys.dim() != 4 || keys.size(1) != heads() || keys.size(3) != width())
    fail(op, "expects keys (B,H,T,d) with H = ", heads(), " and d = ", width(), ", got ", shape_str(keys.shape()));
  if (key_padding_mask.defined() && key_padding_mask.shape() != Shape{keys.size(0), keys.size(2)})
    fail(op, "key_padding_mask must be (B,T) = (", keys.size(0), ",", keys.size(2),
         ") (1 = real key, 0 = padding), got ", shape_str(key_padding_mask.shape()));
}

QuantizedKeys VectorQuantizer::assign(const Tensor& keys, const Tensor& key_padding_mask) const {
  check_keys("VectorQuantizer.quantize", keys, key_padding_mask);
  CodeAssignment assigned = nearest_codes(keys, codes);
  const Tensor chosen = gather_codes(codes, assigned.indices, assigned.distances.shape());  // no grad
  const Tensor error = keys - chosen;
  Tensor squared = sum(error * error, {3});  // (B,H,T)
  Tensor commitment = mean(squared);
  if (key_padding_mask.defined()) {  // the mean over real keys: sum over them / (H * their number)
    const Tensor real = key_padding_mask.detach();
    const float count = sum(real).item() * static_cast<float>(heads());
    commitment = sum(squared * reshape(real, {keys.size(0), 1, keys.size(2)})) / std::max(count, 1.0f);
  }
  return {.keys = straight_through(keys, chosen),
          .indices = std::move(assigned.indices),
          .commitment = options_.beta * commitment,
          .distances = assigned.distances};
}

QuantizedKeys VectorQuantizer::quantize(const Tensor& keys, const Tensor& key_padding_mask) {
  QuantizedKeys out = assign(keys, key_padding_mask);
  if (is_training()) {
    record_auxiliary_loss(out.commitment);
    keep_pending(keys, out.indices, key_padding_mask);
  }
  return out;
}

// indices (B,H,T) by value: padding positions become -1, which sum_keys_by_code leaves out.
void VectorQuantizer::keep_pending(const Tensor& keys, std::vector<int64_t> indices, const Tensor& key_padding_mask) {
  const int64_t B = keys.size(0), H = heads(), T = keys.size(2), S = num_codes(), d = width();
  if (!pending_keys_.defined()) {
    pending_counts_.assign(static_cast<size_t>(H * S), 0);
    pending_sums_.assign(static_cast<size_t>(H * S * d), 0);
  }
  pending_real_.clear();
  for (int64_t position = 0; position < B * T; ++position) {  // b * T + t
    if (!key_padding_mask.defined() || key_padding_mask.data()[position] != 0) {
      pending_real_.push_back(position);
      continue;
    }
    for (int64_t h = 0; h < H; ++h) indices[static_cast<size_t>((position / T * H + h) * T + position % T)] = -1;
  }
  sum_keys_by_code({.batch = B, .heads = H, .length = T, .codes = S, .width = d}, keys.data(), indices.data(),
                   pending_counts_.data(), pending_sums_.data());
  pending_keys_ = keys.detach();
}

void VectorQuantizer::apply_optimizer_step() {
  if (!pending_keys_.defined()) return;
  const int64_t HS = heads() * num_codes(), d = width();
  const float gamma = options_.gamma;
  float *count = counts.mutable_data(), *sum = sums.mutable_data();
  for (int64_t i = 0; i < HS; ++i) count[i] = gamma * count[i] + (1 - gamma) * static_cast<float>(pending_counts_[i]);
  for (int64_t i = 0; i < HS * d; ++i) sum[i] = gamma * sum[i] + (1 - gamma) * static_cast<float>(pending_sums_[i]);
  revive_dead_codes(pending_keys_, pending_real_);
  refresh_codes();
  pending_keys_ = Tensor();
}

// Each dead code of head h moves onto one of these keys (the last forward's real ones, at positions
// b * T + t) of head h, drawn without replacement, with its head's mean count (an average code, not
// one about to die again).
void VectorQuantizer::revive_dead_codes(const Tensor& keys, const std::vector<int64_t>& real) {
  if (options_.revive_below == 0) return;
  const int64_t H = heads(), T = keys.size(2), S = num_codes(), d = width();
  const auto available = static_cast<int64_t>(real.size());
  float *count = counts.data(), *sum = sums.data();
  for (int64_t h = 0; h < H; ++h) {
    float* head_counts = count + h * S;
    const float mean = mean_count(head_counts, S), threshold = options_.revive_below * mean;
    std::vector<int64_t> candidates = real;
    int64_t drawn = 0;
    for (int64_t s = 0; s < S && drawn < available; ++s) {
      if (head_counts[s] >= threshold) continue;
      // A partial Fisher-Yates shuffle: the first `drawn` candidates are the keys taken so far.
      const auto pick = static_cast<size_t>(gen_.randint(drawn, available));
      std::swap(candidates[static_cast<size_t>(drawn)], candidates[pick]);
      const int64_t position = candidates[static_cast<size_t>(drawn++)];  // b * T + t
      const float* key = keys.data() + ((position / T * H + h) * T + position % T) * d;
      head_counts[s] = mean;
      for (int64_t j = 0; j < d; ++j) sum[(h * S + s) * d + j] = key[j] * mean;
    }
  }
}

void VectorQuantizer::refresh_codes() {
  const int64_t HS = heads() * num_codes(), d = width();
  const float *count = counts.data(), *sum = sums.data();
  float* code = codes.mutable_data();
  for (int64_t i = 0; i < HS; ++i)
    for (int64_t j = 0; j < d; ++j) code[i * d + j] = sum[i * d + j] / std::max(count[i], kCountFloor);
}

CodebookUsage VectorQuantizer::usage(int64_t bins) const {
  if (bins < 1) fail("VectorQuantizer.usage", "bins must be >= 1, got ", bins);
  const int64_t H = heads(), S = num_codes();
  const float* count = counts.data();
  CodebookUsage out;
  for (int64_t h = 0; h < H; ++h) {
    const float* head_counts = count + h * S;
    const float threshold = options_.revive_below * mean_count(head_counts, S);
    const double total = std::accumulate(head_counts, head_counts + S, 0.0);
    double entropy = 0;
    for (int64_t s = 0; s < S; ++s)
      if (head_counts[s] > 0) entropy -= head_counts[s] / total * std::log(head_counts[s] / total);
    out.alive.push_back(std::count_if(head_counts, head_counts + S, [&](float c) { return c >= threshold; }));
    out.perplexity.push_back(std::exp(entropy));
  }
  const double largest = *std::max_element(count, count + H * S);
  for (int64_t i = 0; i <= bins; ++i)
    out.bin_edges.push_back(largest * static_cast<double>(i) / static_cast<double>(bins));
  out.histogram.assign(static_cast<size_t>(bins), 0);
  for (int64_t i = 0; i < H * S; ++i) {
    const auto bin = largest > 0 ? static_cast<int64_t>(count[i] / largest * static_cast<double>(bins)) : 0;
    ++out.histogram[static_cast<size_t>(std::min(bin, bins - 1))];
  }
  return out;
}

std::string VectorQuantizer::describe() const {
  return cat("heads=", heads(), ", codes=", num_codes(), ", width=", width(), ", beta=", options_.beta,
             ", gamma=", options_.gamma, ", revive_below=", options_.revive_below);
}

}  // namespace ladder::nn
