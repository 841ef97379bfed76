#include "nn/attention/full_attention.h"

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

FullAttention::FullAttention(const AttentionSettings& settings, Generator& gen)
    : AttentionKind("FullAttention"), dropout_(settings.dropout), gen_(gen.child()) {
  checked_settings<Settings>(settings);
  if (!(dropout_ >= 0 && dropout_ < 1)) fail("FullAttention", "dropout must be in [0, 1), got ", dropout_);
  register_generator(gen_);
}

// The fused op under the masks, with the kind's own dropout on the weights, drawn from its generator.
Tensor FullAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) {
  return scaled_dot_product_attention(q, k, v,
                                      {.causal = masks.causal, .causal_offset = masks.causal_offset,
                                       .key_padding_mask = masks.key_padding_mask, .dropout = dropout_,
                                       .training = is_training(), .generator = &gen_});
}

std::unique_ptr<AttentionState> FullAttention::start() const { return std::make_unique<KeyValueState>(); }

// The new keys and values join the cache; the T_new queries are its last positions, so query i
// sees the L earlier ones and new ones j <= i: causal_offset = L.
Tensor FullAttention::step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) {
  auto& cache = state_of<KeyValueState>(state, "FullAttention::step");
  const int64_t earlier = cache.length();
  if (earlier > 0 && cache.keys.size(0) != q.size(0))
    fail("FullAttention::step", "the state holds ", cache.keys.size(0), " sequences but q ", shape_str(q.shape()),
         " has B = ", q.size(0), "; keep one state per batch (start() a new one to start again)");
  cache.keys = earlier ? concat({cache.keys, k}, 2) : k;
  cache.values = earlier ? concat({cache.values, v}, 2) : v;
  return attend(q, cache.keys, cache.values, {.causal = true, .causal_offset = earlier});
}

Tensor FullAttention::implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  return attention_weights(q, k,
                           {.causal = masks.causal, .causal_offset = masks.causal_offset,
                            .key_padding_mask = masks.key_padding_mask, .dropout = dropout_,
                            .training = is_training(), .generator = &gen_});
}

std::string FullAttention::describe() const { return cat("dropout=", dropout_); }

KindDescription full_attention_kind() {
  return {.name = FullAttention::kName,
          .defaults = FullAttention::Settings{},
          .make = [](const AttentionSettings& s, Generator& gen) { return std::make_shared<FullAttention>(s, gen); },
          .describe = [](const AttentionSettings&, bool) { return std::string("full (softmax)"); },
          .kept_scores = [](const AttentionSettings&, int64_t) -> int64_t { return 0; },  // the fused op keeps none
          .state_numbers = [](const AttentionSettings&, int64_t length, int64_t head_dim, bool) {
            return 2 * length * head_dim;  // every key and value
          }};
}

AttentionSettings full_attention() { return {}; }

}  // namespace ladder::nn
