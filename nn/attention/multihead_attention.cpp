#include "nn/attention/multihead_attention.h"

#include "core/error.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/rotary.h"
#include "nn/init.h"

namespace ladder::nn {

namespace {

// x (B,L,H*D) -> (B,H,L,D): each head gets its own slice of the features.
Tensor split_heads(const Tensor& x, int64_t num_heads) {
  const int64_t B = x.size(0), L = x.size(1), E = x.size(2);
  return permute(reshape(x, {B, L, num_heads, E / num_heads}), {0, 2, 1, 3});
}

// x (B,H,L,D) -> (B,L,H*D): the heads' outputs side by side again.
Tensor merge_heads(const Tensor& x) {
  const int64_t B = x.size(0), H = x.size(1), L = x.size(2), D = x.size(3);
  return reshape(permute(x, {0, 2, 1, 3}), {B, L, H * D});
}

// x (B,L,E) @ w^T + b, with w (n,E) and b (n) rows [start, start + n) of the stacked projections.
Tensor project(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t start, int64_t n) {
  return linear(x, narrow(weight, 0, start, n), bias.defined() ? narrow(bias, 0, start, n) : Tensor());
}

void check_key_padding_mask(const char* op, const Tensor& mask, int64_t B, int64_t S) {
  if (mask.defined() && (mask.dim() != 2 || mask.size(0) != B || mask.size(1) != S))
    fail(op, "key_padding_mask must be (B,S) = (", B, ",", S, ") (1 = real key, 0 = padding), got ",
         shape_str(mask.shape()));
}

}  // namespace

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, MultiheadAttentionOptions options,
                                       Generator& gen)
    : Module("MultiheadAttention"), num_heads_(num_heads), options_(options) {
  if (embed_dim <= 0 || num_heads <= 0)
    fail("MultiheadAttention", "embed_dim and num_heads must be positive, got ", embed_dim, " and ", num_heads);
  if (embed_dim % num_heads != 0)
    fail("MultiheadAttention", "embed_dim ", embed_dim, " is not divisible by num_heads ", num_heads,
         "; each head takes embed_dim / num_heads features, so choose num_heads dividing embed_dim");
  if (options.rotary && (embed_dim / num_heads) % 2 != 0)
    fail("MultiheadAttention", "rotary needs an even head size, got embed_dim / num_heads = ", embed_dim, " / ",
         num_heads, " = ", embed_dim / num_heads);
  if (!(options.dropout >= 0 && options.dropout < 1))
    fail("MultiheadAttention", "dropout must be in [0, 1), got ", options.dropout);
  AttentionSettings attention = options.attention;
  attention.dropout = options.dropout;
  attention.heads = num_heads;
  attention.head_dim = embed_dim / num_heads;
  attention_kind = register_module("attention", make_attention(attention, gen));  // draws its dropout seeds
  in_proj_weight = register_parameter("in_proj_weight", empty({3 * embed_dim, embed_dim}));
  init_weight(in_proj_weight, Init::xavier, gen);
  if (options.bias) in_proj_bias = register_parameter("in_proj_bias", zeros({3 * embed_dim}), ParamKind::bias);
  out_proj = register_module("out_proj", std::make_shared<Linear>(embed_dim, embed_dim, LinearOptions{.bias = options.bias}, gen));
  if (options.bias) out_proj->bias.fill_(0);
}

void MultiheadAttention::check_inputs(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const MultiheadAttentionCall& call) const {
  const int64_t E = embed_dim();
  for (const auto& [name, t] : {std::pair{"query", &query}, {"key", &key}, {"value", &value}})
    if (t->dim() != 3 || t->size(2) != E)
      fail("MultiheadAttention", name, " must be (B,L,", E, ") (batch first, embed_dim last), got ",
           shape_str(t->shape()));
  if (key.size(0) != query.size(0) || value.size(0) != query.size(0) || key.size(1) != value.size(1))
    fail("MultiheadAttention", "query (B,T,E), key and value (B,S,E) must agree on B and S, got query ",
         shape_str(query.shape()), ", key ", shape_str(key.shape()), ", value ", shape_str(value.shape()));
  check_key_padding_mask("MultiheadAttention", call.key_padding_mask, key.size(0), key.size(1));
}

