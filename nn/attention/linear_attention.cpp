#include "nn/attention/linear_attention.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "nn/attention/favor_features.h"

namespace ladder::nn {

namespace {

constexpr float kNormaliserEps = 1e-6f;  // added to phi(q) . sum phi(k) (core's default)
constexpr float kSmallestSum = 1e-30f;   // double softmax: a floor for Z, reached only when every key underflows

}  // namespace

LinearAttention::LinearAttention(const AttentionSettings& settings)
    : AttentionKind("LinearAttention"),
      own_(checked_settings<Settings>(settings)),
      map_(make_feature_map(own_.feature_map,
                            {.seed = settings.seed, .layer = settings.layer, .random_features = own_.random_features})) {
  for (const auto& [name, buffer] : map_->buffers()) register_buffer(name, buffer);
}

void LinearAttention::redraw_features() {
  auto* favor = dynamic_cast<FavorFeatures*>(map_.get());
  if (!favor)
    fail("LinearAttention::redraw_features", "only the favor feature map draws features; this layer's map is ",
         map_->name());
  favor->redraw();
}

void LinearAttention::check_masks(const Tensor& q, const Tensor& k, const AttendMasks& masks) const {
  if (q.dim() != 4 || k.dim() != 4)
    fail("LinearAttention", "q and k must be (B,H,T,D) and (B,H,S,D), got ", shape_str(q.shape()), " and ",
         shape_str(k.shape()));
  if (masks.causal && masks.causal_offset != 0)
    fail("LinearAttention", "causal_offset ", masks.causal_offset, " is not supported: causal linear attention "
         "reads one whole sequence (T = S); to continue a sequence, carry the state with start() and step()");
}

std::pair<Tensor, Tensor> LinearAttention::double_softmax_parts(const Tensor& q, const Tensor& k,
                                                                const AttendMasks& masks) const {
  // exp(k - shift) with one shift per feature: the ratios k'_jm / Z_im do not depend on it.
  Tensor keys = exp(k - amax(k, {2}, /*keepdim=*/true).detach());  // (B,H,S,M)
  if (masks.key_padding_mask.defined())
    keys = keys * reshape(masks.key_padding_mask.detach(), {k.size(0), 1, k.size(2), 1});
  const Tensor totals = masks.causal ? cumsum(keys, 2) : sum(keys, {2}, /*keepdim=*/true);  // Z: (B,H,T or 1,M)
  return {map_->query_features(q) / clamp(totals, kSmallestSum, INFINITY), keys};
}

Tensor LinearAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) {
  check_masks(q, k, masks);
  const LinearAttentionOptions options{.causal = masks.causal, .key_padding_mask = masks.key_padding_mask,
                                       .eps = kNormaliserEps, .chunk = own_.chunk};
  if (map_->fused_elu()) {  // the op applies elu + 1 itself, inside the chunks when causal
    LinearAttentionOptions fused = options;
    fused.elu_features = true;
    return linear_attention(q, k, v, fused);
  }
  if (!map_->keys_over_positions())
    return linear_attention(map_->query_features(q), map_->key_features(k), v, options);
  const auto [queries, keys] = double_softmax_parts(q, k, masks);
  if (masks.causal) return causal_linear_product(queries, keys, v, own_.chunk);
  return matmul(queries, matmul(keys, v, {.transpose_a = true}));  // q' (k'^T v): (B,H,T,M) @ (B,H,M,D)
}

Tensor LinearAttention::implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  check_masks(q, k, masks);
  if (!map_->keys_over_positions())
    return linear_attention_weights(map_->query_features(q), map_->key_features(k),
                                    {.causal = masks.causal, .key_padding_mask = masks.key_padding_mask,
                                     .eps = kNormaliserEps});
  const auto [queries, keys] = double_softmax_parts(q, k, masks);
  const Tensor weights = matmul(queries, keys, {.transpose_b = true});  // (B,H,T,S)
  return masks.causal ? weights * tril_mask(q.size(2), k.size(2)) : weights;
}

std::unique_ptr<AttentionState> LinearAttention::start() const { return std::make_unique<LinearState>(); }

