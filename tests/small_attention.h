// Settings of an attention kind for small tests, chosen by setting name rather than by kind: every
// kind of the registry takes the values of `small` for the settings it has and ignores the others.
#pragma once

#include <string>

#include "nn/attention/attention_registry.h"

namespace ladder::testing {

inline nn::AttentionSettings small_attention(const std::string& kind, const nn::SettingValues& small) {
  nn::AttentionSettings settings{.kind = kind};
  for (const nn::KindSetting& setting : nn::registered_kind(kind).settings)
    if (small.count(setting.name)) settings.values[setting.name] = small.at(setting.name);
  return settings;
}

}  // namespace ladder::testing