AttentionHeads MultiheadAttention::project_heads(const Tensor& query, const Tensor& key, const Tensor& value,
                                                 const MultiheadAttentionCall& call) const {
  check_inputs(query, key, value, call);
  const int64_t E = embed_dim();
  Tensor q, k, v;
  if (query.is_same(key) && key.is_same(value)) {
    // Self attention: one GEMM for the three projections, as PyTorch does.
    const std::vector<Tensor> parts = chunk(linear(query, in_proj_weight, in_proj_bias), 3, -1);  // (B,T,3E)
    q = parts[0], k = parts[1], v = parts[2];
  } else {
    q = project(query, in_proj_weight, in_proj_bias, 0, E);
    k = project(key, in_proj_weight, in_proj_bias, E, E);
    v = project(value, in_proj_weight, in_proj_bias, 2 * E, E);
  }
  q = split_heads(q, num_heads_), k = split_heads(k, num_heads_), v = split_heads(v, num_heads_);  // (B,H,L,D)
  if (options_.rotary) {
    q = rotary_embedding(q, call.position_offset, options_.rotary_base);
    k = rotary_embedding(k, call.position_offset, options_.rotary_base);
  }
  return {q, k, v};
}

AttentionHeads MultiheadAttention::memory_heads(const Tensor& query, const ProjectedMemory& memory,
                                                const MultiheadAttentionCall& call) const {
  const int64_t E = embed_dim();
  if (!memory.keys.defined() || memory.keys.dim() != 4 || memory.keys.size(1) != num_heads_)
    fail("MultiheadAttention::forward_memory", "memory must hold keys and values (B,", num_heads_,
         ",S,D) from project_memory, got keys ", memory.keys.defined() ? shape_str(memory.keys.shape()) : "undefined");
  const int64_t B = memory.keys.size(0), S = memory.keys.size(2);
  if (query.dim() != 3 || query.size(0) != B || query.size(2) != E)
    fail("MultiheadAttention::forward_memory", "query must be (B,T,E) = (", B, ",T,", E, ") for a memory of ", B,
         " sequences, got ", shape_str(query.shape()));
  check_key_padding_mask("MultiheadAttention::forward_memory", call.key_padding_mask, B, S);
  const Tensor q = split_heads(project(query, in_proj_weight, in_proj_bias, 0, E), num_heads_);  // (B,H,T,D)
  return {q, memory.keys, memory.values};
}

// The heads, then the kind's attention over them (or the weights it implies, when asked for), merged
// and projected out.
MultiheadAttentionOutput MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                     const MultiheadAttentionCall& call) {
  MultiheadAttentionOutput out{.heads = call.memory ? memory_heads(query, *call.memory, call)
                                                    : project_heads(query, key, value, call)};
  const AttentionHeads& heads = out.heads;
  const AttendMasks masks{
      .causal = call.causal, .causal_offset = call.causal_offset, .key_padding_mask = call.key_padding_mask};
  Tensor attended;  // (B,H,T,D)
  if (call.weights == AttentionWeights::none) {
    attended = attention_kind->attend(heads.q, heads.k, heads.v, masks);
  } else {
    const Tensor weights = attention_kind->implied_weights(heads.q, heads.k, masks);  // (B,H,T,S)
    attended = matmul(weights, heads.v);
    out.weights = call.weights == AttentionWeights::averaged ? mean(weights, {1}) : weights;
  }
  out.output = out_proj->forward(merge_heads(attended));
  return out;
}

Tensor MultiheadAttention::forward_step(const Tensor& x, AttentionState& state) {
  // rotary positions continue the sequence
  const AttentionHeads heads = project_heads(x, x, x, {.position_offset = state.length()});
  return out_proj->forward(merge_heads(attention_kind->step(heads.q, heads.k, heads.v, state)));
}

ProjectedMemory MultiheadAttention::project_memory(const Tensor& memory) const {
  check_inputs(memory, memory, memory, {});
  if (options_.rotary)
    fail("MultiheadAttention::project_memory", "rotary attention rotates keys by their positions; a memory projected "
         "once is for cross attention, build it without rotary");
  const int64_t E = embed_dim();
  return {.keys = split_heads(project(memory, in_proj_weight, in_proj_bias, E, E), num_heads_),
          .values = split_heads(project(memory, in_proj_weight, in_proj_bias, 2 * E, E), num_heads_)};
}

MultiheadAttentionOutput MultiheadAttention::forward_memory(const Tensor& query, const ProjectedMemory& memory,
                                                            MultiheadAttentionCall call) {
  call.memory = &memory;
  return forward(query, query, query, call);
}

Tensor MultiheadAttention::forward(const Tensor& x) { return forward(x, x, x).output; }

std::string MultiheadAttention::describe() const {
  return cat("embed_dim=", embed_dim(), ", num_heads=", num_heads_, ", dropout=", options_.dropout,
             ", bias=", in_proj_bias.defined() ? "true" : "false", options_.rotary ? ", rotary" : "",
             is_default_kind(options_.attention.kind) ? "" : ", attention=" + options_.attention.kind_name());
}

}  // namespace ladder::nn
