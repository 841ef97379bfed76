// The registry of attention kinds: one description per kind, written in the kind's own file and
// listed in attention_registry.cpp (an include and one line each). Everything that offers a choice
// of kinds reads it, so a kind added there appears everywhere by itself: make_attention, the
// lessons' flags (harness/attention_flags.h), checkpoints (models/gpt.cpp), ./ladder bench
// attention, lesson 15's contenders and the tests of every kind.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/random.h"
#include "nn/attention/attention_kind.h"

namespace ladder::nn {

// One of a kind's own settings.
struct KindSetting {
  std::string name;  // the key in AttentionSettings::values and the checkpoint's field: "chunk"
  std::string flag;  // the lessons' flag, "--chunk"; empty: none (set in code only)
  std::string help;  // what it sets, for --help: "positions per chunk of the causal product"
  SettingValue default_value;
  int64_t min = 0, max = std::numeric_limits<int64_t>::max();  // a number's range
  std::vector<std::string> choices;  // a word's choices
  bool causal_only = false;  // read only when the attention is causal (linear's chunk)
  bool compared = false;     // a word whose every choice lesson 15 trains (linear's feature_map)
};

// The directions a kind attends in: most attend both ways; Linformer's projection along the sequence
// mixes every position (bidirectional only); a kind whose past is a recurrent state only would be
// causal only.
enum class Directions { both, causal_only, bidirectional_only };

struct KindDescription {
  std::string name;  // --attention NAME, AttentionSettings::kind
  Directions directions = Directions::both;
  std::string why_one_way;  // for messages, when it attends one way only (Linformer: its projection mixes every position)
  bool self_attention_only = false;  // queries and keys must be one sequence (T = S): no cross attention
  std::vector<KindSetting> settings;
  // Builds the kind; draws what it starts with (dropout seeds, codebooks, projections) from gen.
  std::function<std::shared_ptr<AttentionKind>(const AttentionSettings&, Generator&)> make;
  // One line for a lesson: "linear (feature map elu, chunk 64)", `causal` saying how it attends.
  // (Inside a model summary a kind describes itself as every Module does: Module::describe().)
  std::function<std::string(const AttentionSettings&, bool causal)> describe;

  bool attends(bool causal) const;  // whether it attends in that direction
  // The setting `name`; one the kind does not have fails, naming the kind and its settings.
  const KindSetting& setting(const std::string& name) const;
};

// Every kind, in the registry's order.
const std::vector<KindDescription>& attention_kinds();
// The kind `name` names; an unknown name fails listing the kinds there are.
const KindDescription& registered_kind(const std::string& name);
std::vector<std::string> attention_kind_names();

}  // namespace ladder::nn
