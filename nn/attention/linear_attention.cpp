#include "nn/attention/linear_attention.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "nn/attention/favor_features.h"
#include "nn/attention/layer_seed.h"

namespace ladder::nn {

namespace {

constexpr float kNormaliserEps = 1e-6f;  // elu, cos: added to phi(q) . sum phi(k) (core's default)
constexpr float kSmallestSum = 1e-30f;   // softmax: a floor for Z, reached only when every key underflows

}  // namespace

std::vector<std::string> feature_map_names() { return {"elu", "cos", "softmax", "favor"}; }

LinearAttention::LinearAttention(const AttentionSettings& settings)
    : AttentionKind("LinearAttention"),
      feature_map_(settings.feature_map),
      chunk_(settings.chunk),
      random_features_(settings.random_features),
      seed_(settings.seed),
      layer_(settings.layer) {
  const std::vector<std::string> maps = feature_map_names();
  if (std::find(maps.begin(), maps.end(), feature_map_) == maps.end())
    fail("LinearAttention", "unknown feature map '", feature_map_, "'; the feature maps are ", joined_names(maps));
  if (chunk_ < 1) fail("LinearAttention", "chunk must be >= 1, got ", chunk_);
  if (random_features_ < 0) fail("LinearAttention", "random_features must be >= 0 (0: D ln D), got ", random_features_);
  if (feature_map_ == "favor") redraws_ = register_buffer("redraws", zeros({1}));
}

Tensor LinearAttention::projection(int64_t head_dim) const {
  if (feature_map_ != "favor") fail("LinearAttention::projection", "only the favor feature map has a projection");
  const auto redraws = static_cast<int64_t>(redraws_.data()[0]);
  if (projection_redraws_ != redraws || projection_.size(1) != head_dim) {
    const int64_t features = random_features_ > 0 ? random_features_ : favor_feature_count(head_dim);
    // Redraw r's draw number; the offset keeps it clear of small ones (BigBird's query blocks 0, 1, ...).
    Generator gen(layer_seed(seed_, layer_, static_cast<uint64_t>(redraws) * 7919u + 0xFA404ull));
    projection_ = orthogonal_gaussian(features, head_dim, gen);
    projection_redraws_ = redraws;
  }
  return projection_;
}

void LinearAttention::redraw_features() {
  if (feature_map_ != "favor") fail("LinearAttention::redraw_features", "only the favor feature map draws features");
  redraws_.data()[0] += 1;
}

Tensor LinearAttention::query_features(const Tensor& q) const {
  if (feature_map_ == "favor") return favor_features(q, projection(q.size(-1)), /*shift_rows=*/true);
  if (feature_map_ == "elu") return elu(q) + 1.0f;
  if (feature_map_ == "cos") {
    const Tensor unit = q / sqrt(sum(q * q, {-1}, /*keepdim=*/true) + 1e-12f);
    Shape one = q.shape();
    one.back() = 1;
    return concat({ones(one), unit}, -1);  // [1; q/|q|]
  }
  return softmax(q, -1);
}

Tensor LinearAttention::key_features(const Tensor& k) const {
  if (feature_map_ == "softmax")
    fail("LinearAttention::key_features", "double softmax normalises keys over the positions, not one key at a time; "
         "use implied_weights or attend");
  if (feature_map_ == "favor") return favor_features(k, projection(k.size(-1)), /*shift_rows=*/false);
  return query_features(k);
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
  return {softmax(q, -1) / clamp(totals, kSmallestSum, INFINITY), keys};
}

Tensor LinearAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) {
  check_masks(q, k, masks);
  if (feature_map_ == "elu")  // the op applies elu + 1 itself, inside the chunks when causal
    return linear_attention(q, k, v,
                            {.causal = masks.causal, .key_padding_mask = masks.key_padding_mask,
                             .eps = kNormaliserEps, .chunk = chunk_, .elu_features = true});
  if (feature_map_ != "softmax")
    return linear_attention(query_features(q), key_features(k), v,
                            {.causal = masks.causal, .key_padding_mask = masks.key_padding_mask,
                             .eps = kNormaliserEps, .chunk = chunk_});
  const auto [queries, keys] = double_softmax_parts(q, k, masks);
  if (masks.causal) return causal_linear_product(queries, keys, v, chunk_);
  return matmul(queries, matmul(keys, v, {.transpose_a = true}));  // q' (k'^T v): (B,H,T,M) @ (B,H,M,D)
}

Tensor LinearAttention::implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  check_masks(q, k, masks);
  if (feature_map_ != "softmax")
    return linear_attention_weights(query_features(q), key_features(k),
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
    if (feature_map_ != "softmax") {
      const Tensor phi_q = query_features(q_t), phi_k = key_features(k_t);
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
      outputs.push_back(matmul(softmax(q_t, -1) / s.normaliser, s.sums));
    }
    ++s.positions;
  }
  return concat(outputs, 2);
}

std::string LinearAttention::describe() const {
  return cat("feature_map=", feature_map_, ", chunk=", chunk_,
             feature_map_ == "favor" ? cat(", random_features=", random_features_ ? std::to_string(random_features_) : "D ln D")
                                     : "");
}

}  // namespace ladder::nn
