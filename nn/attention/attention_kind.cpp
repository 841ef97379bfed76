#include "nn/attention/attention_kind.h"

#include <algorithm>

#include "core/error.h"
#include "nn/attention/attention_registry.h"

namespace ladder::nn {

namespace {

const char* type_name(const SettingValue& value) {
  if (std::holds_alternative<int64_t>(value)) return "a whole number";
  return std::holds_alternative<bool>(value) ? "true or false" : "a word";
}

// Fails unless `value` fits `setting` of `kind`: its type, its range or its choices.
void check_value(const std::string& kind, const KindSetting& setting, const SettingValue& value) {
  const std::string op = kind + " attention";
  if (value.index() != setting.default_value.index())
    fail(op.c_str(), setting.name, " must be ", type_name(setting.default_value), ", got ", type_name(value));
  if (const auto* number = std::get_if<int64_t>(&value); number && (*number < setting.min || *number > setting.max))
    fail(op.c_str(), setting.name, " must be ",
         setting.max == std::numeric_limits<int64_t>::max() ? cat(">= ", setting.min)
                                                             : cat("from ", setting.min, " to ", setting.max),
         ", got ", *number);
  const auto* word = std::get_if<std::string>(&value);
  if (word && !setting.choices.empty() &&
      std::find(setting.choices.begin(), setting.choices.end(), *word) == setting.choices.end())
    fail(op.c_str(), "unknown ", setting.name, " '", *word, "'; the choices are ", joined_names(setting.choices));
}

// The setting `name` of `settings` as a T: asking a word for a number is a mistake in the code.
template <class T>
T typed(const AttentionSettings& settings, const std::string& name, const T& example) {
  const SettingValue value = settings.value(name);
  if (!std::holds_alternative<T>(value))
    fail((settings.kind + " attention").c_str(), name, " is ", type_name(value), ", not ", type_name(example));
  return std::get<T>(value);
}

}  // namespace

SettingValue AttentionSettings::value(const std::string& name) const {
  const KindSetting& setting = registered_kind(kind).setting(name);
  const auto given = values.find(name);
  if (given == values.end()) return setting.default_value;
  check_value(kind, setting, given->second);
  return given->second;
}

int64_t AttentionSettings::number(const std::string& name) const { return typed<int64_t>(*this, name, 0); }
bool AttentionSettings::boolean(const std::string& name) const { return typed<bool>(*this, name, false); }
std::string AttentionSettings::word(const std::string& name) const { return typed<std::string>(*this, name, ""); }

std::string joined_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::shared_ptr<AttentionKind> make_attention(const AttentionSettings& settings, Generator& gen) {
  const KindDescription& kind = registered_kind(settings.kind);
  for (const auto& [name, value] : settings.values) check_value(kind.name, kind.setting(name), value);
  return kind.make(settings, gen);
}

}  // namespace ladder::nn
