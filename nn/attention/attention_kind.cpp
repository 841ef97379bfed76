#include "nn/attention/attention_kind.h"

#include "nn/attention/attention_registry.h"
#include "nn/attention/full_attention.h"

namespace ladder::nn {

KindSettings::KindSettings() : held_(FullAttention::Settings{}) {}

void KindSettings::fail_other_kind(const std::type_info& wanted) const {
  std::string wanted_name = wanted.name();
  for (const KindDescription& kind : attention_kinds())
    if (kind.defaults.type() == wanted) wanted_name = kind.name;
  fail("attention settings", "these are ", registered_kind(*this).name, " attention's settings, read as ", wanted_name,
       " attention's; build the kind its settings are for (make_attention)");
}

const std::string& AttentionSettings::kind_name() const { return registered_kind(kind).name; }

std::string joined_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::shared_ptr<AttentionKind> make_attention(const AttentionSettings& settings, Generator& gen) {
  return registered_kind(settings.kind).make(settings, gen);
}

}  // namespace ladder::nn
