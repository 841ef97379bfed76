#include "nn/attention/vq_attention.h"

#include <algorithm>
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"

namespace ladder::nn {

namespace {

constexpr const char* kExact = VQAttention::kExact;
constexpr const char* kStopped = VQAttention::kStopped;

// Refuses what Transformer-VQ cannot attend: cross attention, and a causal offset.
void check_call(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  const char* op = "VQAttention";
  if (q.dim() != 4 || k.dim() != 4 || q.size(2) != k.size(2))
    fail(op, "Transformer-VQ attends within one sequence: q (B,H,T,D) and k (B,H,S,D) need T = S, got ",
         shape_str(q.shape()), " and ", shape_str(k.shape()), "; use full attention for cross attention");
  if (masks.causal_offset != 0)
    fail(op, "causal_offset ", masks.causal_offset, " is not supported; to continue a sequence use start() and step()");
  const Tensor& mask = masks.key_padding_mask;
  if (mask.defined() && mask.shape() != Shape{k.size(0), k.size(2)})
    fail(op, "key_padding_mask must be (B,S) = (", k.size(0), ",", k.size(2), ") (1 = real key, 0 = padding), got ",
         shape_str(mask.shape()));
}

// Hides the padding keys of every head from every query: their code index becomes -1. indices (B,H,T).
void hide_padding(std::vector<int64_t>& indices, const Tensor& key_padding_mask, int64_t heads) {
  if (!key_padding_mask.defined()) return;
  const int64_t B = key_padding_mask.size(0), T = key_padding_mask.size(1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      if (key_padding_mask.data()[b * T + t] == 0)
        for (int64_t h = 0; h < heads; ++h) indices[static_cast<size_t>((b * heads + h) * T + t)] = -1;
}

}  // namespace

VQAttention::VQAttention(const AttentionSettings& settings, Generator& gen)
    : AttentionKind("VQAttention") {
  const Settings& own = checked_settings<Settings>(settings);
  block_ = own.block, normalise_ = own.normalise, stop_cache_gradient_ = own.cache_gradient == kStopped;
  if (settings.heads < 1 || settings.head_dim < 1)
    fail("VQAttention", "needs the heads it attends with to size its codebooks (H,S,D), got heads = ",
         settings.heads, " and head_dim = ", settings.head_dim,
         "; set AttentionSettings::heads and head_dim (MultiheadAttention does)");
  quantizer = register_module(
      "quantizer", std::make_shared<VectorQuantizer>(own.codes, settings.head_dim,
                                                     VectorQuantizerOptions{.heads = settings.heads}, gen));
  if (own.position_bias)
    positions = register_module("positions", std::make_shared<RelativePositions>(settings.heads, settings.head_dim,
                                                                                 score_root(settings.head_dim), gen));
}

VQAttentionOptions VQAttention::options(bool causal) const {
  VQAttentionOptions options{.block = block_, .causal = causal, .stop_cache_gradient = stop_cache_gradient_};
  if (normalise_) options.scale = 1.0f;  // q and k carry D^-1/4 each
  return options;
}

float VQAttention::score_root(int64_t head_dim) const {
  return normalise_ ? std::pow(static_cast<float>(head_dim), -0.25f) : 1.0f;
}

// q, k (B,H,T,D). Normalised: rms_norm(x) D^-1/4 for both, and the position terms scaled alike (the
// paper's code scales u, v and r by D^-1/4 too: RelativePositions's scale), so that every score keeps 1/sqrt(D).
VQAttention::Prepared VQAttention::prepare(const Tensor& q, const Tensor& k, bool causal) {
  const int64_t D = q.size(3);
  const Tensor root = full({D}, score_root(D));  // the norm's gain: D^-1/4 in the same pass
  Prepared out{normalise_ ? rms_norm(q, {D}, root) : q, normalise_ ? rms_norm(k, {D}, root) : k, {}};
  if (!positions) return out;
  out.bias = {out.queries + positions->position_query_bias(), positions->offsets(block_, causal)};
  out.queries = out.queries + positions->content_query_bias();
  return out;
}

// k (B,H,T,D) -> its codes (straight through), then the block-wise op over them.
Tensor VQAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) {
  check_call(q, k, masks);
  const Prepared in = prepare(q, k, masks.causal);
  QuantizedKeys keys = quantizer->quantize(in.keys, masks.key_padding_mask);
  hide_padding(keys.indices, masks.key_padding_mask, quantizer->heads());
  return vq_attention(in.queries, keys.keys, keys.indices, quantizer->codes, v, options(masks.causal), in.bias);
}

Tensor VQAttention::implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  check_call(q, k, masks);
  // A training forward that asks for its weights (MultiheadAttention) is still a training forward:
  // it records the commitment loss and the EMA statistics as attend() does.
  const Prepared in = prepare(q, k, masks.causal);
  QuantizedKeys keys = quantizer->quantize(in.keys, masks.key_padding_mask);
  hide_padding(keys.indices, masks.key_padding_mask, quantizer->heads());
  return vq_attention_weights(in.queries, keys.keys, keys.indices, quantizer->codes, options(masks.causal), in.bias);
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
  NoGradGuard no_grad;
  const Prepared in = prepare(q, k, /*causal=*/true);
  // Generation needs only each key's code: no straight-through estimator, no commitment loss.
  const CodeAssignment assigned = nearest_codes(in.keys, quantizer->codes);
  return vq_attention_step(s.cache, in.queries, assigned.indices, quantizer->codes, v, options(true), in.bias);
}

