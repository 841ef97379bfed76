#include "models/lstm_classifier.h"

#include "core/error.h"

namespace ladder::models {

LstmClassifier::LstmClassifier(const LstmClassifierConfig& c, Generator& gen)
    : SequenceClassifier("LstmClassifier"), config_(c) {
  if (c.vocab_size <= 0 || c.num_classes <= 0 || c.width <= 0)
    fail("LstmClassifier", "vocab_size, num_classes and width must be positive, got ", c.vocab_size, ", ",
         c.num_classes, ", ", c.width);
  token_embedding = register_module("token_embedding", std::make_shared<nn::Embedding>(c.vocab_size, c.width, 0.02f, gen));
  lstm = register_module("lstm", std::make_shared<nn::LSTM>(c.width, c.width, nn::RecurrentOptions{.batch_first = true}, gen));
  head = register_module("head", std::make_shared<nn::Linear>(c.width, c.num_classes, nn::LinearOptions{}, gen));
}

Tensor LstmClassifier::forward(const Tensor& ids, const Tensor& valid) {
  check_inputs(ids, valid);
  const Tensor h = lstm->forward(token_embedding->forward(ids)).output;  // (B,T,width)
  return head->forward(pool(h, valid, config_.pooling));                 // (B,num_classes)
}

std::string LstmClassifier::describe() const {
  return cat("vocab_size=", config_.vocab_size, ", num_classes=", config_.num_classes, ", width=", config_.width,
             ", pooling=", pooling_name(config_.pooling));
}

}  // namespace ladder::models
