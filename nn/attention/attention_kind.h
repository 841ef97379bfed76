// The attention kinds: one interface that full softmax attention, linear attention, BigBird and
// Transformer-VQ (vq, causal only) all offer, so that a model takes its attention as a setting (--attention NAME)
// and never changes its own code. Every call works on heads already split: q (B,H,T,D) and
// k, v (B,H,S,D). Adding a kind means its own file, one line in make_attention (attention_kind.cpp)
// and its tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "nn/module.h"

namespace ladder::nn {

// Everything a kind may be built with; each kind reads its own fields and ignores the rest.
struct AttentionSettings {
  std::string kind = "full";  // one of attention_kind_names()
  float dropout = 0;          // full: on the weights, in training mode
  // linear: the feature map phi, one of feature_map_names(): "elu" (elu(x) + 1), "cos" ([1; x/|x|],
  // so that phi(q) . phi(k) = 1 + cos(q, k)), "softmax" (double softmax: q over its features, k over
  // the positions), "favor" (Performer's positive orthogonal random features)
  std::string feature_map = "elu";
  int64_t chunk = 64;            // linear, causal: positions per chunk of the fused product
  int64_t random_features = 0;   // linear, favor: M features (0: D ln D for heads of width D)
  // bigbird: blocks of `block` positions, `random_blocks` random key blocks per query block, drawn
  // from (seed, layer): give each layer of a model its own index; global_blocks = false drops the
  // global first and last blocks (with random_blocks = 0: the sliding window alone); favor draws its
  // projection from (seed, layer) too
  // vq: `block` is L, the positions per block of Transformer-VQ (each block reads itself and the
  // block before exactly, older keys through the per-code cache)
  int64_t block = 64;
  int64_t random_blocks = 3;
  bool global_blocks = true;
  uint64_t seed = 0;
  int64_t layer = 0;
  // vq: S, the codes of each head's codebook (the paper uses 512 for long texts; small models on
  // toy text need far fewer)
  int64_t codes = 64;
  // The heads the kind will attend with, H heads of width D: filled in by the layer that builds the
  // kind (MultiheadAttention); vq sizes its codebooks (H,S,D) by them, the other kinds ignore them.
  int64_t heads = 0;
  int64_t head_dim = 0;
};

// Which keys a query may see: padding (B,S) 1 = real key, and causality (key j <= i + causal_offset).
struct AttendMasks {
  bool causal = false;
  int64_t causal_offset = 0;  // full only; other kinds need T = S when causal
  Tensor key_padding_mask;
};

// What generation carries from step to step, for one batch of sequences: the full kind keeps every
// key and value (a KV cache), linear attention a fixed-size sum. Made by AttentionKind::start().
class AttentionState {
 public:
  virtual ~AttentionState() = default;
  virtual int64_t length() const = 0;  // positions fed so far
  // A copy that steps on independently (the tensors are shared: a step replaces them, never
  // writes into them).
  virtual std::unique_ptr<AttentionState> clone() const = 0;
};

// The state as the kind that made it (a state of another kind fails, naming `kind`).
template <class State>
State& state_of(AttentionState& state, const char* kind) {
  auto* own = dynamic_cast<State*>(&state);
  if (!own) fail(kind, "this state was started by another attention kind; start() one from this layer's kind");
  return *own;
}

class AttentionKind : public Module {
 public:
  // q (B,H,T,D), k and v (B,H,S,D) -> (B,H,T,D), for a whole sequence (training, encoding).
  virtual Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttendMasks& masks) = 0;
  // An empty state for causal generation.
  virtual std::unique_ptr<AttentionState> start() const = 0;
  // q, k, v (B,H,T_new,D) of new positions continuing the sequence in `state` (causal): new
  // position i sees every earlier position and itself -> (B,H,T_new,D), equal to the last T_new
  // rows of attend() over the whole sequence; the state takes in the new keys and values.
  virtual Tensor step(const Tensor& q, const Tensor& k, const Tensor& v, AttentionState& state) = 0;
  // The (B,H,T,S) matrix that attend() multiplies v by, written out: for maps and tests, small sizes.
  virtual Tensor implied_weights(const Tensor& q, const Tensor& k, const AttendMasks& masks) = 0;

 protected:
  using Module::Module;
};

std::vector<std::string> attention_kind_names();
// Whether a kind attends causally only (vq: Transformer-VQ is a decoder), so that a bidirectional
// encoder must not take it.
bool is_causal_only(const std::string& kind);
// "a, b, c": a list of names (kinds, feature maps) for messages and --help.
std::string joined_names(const std::vector<std::string>& names);
// The kind settings.kind names; an unknown name or setting fails with the names there are.
std::shared_ptr<AttentionKind> make_attention(const AttentionSettings& settings, Generator& gen = default_generator());

}  // namespace ladder::nn
