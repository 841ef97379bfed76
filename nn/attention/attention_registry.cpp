#include "nn/attention/attention_registry.h"

#include <algorithm>

#include "core/error.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/delta_attention.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/gated_delta_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/linformer_attention.h"
#include "nn/attention/vq_attention.h"

namespace ladder::nn {

// The registry: one line per kind, in the order lessons and benchmarks list them.
const std::vector<KindDescription>& attention_kinds() {
  static const std::vector<KindDescription> kinds = {
      full_attention_kind(),
      linear_attention_kind(),
      bigbird_attention_kind(),
      vq_attention_kind(),
      linformer_attention_kind(),
      delta_attention_kind(),
      gated_delta_attention_kind(),
  };
  return kinds;
}

const KindDescription& registered_kind(const std::string& name) {
  for (const KindDescription& kind : attention_kinds())
    if (kind.name == name) return kind;
  fail("make_attention", "unknown attention kind '", name, "'; the kinds are ", joined_names(attention_kind_names()));
}

const KindDescription& registered_kind(const KindSettings& settings) {
  for (const KindDescription& kind : attention_kinds())
    if (kind.describes(settings)) return kind;
  fail("make_attention", "these settings (", settings.type().name(), ") are no registered kind's; the kinds are ",
       joined_names(attention_kind_names()));
}

std::vector<std::string> attention_kind_names() {
  std::vector<std::string> names;
  for (const KindDescription& kind : attention_kinds()) names.push_back(kind.name);
  return names;
}

bool is_default_kind(const KindSettings& kind) { return kind.type() == KindSettings().type(); }

bool KindDescription::attends(bool causal) const {
  return directions == Directions::both || (directions == Directions::causal_only) == causal;
}

bool KindDescription::describes(const KindSettings& kind) const { return kind.type() == defaults.type(); }

void KindDescription::check(const KindSettings& kind) const {
  const std::string op = name + " attention";
  for (const KindSetting& setting : settings) {
    const SettingValue value = setting.get(kind);
    if (const auto* number = std::get_if<int64_t>(&value); number && (*number < setting.min || *number > setting.max))
      fail(op.c_str(), setting.key, " must be ",
           setting.max == std::numeric_limits<int64_t>::max() ? cat(">= ", setting.min)
                                                               : cat("from ", setting.min, " to ", setting.max),
           ", got ", *number);
    const auto* word = std::get_if<std::string>(&value);
    if (word && !setting.choices.empty() &&
        std::find(setting.choices.begin(), setting.choices.end(), *word) == setting.choices.end())
      fail(op.c_str(), "unknown ", setting.key, " '", *word, "'; the choices are ", joined_names(setting.choices));
  }
}

}  // namespace ladder::nn
