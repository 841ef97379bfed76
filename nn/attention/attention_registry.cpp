#include "nn/attention/attention_registry.h"

#include "core/error.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/full_attention.h"
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
  };
  return kinds;
}

const KindDescription& registered_kind(const std::string& name) {
  for (const KindDescription& kind : attention_kinds())
    if (kind.name == name) return kind;
  fail("make_attention", "unknown attention kind '", name, "'; the kinds are ", joined_names(attention_kind_names()));
}

std::vector<std::string> attention_kind_names() {
  std::vector<std::string> names;
  for (const KindDescription& kind : attention_kinds()) names.push_back(kind.name);
  return names;
}

bool KindDescription::attends(bool causal) const {
  return directions == Directions::both || (directions == Directions::causal_only) == causal;
}

const KindSetting& KindDescription::setting(const std::string& setting_name) const {
  std::vector<std::string> names;
  for (const KindSetting& setting : settings) {
    if (setting.name == setting_name) return setting;
    names.push_back(setting.name);
  }
  fail((name + " attention").c_str(), "has no setting '", setting_name, "'; ",
       names.empty() ? std::string("it has none") : "its settings are " + joined_names(names));
}

}  // namespace ladder::nn
