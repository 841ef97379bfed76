#include "nn/attention/vq_attention.h"

#include "core/error.h"

namespace ladder::nn {

namespace {

// Refuses what Transformer-VQ cannot attend: anything but causal self attention, and padding
// that is not at the end of its row.
void check_call(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  const char* op = "VQAttention";
  if (q.dim() != 4 || k.dim() != 4 || q.size(2) != k.size(2))
    fail(op, "Transformer-VQ attends within one sequence: q (B,H,T,D) and k (B,H,S,D) need T = S, got ",
         shape_str(q.shape()), " and ", shape_str(k.shape()), "; use full attention for cross attention");
  if (!masks.causal)
    fail(op, "Transformer-VQ attention is causal only (a decoder: older blocks reach later queries through a "
         "per-code cache); call it with causal = true, or give a bidirectional encoder another attention kind");
  if (masks.causal_offset != 0)
    fail(op, "causal_offset ", masks.causal_offset, " is not supported; to continue a sequence use start() and step()");
  const Tensor& mask = masks.key_padding_mask;
  if (!mask.defined()) return;
  const int64_t B = k.size(0), S = k.size(2);
  if (mask.shape() != Shape{B, S})
    fail(op, "key_padding_mask must be (B,S) = (", B, ",", S, ") (1 = real key, 0 = padding), got ",
         shape_str(mask.shape()));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 1; j < S; ++j)
      if (mask.data()[b * S + j] != 0 && mask.data()[b * S + j - 1] == 0)
        fail(op, "row ", b, " of key_padding_mask has a real key at position ", j, " after padding at ", j - 1,
             "; Transformer-VQ does not mask keys, so padding must come after all of a row's real keys "
             "(causal queries at real positions then never see it): pad at the end, or use full attention");
}

}  // namespace

VQAttention::VQAttention(const AttentionSettings& settings, Generator& gen)
    : AttentionKind("VQAttention"), block_(settings.number("block")) {
  if (settings.heads < 1 || settings.head_dim < 1)
    fail("VQAttention", "needs the heads it attends with to size its codebooks (H,S,D), got heads = ",
         settings.heads, " and head_dim = ", settings.head_dim,
         "; set AttentionSettings::heads and head_dim (MultiheadAttention does)");
  quantizer = register_module(
      "quantizer", std::make_shared<VectorQuantizer>(settings.number("codes"), settings.head_dim,
                                                     VectorQuantizerOptions{.heads = settings.heads}, gen));
}

// k (B,H,T,D) -> its codes (straight through), then the block-wise op over them.
Tensor VQAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) {
  check_call(q, k, masks);
  const QuantizedKeys keys = quantizer->quantize(k, masks.key_padding_mask);
  return vq_attention(q, keys.keys, keys.indices, quantizer->codes, v, options());
}

Tensor VQAttention::implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  check_call(q, k, masks);
  // A training forward that asks for its weights (MultiheadAttention) is still a training forward:
  // it records the commitment loss and the EMA statistics as attend() does.
  const QuantizedKeys keys = quantizer->quantize(k, masks.key_padding_mask);
  return vq_attention_weights(q, keys.keys, keys.indices, quantizer->codes, options());
}

std::unique_ptr<AttentionState> VQAttention::start() const {
  auto state = std::make_unique<VQState>();
  state->block = block_;
  state->codes = quantizer->num_codes();
  return state;
}

Tensor VQAttention::step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) {
  auto& s = state_of<VQState>(state, "VQAttention::step");
  if (s.block != block_ || s.codes != quantizer->num_codes())
    fail("VQAttention::step", "the state was started by a layer with block ", s.block, " and ", s.codes,
         " codes, this layer has block ", block_, " and ", quantizer->num_codes(),
         " codes; start() a state from this layer");
  const QuantizedKeys keys = quantizer->assign(k);
  return vq_attention_step(s.cache, q, keys.keys, keys.indices, quantizer->codes, v, options());
}

std::string VQAttention::describe() const { return cat("block=", block_, ", codes=", quantizer->num_codes()); }

KindDescription vq_attention_kind() {
  return {.name = VQAttention::kName,
          .directions = Directions::causal_only,
          .why_one_way = "Transformer-VQ is a decoder",
          .self_attention_only = true,
          .settings = {{.name = "block",
                        .flag = "--attention-block",
                        .help = "L, positions per block",
                        .default_value = int64_t{64},
                        .min = 1},
                       {.name = "codes",
                        .flag = "--codes",
                        .help = "S, the codes of each head's codebook",
                        .default_value = int64_t{64},
                        .min = 1}},
          .make = [](const AttentionSettings& s, Generator& gen) { return std::make_shared<VQAttention>(s, gen); },
          .describe = [](const AttentionSettings& s, bool) {
            return cat("vq (blocks of ", s.number("block"), ", ", s.number("codes"), " codes per head)");
          }};
}

AttentionSettings vq_attention_settings(int64_t block, int64_t codes) {
  return {.kind = VQAttention::kName, .values = {{"block", block}, {"codes", codes}}};
}

}  // namespace ladder::nn
