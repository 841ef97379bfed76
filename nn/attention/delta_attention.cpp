#include "nn/attention/delta_attention.h"

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

namespace {

constexpr float kUnitEps = 1e-6f;  // under the norm: a zero query or key stays zero, never NaN

const char* kWhyCausal =
    "its state is written position by position, each write reading what the ones before left; a bidirectional "
    "form is not defined here";

// x / |x| along the last dim: (B,H,T,D).
Tensor unit_rows(const Tensor& x) { return x / sqrt(sum(x * x, {-1}, /*keepdim=*/true) + kUnitEps); }

}  // namespace

Tensor per_head_projection(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const int64_t H = x.size(1), D = x.size(3);
  return sum(x * reshape(weight, {1, H, 1, D}), {3}) + reshape(bias, {1, H, 1});
}

DeltaAttention::DeltaAttention(const AttentionSettings& settings)
    : DeltaAttention("DeltaAttention", settings, checked_settings<Settings>(settings).chunk) {}

DeltaAttention::DeltaAttention(const char* module_name, const AttentionSettings& settings, int64_t chunk)
    : AttentionKind(module_name), chunk_(chunk) {
  if (settings.heads < 1 || settings.head_dim < 1)
    fail(module_name, "needs its heads and their width to size beta's projection, got heads = ", settings.heads,
         " and head_dim = ", settings.head_dim, "; set AttentionSettings::heads and head_dim (MultiheadAttention fills them in)");
  // Zero weights: every write starts at strength sigmoid(0) = 1/2, and learns from the key what to write.
  beta_weight = register_parameter("beta_weight", zeros({settings.heads, settings.head_dim}));
  beta_bias = register_parameter("beta_bias", zeros({settings.heads}), ParamKind::bias);
}

Tensor DeltaAttention::log_decay(const Tensor&) const { return Tensor(); }

void DeltaAttention::check(const Tensor& q, const Tensor& k, const AttendMasks& masks) const {
  const char* op = type_name().c_str();
  if (!masks.causal) fail(op, "attends causally only: ", kWhyCausal, "; call it with causal = true");
  if (masks.causal_offset != 0)
    fail(op, "causal_offset ", masks.causal_offset, " is not supported; to continue a sequence use start() and step()");
  if (q.dim() != 4 || k.shape() != q.shape())
    fail(op, "q and k must be (B,H,T,D) of one shape (self-attention over one sequence), got ", shape_str(q.shape()),
         " and ", shape_str(k.shape()));
  if (q.size(1) != heads() || q.size(3) != beta_weight.size(1))
    fail(op, "was built for ", heads(), " heads of width ", beta_weight.size(1), ", got q ", shape_str(q.shape()));
  const Tensor& mask = masks.key_padding_mask;
  if (mask.defined() && mask.shape() != Shape{k.size(0), k.size(2)})
    fail(op, "key_padding_mask must be (B,S) = (", k.size(0), ",", k.size(2), ") (1 = real key, 0 = padding), got ",
         shape_str(mask.shape()));
}

DeltaAttention::Prepared DeltaAttention::prepared(const Tensor& q, const Tensor& k, const Tensor& key_padding_mask) const {
  Prepared p{unit_rows(q), unit_rows(k), sigmoid(per_head_projection(k, beta_weight, beta_bias)), log_decay(k)};
  if (key_padding_mask.defined()) {
    const Tensor real = reshape(key_padding_mask.detach(), {k.size(0), 1, k.size(2)});
    p.beta = p.beta * real;
    if (p.log_alpha.defined()) p.log_alpha = p.log_alpha * real;
  }
  return p;
}

Tensor DeltaAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) {
  check(q, k, masks);
  const Prepared p = prepared(q, k, masks.key_padding_mask);
  return delta_rule(p.q, p.k, v, p.beta, p.log_alpha, chunk_);
}

Tensor DeltaAttention::implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) {
  check(q, k, masks);
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2);
  Tensor identity = zeros({B, H, T, T});  // value j is the j-th unit vector
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t t = 0; t < T; ++t) identity.data()[(bh * T + t) * T + t] = 1.0f;
  const Prepared p = prepared(q, k, masks.key_padding_mask);
  return delta_rule_naive(p.q, p.k, identity, p.beta, p.log_alpha);
}

std::unique_ptr<AttentionState> DeltaAttention::start() const { return std::make_unique<DeltaState>(); }

// One position at a time, the recurrent form generation runs: read what the state holds for the
// key, write the difference to the value, then the query reads the state.
Tensor DeltaAttention::step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) {
  auto& s = state_of<DeltaState>(state, "DeltaAttention::step");
  check(q, k, {.causal = true});
  const int64_t B = q.size(0), H = q.size(1);
  if (s.positions == 0) s.memory = zeros({B, H, q.size(3), v.size(3)});
  std::vector<Tensor> outputs;
  for (int64_t t = 0; t < q.size(2); ++t) {
    const Prepared p = prepared(narrow(q, 2, t, 1), narrow(k, 2, t, 1), Tensor());  // (B,H,1,D), beta (B,H,1)
    const Tensor beta = reshape(p.beta, {B, H, 1, 1});
    const Tensor alpha = p.log_alpha.defined() ? exp(reshape(p.log_alpha, {B, H, 1, 1})) : Tensor();
    const Tensor decayed = alpha.defined() ? s.memory * alpha : s.memory;  // alpha S_{t-1}
    const Tensor written = beta * (narrow(v, 2, t, 1) - matmul(p.k, decayed));  // u_t (B,H,1,E)
    s.memory = decayed + matmul(p.k, written, {.transpose_a = true});           // + k_t u_t^T
    outputs.push_back(matmul(p.q, s.memory));
    ++s.positions;
  }
  return concat(outputs, 2);
}

std::string DeltaAttention::describe() const { return cat("chunk=", chunk_); }

KindDescription delta_attention_kind() {
  using Settings = DeltaAttention::Settings;
  return {.name = DeltaAttention::kName,
          .defaults = Settings{},
          .directions = Directions::causal_only,
          .why_one_way = kWhyCausal,
          .self_attention_only = true,
          .settings = {kind_setting(&Settings::chunk, {.key = "chunk",
                                                       .flag = "--chunk",
                                                       .help = "positions per chunk of the delta rule's training form",
                                                       .min = 1,
                                                       .max = 4096,
                                                       .causal_only = true})},
          .make = [](const AttentionSettings& s, Generator&) { return std::make_shared<DeltaAttention>(s); },
          .describe = [](const AttentionSettings& s, bool) {
            return cat("delta (the delta rule, chunk ", s.kind.as<Settings>().chunk, ")");
          },
          .kept_scores = [](const AttentionSettings&, int64_t) -> int64_t { return 0; },  // the op keeps its inputs only
          .state_numbers = [](const AttentionSettings&, int64_t, int64_t head_dim, bool) { return head_dim * head_dim; }};
}

AttentionSettings delta_attention_settings(int64_t chunk) { return {.kind = DeltaAttention::Settings{.chunk = chunk}}; }

}  // namespace ladder::nn
