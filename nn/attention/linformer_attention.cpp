#include "nn/attention/linformer_attention.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "nn/init.h"

namespace ladder::nn {

namespace {

const char* kWhyBidirectional =
    "its projection along the sequence mixes every position, so a query would see the keys after it";

[[noreturn]] void refuse_causal(const char* op) {
  fail(op, "Linformer attention is bidirectional only (", kWhyBidirectional,
       "); call it with causal = false, or give a decoder another attention kind");
}

}  // namespace

LinformerAttention::LinformerAttention(const AttentionSettings& settings, Generator& gen)
    : AttentionKind("LinformerAttention"), dropout_(settings.dropout), gen_(gen.child()) {
  register_generator(gen_);
  const int64_t rows = checked_settings<Settings>(settings).k, longest = settings.max_length;
  if (longest < 1)
    fail("LinformerAttention", "needs the longest sequence it will see to size E and F (k, n), got max_length = ",
         longest, "; set AttentionSettings::max_length (EncoderClassifier and Transformer fill it in)");
  if (!(dropout_ >= 0 && dropout_ < 1)) fail("LinformerAttention", "dropout must be in [0, 1), got ", dropout_);
  E = register_parameter("E", empty({rows, longest}));
  F = register_parameter("F", empty({rows, longest}));
  for (const Tensor& projection : {E, F}) init_normal(projection, 0, 1.0f / std::sqrt(static_cast<float>(rows)), gen);
}

std::pair<Tensor, Tensor> LinformerAttention::weights_and_values_projection(const Tensor& q, const Tensor& k,
                                                                           const AttendMasks& masks) {
  const char* op = "LinformerAttention";
  if (masks.causal) refuse_causal(op);
  if (q.dim() != 4 || k.dim() != 4)
    fail(op, "q and k must be (B,H,T,D) and (B,H,S,D), got ", shape_str(q.shape()), " and ", shape_str(k.shape()));
  const int64_t B = k.size(0), S = k.size(2), longest = E.size(1);
  if (S > longest)
    fail(op, "k has S = ", S, " positions but E and F were made for ", longest,
         " (max_length); build the model with a max_len of at least ", S);
  Tensor keys_projection = narrow(E, 1, 0, S), values_projection = narrow(F, 1, 0, S);  // (k,S)
  Tensor keys = k;
  if (masks.key_padding_mask.defined()) {  // padding keys (and their values) add nothing to the k mixtures
    if (masks.key_padding_mask.shape() != Shape{B, S})
      fail(op, "key_padding_mask must be (B,S) = (", B, ",", S, ") (1 = real key, 0 = padding), got ",
           shape_str(masks.key_padding_mask.shape()));
    const Tensor real = reshape(masks.key_padding_mask.detach(), {B, 1, S, 1});
    keys = keys * real;
    values_projection = values_projection * reshape(masks.key_padding_mask.detach(), {B, 1, 1, S});  // (B,1,k,S)
  }
  const Tensor projected_keys = matmul(keys_projection, keys);  // (k,S) @ (B,H,S,D) -> (B,H,k,D)
  const float scale = 1.0f / std::sqrt(static_cast<float>(q.size(3)));
  const Tensor weights = softmax(matmul(q, projected_keys, {.transpose_b = true}) * scale, -1);  // (B,H,T,k)
  return {dropout(weights, dropout_, is_training(), gen_), values_projection};
}

Tensor LinformerAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) {
  const auto [weights, values_projection] = weights_and_values_projection(q, k, masks);
  return matmul(weights, matmul(values_projection, v));  // (B,H,T,k) @ ((k,S) @ (B,H,S,D)) -> (B,H,T,D)
}

Tensor LinformerAttention::implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  const auto [weights, values_projection] = weights_and_values_projection(q, k, masks);
  return matmul(weights, values_projection);  // (B,H,T,k) @ (k,S) -> (B,H,T,S)
}

std::unique_ptr<AttentionState> LinformerAttention::start() const {
  refuse_causal("LinformerAttention::start");
}

Tensor LinformerAttention::step(const Tensor&, const Tensor&, const Tensor&, AttentionState&) {
  refuse_causal("LinformerAttention::step");
}

std::string LinformerAttention::describe() const { return cat("k=", E.size(0), ", n=", E.size(1), ", dropout=", dropout_); }

KindDescription linformer_attention_kind() {
  using Settings = LinformerAttention::Settings;
  return {.name = LinformerAttention::kName,
          .defaults = Settings{},
          .directions = Directions::bidirectional_only,
          .why_one_way = kWhyBidirectional,
          .settings = {kind_setting(&Settings::k, {.key = "k",
                                                   .flag = "--linformer-k",
                                                   .help = "k, the rows E and F project the keys and values to along the sequence",
                                                   .min = 1,
                                                   .max = 65536})},
          .make = [](const AttentionSettings& s, Generator& gen) { return std::make_shared<LinformerAttention>(s, gen); },
          .describe = [](const AttentionSettings& s, bool) {
            return cat("linformer (keys and values projected to k = ", s.kind.as<Settings>().k, " rows)");
          },
          // the weights over the k projected keys
          .kept_scores = [](const AttentionSettings& s, int64_t length) { return std::min(s.kind.as<Settings>().k, length); },
          // the k projected keys and values
          .state_numbers = [](const AttentionSettings& s, int64_t, int64_t head_dim, bool) {
            return 2 * s.kind.as<Settings>().k * head_dim;
          }};
}

}  // namespace ladder::nn
