// Lesson 15's models at its size, against the same models in PyTorch (bench/pytorch/bench_classifiers.py):
// one training step (forward, cross entropy, backward, clipping to norm 1, AdamW with decay 0.01 on
// the weight matrices only, as lesson 15 trains) on a batch of 16 ListOps-sized sequences, ids from
// a vocabulary of 16, lengths 128 down to 68 (4 fewer per sequence, the rest padding), 10 classes:
//  - the encoder classifier (models/encoder_classifier.h): width 64, 4 heads, 2 pre-LN blocks with
//    a GELU feed-forward 128 wide, a final LayerNorm, learned positions, full attention over the real
//    tokens, mean pooling;
//  - the LSTM classifier (models/lstm_classifier.h): width 64, one layer, mean pooling.
// Ours at one and at two threads, PyTorch at the faster of 1 and 2.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench.h"
#include "core/ops.h"
#include "models/encoder_classifier.h"
#include "models/lstm_classifier.h"
#include "nn/attention/full_attention.h"
#include "optim/adam.h"

namespace ladder::bench {

namespace {

constexpr int64_t kBatch = 16, kLength = 128, kVocabulary = 16, kClasses = 10, kWidth = 64;

// (B,T) 1 for the real tokens: sequence b holds kLength - 4 b of them.
Tensor valid_tokens() {
  Tensor valid = zeros({kBatch, kLength});
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t t = 0; t < kLength - 4 * b; ++t) valid.data()[b * kLength + t] = 1;
  return valid;
}

// One training step of `model` as lesson 15 takes it, on fixed random ids and labels.
TrainingStep training_step(std::shared_ptr<models::SequenceClassifier> model, Generator& gen) {
  auto adamw = std::make_shared<optim::AdamW>(optim::decay_groups(model->named_parameters(), 0.01f),
                                              optim::AdamOptions{.lr = 3e-3f});
  const Tensor ids = randint(1, kVocabulary, {kBatch, kLength}, gen), labels = randint(0, kClasses, {kBatch}, gen);
  const Tensor valid = valid_tokens();
  return {.zero_grad = [adamw] { adamw->zero_grad(); },
          .loss = [model, ids, labels, valid] { return cross_entropy(model->forward(ids, valid), labels); },
          .clip = [model] { optim::clip_grad_norm(model->parameters(), 1.0f); },
          .update = [adamw] { adamw->step(); }};
}

}  // namespace

void run_classifiers() {
  Generator gen(15);
  const auto encoder = std::make_shared<models::EncoderClassifier>(
      models::EncoderClassifierConfig{.vocab_size = kVocabulary, .num_classes = kClasses, .max_len = kLength,
                                      .d_model = kWidth, .nhead = 4, .num_layers = 2, .dim_feedforward = 2 * kWidth,
                                      .attention = nn::full_attention()},
      gen);
  const auto lstm = std::make_shared<models::LstmClassifier>(
      models::LstmClassifierConfig{.vocab_size = kVocabulary, .num_classes = kClasses, .width = kWidth}, gen);
  const std::string note = "(lesson 15's size: batch 16, length 128 with padding, width 64; ref: the same model in "
                           "torch.nn, its faster of 1 and 2 threads; fwd + bwd + clip + AdamW)";
  std::vector<Workload> workloads;
  std::vector<std::pair<std::string, TrainingStep>> steps;
  for (const auto& [name, model] :
       {std::pair<std::string, std::shared_ptr<models::SequenceClassifier>>{"encoder_classifier_step_2x64", encoder},
        {"lstm_classifier_step_64", lstm}}) {
    steps.emplace_back(name, training_step(model, gen));
    for (int threads : {1, 2})
      workloads.push_back({.name = name + "_t128_b16_threads" + std::to_string(threads),
                           .step = steps.back().second,
                           .threads = threads,
                           .note = note});
  }
  compare_with_pytorch("bench_classifiers.py", workloads);
  for (const auto& [name, step] : steps) {
    std::printf("  %s:\n", name.c_str());
    for (int threads : {1, 2}) print_breakdown(step, threads);
  }
}

}  // namespace ladder::bench