std::string VQAttention::describe() const {
  return cat("block=", block_, ", codes=", quantizer->num_codes(), ", normalise=", normalise_ ? "true" : "false",
             ", position_bias=", positions ? "true" : "false", ", cache_gradient=",
             stop_cache_gradient_ ? kStopped : kExact);
}

KindDescription vq_attention_kind() {
  using Settings = VQAttention::Settings;
  constexpr int64_t kPaperSize = 512;  // the paper's codes per head and positions per block
  Settings plain{.block = kPaperSize, .codes = kPaperSize, .normalise = false, .position_bias = false};
  return {.name = VQAttention::kName,
          .defaults = Settings{},
          .directions = Directions::both,
          .self_attention_only = true,
          .settings = {kind_setting(&Settings::block, {.key = "block",
                                                       .flag = "--attention-block",
                                                       .help = "L, positions per block",
                                                       .min = 1,
                                                       .max = 65536}),
                       kind_setting(&Settings::codes, {.key = "codes",
                                                       .flag = "--codes",
                                                       .help = "S, the codes of each head's codebook",
                                                       .min = 1,
                                                       .max = 4096}),  // each query scores every code: (B,H,T,S)
                       kind_setting(&Settings::normalise,
                                    {.key = "normalise",
                                     .help = "q and k RMS-normalised and scaled by D^-1/4 before the keys are rounded"}),
                       kind_setting(&Settings::position_bias,
                                    {.key = "position_bias",
                                     .help = "Transformer-XL's relative position term inside each query's window"}),
                       kind_setting(&Settings::cache_gradient,
                                    {.key = "cache_gradient",
                                     .flag = "--cache-gradient",
                                     .help = "exact: every query's gradient reaches the keys and values it reads; stopped: "
                                             "keys and values learn from their own block's queries only",
                                     .choices = {kExact, kStopped}})},
          .make = [](const AttentionSettings& s, Generator& gen) { return std::make_shared<VQAttention>(s, gen); },
          .describe = [](const AttentionSettings& s, bool) {
            const Settings& own = s.kind.as<Settings>();
            std::string parts;
            if (own.normalise) parts += ", q and k normalised";
            if (own.position_bias) parts += ", position bias";
            if (own.cache_gradient == kStopped) parts += ", gradient stopped at the cache";
            return cat("vq (blocks of ", own.block, ", ", own.codes, " codes per head", parts, ")");
          },
          // the scores of its window (its block and the one before) and of every code
          .kept_scores = [](const AttentionSettings& s, int64_t length) {
            const Settings& own = s.kind.as<Settings>();
            return std::min(2 * own.block + own.codes, length);
          },
          // the keys and values of the blocks it reads exactly (its own and the one before, and both
          // ways the one after too), and per code its row, its value sum and its count
          .state_numbers = [](const AttentionSettings& s, int64_t length, int64_t head_dim, bool causal) {
            const Settings& own = s.kind.as<Settings>();
            return 2 * head_dim * std::min(length, (causal ? 2 : 3) * own.block) + own.codes * (2 * head_dim + 1);
          },
          // the paper's form, and plain: what normalisation and the position bias cost beside the op's own cost
          .measured = {{"", Settings{.block = kPaperSize, .codes = kPaperSize}}, {"_plain", plain}}};
}

AttentionSettings vq_attention_settings(int64_t block, int64_t codes) {
  return {.kind = VQAttention::Settings{.block = block, .codes = codes}};
}

}  // namespace ladder::nn
