// The registry of attention kinds: one description per kind, written in the kind's own file and
// listed in attention_registry.cpp (an include and one line each). Everything that offers a choice
// of kinds reads it, so a kind added there appears everywhere by itself: make_attention, the
// lessons' flags (harness/attention_flags.h), checkpoints (models/gpt.cpp), ./ladder bench
// attention, lesson 15's contenders, the lessons' memory estimates and the tests of every kind.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.h"
#include "core/random.h"
#include "nn/attention/attention_kind.h"

namespace ladder::nn {

// A setting's value as code that serves every kind holds it (flags, checkpoints, tests): a whole
// number (chunk), yes or no (global_blocks) or a word (feature_map).
using SettingValue = std::variant<int64_t, bool, std::string>;

// One field of a kind's settings struct, described once: what flags, checkpoints and messages call
// it, what it may hold, and how to read and write it (kind_setting() fills get and set in from the
// field's member pointer).
struct KindSetting {
  std::string key;   // the checkpoint's field, and the setting's name in messages: "chunk"
  std::string flag;  // the lessons' flag, "--chunk"; empty: none (set in code only)
  std::string help;  // what it sets, for --help: "positions per chunk of the causal product"
  int64_t min = 0, max = std::numeric_limits<int64_t>::max();  // a number's range
  std::vector<std::string> choices;  // a word's choices
  bool causal_only = false;  // read only when the attention is causal (linear's chunk)
  bool compared = false;     // a word whose every choice lesson 15 trains (linear's feature_map)
  std::function<SettingValue(const KindSettings&)> get;
  std::function<void(KindSettings&, const SettingValue&)> set;  // a value of the field's type
};

// `setting` as the description of the field `member` of the settings struct Own.
template <class Own, class T>
KindSetting kind_setting(T Own::*member, KindSetting setting) {
  static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, bool> || std::is_same_v<T, std::string>,
                "a kind's setting is a whole number (int64_t), true or false (bool) or a word (std::string)");
  setting.get = [member](const KindSettings& kind) -> SettingValue { return kind.as<Own>().*member; };
  setting.set = [member, key = setting.key](KindSettings& kind, const SettingValue& value) {
    if (!std::holds_alternative<T>(value)) fail("KindSetting::set", key, " takes a value of another type");
    kind.as<Own>().*member = std::get<T>(value);
  };
  return setting;
}

// The directions a kind attends in: most attend both ways; Linformer's projection along the sequence
// mixes every position (bidirectional only); a kind whose past is a recurrent state only would be
// causal only.
enum class Directions { both, causal_only, bidirectional_only };

// Why settings would do full attention's work, only slower, over a sequence (BigBird's pattern
// listing every key block), in the kind's own words and flags.
struct WastedPattern {
  std::string why;  // "in 4 blocks lets every query block see every key block"
  std::string fix;  // "give --attention-block 3 (...)"; empty: no settings of the kind fit that length
};

struct KindDescription {
  std::string name;  // --attention NAME
  // The kind's settings struct as it starts, LinearAttention::Settings{}: its type is the kind.
  KindSettings defaults;
  Directions directions = Directions::both;
  std::string why_one_way;  // for messages, when it attends one way only (Linformer: its projection mixes every position)
  bool self_attention_only = false;  // queries and keys must be one sequence (T = S): no cross attention
  std::vector<KindSetting> settings;  // every field of the settings struct, once
  // Builds the kind; draws what it starts with (dropout seeds, codebooks, projections) from gen.
  std::function<std::shared_ptr<AttentionKind>(const AttentionSettings&, Generator&)> make;
  // One line for a lesson: "linear (feature map elu, chunk 64)", `causal` saying how it attends.
  // (Inside a model summary a kind describes itself as every Module does: Module::describe().)
  std::function<std::string(const AttentionSettings&, bool causal)> describe;
  // What it costs, for the lessons' estimates and charts: the scores per query it keeps for
  // backward over `length` positions (0 when its op keeps none), at most `length`;
  std::function<int64_t(const AttentionSettings&, int64_t length)> kept_scores;
  // and the numbers a query reads per head of width head_dim (its state), over `length` positions.
  std::function<int64_t(const AttentionSettings&, int64_t length, int64_t head_dim, bool causal)> state_numbers;
  // For a kind whose sparsity can grow to cover a whole sequence (BigBird): whether it would over
  // `length` positions (its why, empty when not). Null: it never does.
  std::function<WastedPattern(const AttentionSettings&, int64_t length, bool causal)> wasted_over;
  // The forms ./ladder bench attention times it in, each with the suffix of its name there
  // (Transformer-VQ: the paper's sizes, and "_plain"); empty: its defaults alone.
  std::vector<std::pair<std::string, KindSettings>> measured;

  bool attends(bool causal) const;  // whether it attends in that direction
  bool describes(const KindSettings& kind) const;  // whether these are its settings
  // Fails unless every field of `kind` (this kind's settings) is in its range and choices, naming
  // the kind and the field.
  void check(const KindSettings& kind) const;
};

// Every kind, in the registry's order.
const std::vector<KindDescription>& attention_kinds();
// The kind `name` names; an unknown name fails listing the kinds there are.
const KindDescription& registered_kind(const std::string& name);
// The kind whose settings these are; a struct no kind registered fails.
const KindDescription& registered_kind(const KindSettings& kind);
std::vector<std::string> attention_kind_names();
// Whether these are the default kind's settings (full attention, KindSettings{}): what the other
// kinds are compared with, and what a model's summary leaves unnamed.
bool is_default_kind(const KindSettings& kind);

// The settings of kind Own, each field checked against its description: what a kind's constructor reads.
template <class Own>
const Own& checked_settings(const AttentionSettings& settings) {
  const Own& own = settings.kind.as<Own>();
  registered_kind(settings.kind).check(settings.kind);
  return own;
}

}  // namespace ladder::nn