// One position at a time, the recurrent form: the state takes in phi(k_t) v_t^T, then query t reads
// it. Double softmax keeps its sums relative to the largest key feature seen so far, rescaling them
// by exp(old shift - new shift) when a larger one arrives (as the online softmax does).
Tensor LinearAttention::step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) {
  auto& s = state_of<LinearState>(state, "LinearAttention::step");
  check_masks(q, k, {});
  std::vector<Tensor> outputs;
  for (int64_t t = 0; t < q.size(2); ++t) {
    const Tensor q_t = narrow(q, 2, t, 1), k_t = narrow(k, 2, t, 1), v_t = narrow(v, 2, t, 1);  // (B,H,1,*)
    if (!map_->keys_over_positions()) {
      const Tensor phi_q = map_->query_features(q_t), phi_k = map_->key_features(k_t);
      const Tensor sums = matmul(phi_k, v_t, {.transpose_a = true});  // (B,H,M,D)
      s.sums = s.positions ? s.sums + sums : sums;
      s.normaliser = s.positions ? s.normaliser + phi_k : phi_k;
      outputs.push_back(matmul(phi_q, s.sums) / (matmul(phi_q, s.normaliser, {.transpose_b = true}) + kNormaliserEps));
    } else {
      const Tensor shift = s.positions ? maximum(s.shift, k_t.detach()) : k_t.detach();
      const Tensor keys = exp(k_t - shift);  // (B,H,1,M)
      if (s.positions) {
        const Tensor rescale = exp(s.shift - shift);  // (B,H,1,M), <= 1
        s.sums = s.sums * transpose(rescale, 2, 3) + matmul(keys, v_t, {.transpose_a = true});
        s.normaliser = s.normaliser * rescale + keys;
      } else {
        s.sums = matmul(keys, v_t, {.transpose_a = true});
        s.normaliser = keys;
      }
      s.shift = shift;
      outputs.push_back(matmul(map_->query_features(q_t) / s.normaliser, s.sums));
    }
    ++s.positions;
  }
  return concat(outputs, 2);
}

std::string LinearAttention::describe() const {
  const auto* favor = dynamic_cast<const FavorFeatures*>(map_.get());
  return cat("feature_map=", map_->name(), ", chunk=", own_.chunk,
             favor ? cat(", random_features=", favor->random_features() ? std::to_string(favor->random_features()) : "D ln D")
                   : "");
}

KindDescription linear_attention_kind() {
  using Settings = LinearAttention::Settings;
  return {.name = LinearAttention::kName,
          .defaults = Settings{},
          .settings = {kind_setting(&Settings::feature_map, {.key = "feature_map",
                                                             .flag = "--feature-map",
                                                             .help = "the feature map phi",
                                                             .choices = feature_map_names(),
                                                             .compared = true}),
                       kind_setting(&Settings::chunk, {.key = "chunk",
                                                       .flag = "--chunk",
                                                       .help = "positions per chunk of the causal product",
                                                       .min = 1,
                                                       .max = 4096,  // the kernel's (C,C) scratch: 64 MiB per thread at most
                                                       .causal_only = true}),
                       kind_setting(&Settings::random_features,
                                    {.key = "random_features", .help = "favor: M features (0: D ln D)"})},
          .make = [](const AttentionSettings& s, Generator&) { return std::make_shared<LinearAttention>(s); },
          .describe = [](const AttentionSettings& s, bool causal) {
            const Settings& own = s.kind.as<Settings>();
            return cat("linear (feature map ", own.feature_map, causal ? cat(", chunk ", own.chunk) : "", ")");
          },
          .kept_scores = [](const AttentionSettings&, int64_t) -> int64_t { return 0; },  // the chunked product keeps none
          // the (M,D) sum and the M-wide normaliser
          .state_numbers = [](const AttentionSettings& s, int64_t, int64_t head_dim, bool) {
            const Settings& own = s.kind.as<Settings>();
            const auto map = make_feature_map(own.feature_map, {.random_features = own.random_features});
            return map->features(head_dim) * (head_dim + 1);
          }};
}

AttentionSettings linear_attention_settings(const std::string& feature_map, int64_t chunk) {
  return {.kind = LinearAttention::Settings{.feature_map = feature_map, .chunk = chunk}};
}

}  // namespace ladder::nn
