#include "models/encoder_classifier.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"

namespace ladder::models {

namespace {

// (B,T): 1 at each row's last real position (its last 1 in valid, or T-1 without padding), else 0.
Tensor last_real(const Tensor& ids, const Tensor& valid) {
  const int64_t rows = ids.size(0), length = ids.size(1);
  Tensor one_hot = zeros({rows, length});
  for (int64_t r = 0; r < rows; ++r) {
    int64_t last = length - 1;
    while (valid.defined() && last > 0 && valid.data()[r * length + last] == 0) --last;
    one_hot.data()[r * length + last] = 1;
  }
  return one_hot;
}

const char* pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::mean: return "mean";
    case Pooling::first: return "first";
    case Pooling::last: return "last";
  }
  return "?";  // not reached: every pooling is listed above
}

}  // namespace

EncoderClassifier::EncoderClassifier(const EncoderClassifierConfig& c, Generator& gen)
    : Module("EncoderClassifier"), config_(c) {
  if (c.vocab_size <= 0 || c.num_classes <= 0 || c.max_len <= 0 || c.num_layers <= 0)
    fail("EncoderClassifier", "vocab_size, num_classes, max_len and num_layers must be positive, got ", c.vocab_size,
         ", ", c.num_classes, ", ", c.max_len, ", ", c.num_layers);
  token_embedding =
      register_module("token_embedding", std::make_shared<nn::Embedding>(c.vocab_size, c.d_model, 0.02f, gen));
  positions = register_module(
      "positions", std::make_shared<nn::LearnedPositionalEncoding>(c.d_model, c.max_len, c.dropout, 0.02f, gen));
  encoder = register_module(
      "encoder", std::make_shared<nn::TransformerEncoder>(
                     c.d_model, c.nhead,
                     nn::TransformerLayerOptions{.dim_feedforward = c.dim_feedforward,
                                                 .dropout = c.dropout,
                                                 .activation = nn::FeedForwardActivation::gelu,
                                                 .norm_first = true,
                                                 .attention = c.attention},
                     nn::TransformerStackOptions{.num_layers = c.num_layers, .final_norm = true}, gen));
  head = register_module("head", std::make_shared<nn::Linear>(c.d_model, c.num_classes, nn::LinearOptions{}, gen));
}

Tensor EncoderClassifier::forward(const Tensor& ids, const Tensor& valid) {
  if (ids.dim() != 2) fail("EncoderClassifier", "ids must be (B,T) token ids, got ", shape_str(ids.shape()));
  if (valid.defined() && valid.shape() != ids.shape())
    fail("EncoderClassifier", "valid must have the shape of ids ", shape_str(ids.shape()),
         " (1 = token, 0 = padding), got ", shape_str(valid.shape()));
  const Tensor x = encoder->forward(positions->forward(token_embedding->forward(ids)),
                                    {.src_key_padding_mask = valid});  // (B,T,E)
  Tensor pooled;  // (B,E)
  if (config_.pooling == Pooling::first) {
    pooled = squeeze(narrow(x, 1, 0, 1), 1);
  } else if (config_.pooling == Pooling::last) {
    pooled = sum(x * unsqueeze(last_real(ids, valid), 2), {1});
  } else if (!valid.defined()) {
    pooled = mean(x, {1});
  } else {
    const Tensor weights = unsqueeze(valid, 2);  // (B,T,1)
    pooled = sum(x * weights, {1}) / clamp(sum(weights, {1}), 1.0f, INFINITY);
  }
  return head->forward(pooled);
}

std::string EncoderClassifier::describe() const {
  return cat("vocab_size=", config_.vocab_size, ", num_classes=", config_.num_classes, ", max_len=", config_.max_len,
             ", pooling=", pooling_name(config_.pooling), ", attention=", config_.attention.kind);
}

}  // namespace ladder::models
