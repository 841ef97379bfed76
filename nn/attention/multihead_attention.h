// Multi-head attention as torch.nn.MultiheadAttention (batch_first=True) computes it, with its
// parameter names and layouts, so that weights move between the two unchanged:
//   in_proj_weight (3E,E) = W_q, W_k, W_v stacked; in_proj_bias (3E); out_proj.weight (E,E), out_proj.bias (E).
// query (B,T,E), key and value (B,S,E) -> output (B,T,E). Inside, each of the H heads attends with
// its own D = E/H features: (B,H,T,D) through the attention kind, by default full attention (core's
// fused scaled_dot_product_attention).
#pragma once

#include <cstdint>
#include <memory>

#include "core/ops.h"
#include "nn/attention/attention_kind.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace ladder::nn {

struct MultiheadAttentionOptions {
  float dropout = 0;   // on the attention weights, in training mode only
  bool bias = true;    // in_proj_bias and out_proj.bias
  bool rotary = false;  // rotate q and k by their positions (rotary_embedding) instead of adding positions
  float rotary_base = 10000.0f;
  // What the heads compute once projected (nn/attention/attention_kind.h): full softmax attention by
  // default, or linear, bigbird, ...; its dropout is the field above.
  AttentionSettings attention;
};

// Which attention weights forward returns. Asking for them runs the naive path, which holds the
// (B,H,T,S) weights; without them the fused op never builds that matrix.
enum class AttentionWeights { none, averaged, per_head };

// A source's keys and values for cross attention, projected once by project_memory and read by
// every decoding step. It never grows (unlike a self attention's KV cache, nn::KeyValueState).
struct ProjectedMemory {
  Tensor keys, values;  // (B,H,S,D)
};

// What one call attends to. Masks follow ladder's polarity: key_padding_mask is 1 for a real key
// and 0 for padding, the opposite of PyTorch's boolean key_padding_mask (True = ignore).
struct MultiheadAttentionCall {
  Tensor key_padding_mask;  // (B,S), or undefined: every key is real
  bool causal = false;      // query i sees keys j <= i + causal_offset
  int64_t causal_offset = 0;
  int64_t position_offset = 0;  // rotary only: the position of the first query and of the first key
  AttentionWeights weights = AttentionWeights::none;
  // Cross attention to keys and values projected once (forward_memory sets it): forward then
  // projects the query alone and reads neither key nor value.
  const ProjectedMemory* memory = nullptr;
};

// The heads one call attends with, after the input projections (and rotary): what the attention
// kind saw, handed back for maps (attention_kind->implied_weights(q, k, masks)) and for reading keys.
struct AttentionHeads {
  Tensor q;     // (B,H,T,D)
  Tensor k, v;  // (B,H,S,D)
};

struct MultiheadAttentionOutput {
  Tensor output;   // (B,T,E)
  Tensor weights;  // (B,T,S) averaged over heads, (B,H,T,S) per head, or undefined; after dropout, as PyTorch's
  AttentionHeads heads;  // the q, k, v the kind attended with
};

class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, MultiheadAttentionOptions options = {},
                     Generator& gen = default_generator());
  // Self attention: query = key = value; cross attention: key = value = the source (memory).
  MultiheadAttentionOutput forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const MultiheadAttentionCall& call = {});
  Tensor forward(const Tensor& x) override;  // self attention without masks -> (B,T,E)
  // Generation, causal self attention: new tokens x (B,T_new,E) continue the sequence whose state
  // the kind carries (start_state(): for full attention the KV cache nn::KeyValueState, for linear
  // attention a fixed-size sum). Projects only x (rotary positions start at the state's length) and
  // lets the kind's step() take in its keys and values and attend -> (B,T_new,E), equal to the rows
  // of a causal forward over the whole sequence that belong to the new tokens.
  std::unique_ptr<AttentionState> start_state() const { return attention_kind->start(); }
  Tensor forward_step(const Tensor& x, AttentionState& state);
  // Cross attention to a memory that stays the same from call to call (a decoder reading its source
  // step by step): project_memory projects memory (B,S,E) into keys and values split into heads,
  // once; forward_memory attends query (B,T,E) to them, equal to forward(query, memory, memory, call).
  // Not for rotary attention (the source has no target positions).
  ProjectedMemory project_memory(const Tensor& memory) const;
  MultiheadAttentionOutput forward_memory(const Tensor& query, const ProjectedMemory& memory,
                                          MultiheadAttentionCall call = {});

  int64_t embed_dim() const { return in_proj_weight.size(1); }
  int64_t num_heads() const { return num_heads_; }

  Tensor in_proj_weight;  // (3E,E), xavier-uniform as in PyTorch
  Tensor in_proj_bias;    // (3E), zeros; undefined without bias
  std::shared_ptr<Linear> out_proj;  // E -> E; its bias starts at zero, as in PyTorch
  std::shared_ptr<AttentionKind> attention_kind;  // no parameters for full, linear and bigbird

 protected:
  std::string describe() const override;

 private:
  void check_inputs(const Tensor& query, const Tensor& key, const Tensor& value,
                    const MultiheadAttentionCall& call) const;
  // The input projections split into heads (and rotated from call.position_offset when rotary),
  // after checking the inputs.
  AttentionHeads project_heads(const Tensor& query, const Tensor& key, const Tensor& value,
                               const MultiheadAttentionCall& call) const;
  // The query's projection split into heads, beside the memory's keys and values, after checking them.
  AttentionHeads memory_heads(const Tensor& query, const ProjectedMemory& memory, const MultiheadAttentionCall& call) const;
  int64_t num_heads_;
  MultiheadAttentionOptions options_;
};

}  // namespace ladder::nn
