#include "nn/attention/attention_kind.h"

#include "core/error.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/vq_attention.h"

namespace ladder::nn {

std::vector<std::string> attention_kind_names() { return {"full", "linear", "bigbird", "vq"}; }

bool is_causal_only(const std::string& kind) { return kind == "vq"; }

std::string joined_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::shared_ptr<AttentionKind> make_attention(const AttentionSettings& settings, Generator& gen) {
  if (settings.kind == "full") return std::make_shared<FullAttention>(settings, gen);
  if (settings.kind == "linear") return std::make_shared<LinearAttention>(settings);
  if (settings.kind == "bigbird") return std::make_shared<BigBirdAttention>(settings, gen);
  if (settings.kind == "vq") return std::make_shared<VQAttention>(settings, gen);
  fail("make_attention", "unknown attention kind '", settings.kind, "'; the kinds are ",
       joined_names(attention_kind_names()));
}

}  // namespace ladder::nn
