#include "models/encoder_classifier.h"

#include "core/error.h"
#include "core/ops.h"

namespace ladder::models {

EncoderClassifier::EncoderClassifier(const EncoderClassifierConfig& c, Generator& gen)
    : SequenceClassifier("EncoderClassifier"), config_(c) {
  if (c.vocab_size <= 0 || c.num_classes <= 0 || c.max_len <= 0 || c.num_layers <= 0)
    fail("EncoderClassifier", "vocab_size, num_classes, max_len and num_layers must be positive, got ", c.vocab_size,
         ", ", c.num_classes, ", ", c.max_len, ", ", c.num_layers);
  token_embedding =
      register_module("token_embedding", std::make_shared<nn::Embedding>(c.vocab_size, c.d_model, 0.02f, gen));
  positions = register_module(
      "positions", std::make_shared<nn::LearnedPositionalEncoding>(c.d_model, c.max_len, c.dropout, 0.02f, gen));
  nn::AttentionSettings attention = c.attention;
  attention.max_length = c.max_len;  // the longest sequence it will see (Linformer sizes its projections by it)
  encoder = register_module(
      "encoder", std::make_shared<nn::TransformerEncoder>(
                     c.d_model, c.nhead,
                     nn::TransformerLayerOptions{.dim_feedforward = c.dim_feedforward,
                                                 .dropout = c.dropout,
                                                 .activation = nn::FeedForwardActivation::gelu,
                                                 .norm_first = true,
                                                 .attention = attention},
                     nn::TransformerStackOptions{.num_layers = c.num_layers, .final_norm = true}, gen));
  head = register_module("head", std::make_shared<nn::Linear>(c.d_model, c.num_classes, nn::LinearOptions{}, gen));
}

Tensor EncoderClassifier::forward(const Tensor& ids, const Tensor& valid) {
  check_inputs(ids, valid);
  const Tensor x = encoder->forward(positions->forward(token_embedding->forward(ids)),
                                    {.src_key_padding_mask = valid, .causal = config_.causal});  // (B,T,E)
  return head->forward(pool(x, valid, config_.pooling));  // (B,num_classes)
}

std::string EncoderClassifier::describe() const {
  return cat("vocab_size=", config_.vocab_size, ", num_classes=", config_.num_classes, ", max_len=", config_.max_len,
             ", pooling=", pooling_name(config_.pooling), ", attention=", config_.attention.kind_name(),
             config_.causal ? ", causal" : "");
}

}  // namespace ladder::models
