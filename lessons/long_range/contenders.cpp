#include "lessons/long_range/contenders.h"

#include "models/lstm_classifier.h"

namespace ladder::lessons {

std::vector<Contender> all_contenders(const harness::LessonCli& cli, const harness::AttentionFlags& attention, uint64_t seed) {
  std::vector<Contender> list;
  for (const harness::KindRun& kind : harness::every_kind(cli, attention, seed)) list.push_back({kind.name, kind.settings, kind.causal});
  list.push_back({"lstm", std::nullopt});
  return list;
}

std::vector<std::string> names_of(const std::vector<Contender>& list) {
  std::vector<std::string> names;
  for (const Contender& c : list) names.push_back(c.name);
  return names;
}

models::EncoderClassifierConfig encoder_config(const Contender& c, const LongRangeTask& task, ModelSize size) {
  return {.vocab_size = task.vocabulary, .num_classes = task.classes, .max_len = task.length, .d_model = size.d_model,
          .nhead = size.heads, .num_layers = size.layers, .dim_feedforward = 2 * size.d_model,
          .pooling = c.causal ? models::Pooling::last : models::Pooling::mean, .attention = *c.attention,
          .causal = c.causal};
}

std::unique_ptr<models::SequenceClassifier> make_classifier(const Contender& c, const LongRangeTask& task,
                                                            ModelSize size, Generator& gen) {
  if (!c.attention)
    return std::make_unique<models::LstmClassifier>(
        models::LstmClassifierConfig{.vocab_size = task.vocabulary, .num_classes = task.classes, .width = size.d_model,
                                     .pooling = models::Pooling::mean},
        gen);
  return std::make_unique<models::EncoderClassifier>(encoder_config(c, task, size), gen);
}

}  // namespace ladder::lessons
