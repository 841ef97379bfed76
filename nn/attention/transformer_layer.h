// The Transformer's layers as torch.nn.TransformerEncoderLayer and TransformerDecoderLayer
// (batch_first=True) compute them, with PyTorch's submodule names (self_attn, multihead_attn,
// linear1, linear2, norm1..norm3, dropout, dropout1..dropout3), so that state dicts map one to one.
//   post-LN (norm_first = false, the original paper's "Add & Norm"): x = norm(x + sublayer(x))
//   pre-LN  (norm_first = true, GPT-2's):                            x = x + sublayer(norm(x))
// Pre-LN keeps an unnormalised path from input to output, which trains without a warmup.
#pragma once

#include <cstdint>
#include <memory>

#include "nn/attention/multihead_attention.h"
#include "nn/dropout.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norm.h"

namespace ladder::nn {

enum class FeedForwardActivation { relu, gelu };

struct TransformerLayerOptions {
  int64_t dim_feedforward = 2048;  // the hidden width of the position-wise feed-forward block
  float dropout = 0.1f;            // on the attention weights and after every sublayer
  FeedForwardActivation activation = FeedForwardActivation::relu;
  bool norm_first = false;
  float layer_norm_eps = 1e-5f;
  bool rotary = false;  // rotary positions in the self-attention (MultiheadAttentionOptions::rotary)
  // The self attention's kind (nn/attention/attention_kind.h); cross attention is always full.
  // A stack gives its layer i the layer index i.
  AttentionSettings attention;
};

// Masks in ladder's polarity: 1 = a real position, 0 = padding (PyTorch's *_key_padding_mask are
// the opposite, True = ignore).
struct EncoderMasks {
  Tensor src_key_padding_mask;  // (B,T)
  bool causal = false;          // position i sees positions j <= i
};

struct DecoderMasks {
  Tensor tgt_key_padding_mask;     // (B,T)
  Tensor memory_key_padding_mask;  // (B,S): the source's padding, for the cross attention
  bool causal = true;              // the decoder's self attention sees no later target position
};

// The parts both layers share: sizes checked, the feed-forward block, dropouts after sublayers.
class TransformerLayer : public Module {
 public:
  int64_t d_model() const { return d_model_; }

  std::shared_ptr<Linear> linear1, linear2;  // E -> dim_feedforward -> E
  std::shared_ptr<Dropout> dropout;          // inside the feed-forward block

 protected:
  TransformerLayer(const char* type_name, int64_t d_model, int64_t nhead, const TransformerLayerOptions& options);
  void add_feed_forward(Generator& gen);  // linear1, dropout, linear2, registered in PyTorch's order
  // x (B,T,E) -> linear2(dropout(activation(linear1(x)))) (B,T,E)
  Tensor feed_forward(const Tensor& x);
  // The residual step around one sublayer f, pre-LN x + drop(f(norm(x))) or post-LN
  // norm(x + drop(f(x))), in two halves so that each layer calls its f in plain sight:
  // sublayer_input(x) is what f reads, residual_output(x, f's output) what the step gives.
  Tensor sublayer_input(const Tensor& x, LayerNorm& norm) const;
  Tensor residual_output(const Tensor& x, const Tensor& f_out, LayerNorm& norm, Dropout& drop) const;
  // The whole residual step around the feed-forward block.
  Tensor feed_forward_step(const Tensor& x, LayerNorm& norm, Dropout& drop);
  std::string describe() const override;

  TransformerLayerOptions options_;

 private:
  int64_t d_model_, nhead_;
};

// Self attention then feed-forward, each with its residual step.
class TransformerEncoderLayer : public TransformerLayer {
 public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, TransformerLayerOptions options = {},
                          Generator& gen = default_generator());
  // src (B,T,E) -> (B,T,E). With `weights`, also the self attention's weights per head (B,H,T,T)
  // there (the naive path, for attention maps).
  Tensor forward(const Tensor& src, const EncoderMasks& masks, Tensor* weights = nullptr);
  Tensor forward(const Tensor& src) override { return forward(src, {}); }

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<LayerNorm> norm1, norm2;
  std::shared_ptr<Dropout> dropout1, dropout2;
};

// The attention weights of one decoder layer per head, for attention maps.
struct DecoderLayerWeights {
  Tensor self;   // (B,H,T,T): the masked self attention
  Tensor cross;  // (B,H,T,S): the cross attention over the memory
};

// Masked self attention, cross attention over the encoder's output (memory), then feed-forward.
class TransformerDecoderLayer : public TransformerLayer {
 public:
  TransformerDecoderLayer(int64_t d_model, int64_t nhead, TransformerLayerOptions options = {},
                          Generator& gen = default_generator());
  // tgt (B,T,E), memory (B,S,E) -> (B,T,E); with `weights`, also both attentions' weights there.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const DecoderMasks& masks = {},
                 DecoderLayerWeights* weights = nullptr);
  // Generation: new target positions x (B,T_new,E) continue those whose self-attention state
  // `self_state` holds (self_attn->start_state(): the KV cache, which self_attn->forward_step
  // extends); `memory` is the source's keys and values projected once by
  // multihead_attn->project_memory. Equals the last T_new rows of the causal forward() over the
  // whole target so far (without target padding) -> (B,T_new,E).
  Tensor forward_step(const Tensor& x, AttentionState& self_state, const ProjectedMemory& memory,
                      const Tensor& memory_key_padding_mask);

  std::shared_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;
  std::shared_ptr<Dropout> dropout1, dropout2, dropout3;
};

}  // namespace ladder::nn
