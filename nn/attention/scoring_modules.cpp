#include "nn/attention/scoring_modules.h"

#include "core/error.h"
#include "core/ops.h"
#include "nn/init.h"

namespace ladder::nn {

ScoringModule::ScoringModule(std::string type_name, float dropout, Generator& gen)
    : Module(std::move(type_name)), dropout_(dropout), gen_(gen.child()) {
  if (!(dropout >= 0 && dropout < 1)) fail(this->type_name().c_str(), "dropout must be in [0, 1), got ", dropout);
  register_generator(gen_);
}

AttentionOptions ScoringModule::options(const KeyMask& mask) {
  return {.mask = mask, .dropout = is_training() ? dropout_ : 0.0f, .generator = &gen_};
}

std::string ScoringModule::describe_dropout() const { return cat("dropout=", dropout_); }

DotProductAttention::DotProductAttention(bool scaled, float dropout, Generator& gen)
    : ScoringModule("DotProductAttention", dropout, gen), scaled_(scaled) {}

AttentionOutput DotProductAttention::forward(const Tensor& queries, const Tensor& keys, const Tensor& values,
                                             const KeyMask& mask) {
  return scaled_ ? scaled_dot_attention(queries, keys, values, options(mask))
                 : dot_attention(queries, keys, values, options(mask));
}

std::string DotProductAttention::describe() const {
  return cat("scaled=", scaled_ ? "true" : "false", ", ", describe_dropout());
}

AdditiveAttention::AdditiveAttention(int64_t query_size, int64_t key_size, int64_t hidden_size, float dropout,
                                     Generator& gen)
    : ScoringModule("AdditiveAttention", dropout, gen) {
  W_q = register_module("W_q", std::make_shared<Linear>(query_size, hidden_size, LinearOptions{.bias = false}, gen));
  W_k = register_module("W_k", std::make_shared<Linear>(key_size, hidden_size, LinearOptions{.bias = false}, gen));
  w_v = register_module("w_v", std::make_shared<Linear>(hidden_size, 1, LinearOptions{.bias = false}, gen));
}

AttentionOutput AdditiveAttention::forward(const Tensor& queries, const Tensor& keys, const Tensor& values,
                                           const KeyMask& mask) {
  return additive_attention(queries, keys, values, W_q->weight, W_k->weight, w_v->weight, options(mask));
}

Tensor AdditiveAttention::project_keys(const Tensor& keys) { return (*W_k)(keys); }

AttentionOutput AdditiveAttention::forward_projected(const Tensor& queries, const Tensor& projected_keys,
                                                     const Tensor& values, const KeyMask& mask) {
  return attend(additive_scores_projected((*W_q)(queries), projected_keys, w_v->weight), values, options(mask));
}

std::string AdditiveAttention::describe() const {
  return cat("query=", W_q->weight.size(1), ", key=", W_k->weight.size(1), ", hidden=", w_v->weight.size(1), ", ",
             describe_dropout());
}

GeneralAttention::GeneralAttention(int64_t query_size, int64_t key_size, float dropout, Generator& gen)
    : ScoringModule("GeneralAttention", dropout, gen) {
  if (query_size <= 0 || key_size <= 0)
    fail("GeneralAttention", "sizes must be positive, got query=", query_size, ", key=", key_size);
  weight = register_parameter("weight", empty({query_size, key_size}));
  init_weight(weight, Init::pytorch, gen);
}

AttentionOutput GeneralAttention::forward(const Tensor& queries, const Tensor& keys, const Tensor& values,
                                          const KeyMask& mask) {
  return general_attention(queries, keys, values, weight, options(mask));
}

std::string GeneralAttention::describe() const {
  return cat("query=", weight.size(0), ", key=", weight.size(1), ", ", describe_dropout());
}

}  // namespace ladder::nn
