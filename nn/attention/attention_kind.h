// The attention kinds: one interface that full softmax attention, linear attention, BigBird,
// Transformer-VQ and Linformer all offer, so that a model takes its attention as a setting (--attention NAME)
// and never changes its own code. Every call works on heads already split: q (B,H,T,D) and
// k, v (B,H,S,D). Each kind describes itself once in the registry (nn/attention/attention_registry.h):
// its name, its settings struct and each of its fields, the directions it attends in, how it is
// built and what it costs.
#pragma once

#include <any>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "nn/module.h"

namespace ladder::nn {

struct AttentionSettings;

// One kind's own settings, whichever kind: the kind's settings struct, whose type is the kind
// (LinearAttention::Settings{.chunk = 8} is linear attention in chunks of 8). A kind reads its
// settings as fields, kind.as<LinearAttention::Settings>().chunk, so a misspelt one does not
// compile; code that serves every kind (flags, checkpoints, tests) reads and writes them through
// the fields the registry describes (KindSetting).
class KindSettings {
 public:
  KindSettings();  // full attention's, which has none: the default kind
  template <class Own>
    requires(std::is_aggregate_v<Own> && !std::is_same_v<Own, AttentionSettings>)
  KindSettings(Own own) : held_(std::move(own)) {}

  // The struct as kind Own's; settings of another kind fail, naming both kinds.
  template <class Own>
  const Own& as() const {
    if (const Own* own = std::any_cast<Own>(&held_)) return *own;
    fail_other_kind(typeid(Own));
  }
  template <class Own>
  Own& as() {
    if (Own* own = std::any_cast<Own>(&held_)) return *own;
    fail_other_kind(typeid(Own));
  }
  // The struct as kind Own's, or null when it is another kind's.
  template <class Own>
  const Own* find() const {
    return std::any_cast<Own>(&held_);
  }
  const std::type_info& type() const { return held_.type(); }

 private:
  [[noreturn]] void fail_other_kind(const std::type_info& wanted) const;
  std::any held_;
};

// What a kind is built with: its own settings, and what every kind shares.
struct AttentionSettings {
  KindSettings kind;  // which kind, with its own settings: full attention by default
  float dropout = 0;  // on the weights, in training mode (the kinds that form them)
  // With the layer's index in its model: the seed of what a layer draws on its own (BigBird's random
  // blocks, FAVOR+'s features), so that each layer draws its own and a rebuilt model the same.
  uint64_t seed = 0;
  int64_t layer = 0;
  // Filled in by the model that builds the kind: H heads of width D (MultiheadAttention; vq sizes its
  // codebooks (H,S,D) by them), and the longest sequence the layer will see (a model's max_len).
  int64_t heads = 0;
  int64_t head_dim = 0;
  int64_t max_length = 0;

  const std::string& kind_name() const;  // the name its kind registered: "linear"
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

// "a, b, c": a list of names (kinds, feature maps) for messages and --help.
std::string joined_names(const std::vector<std::string>& names);
// The kind settings.kind holds, built by its registered make(); a setting outside its range or
// choices fails, naming the kind and the setting.
std::shared_ptr<AttentionKind> make_attention(const AttentionSettings& settings, Generator& gen = default_generator());

}  // namespace ladder::nn
