// The contenders of lessons 15 and 17: every attention kind of the registry in the same encoder, and
// a baseline without attention, with the models each task builds from them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/attention_flags.h"
#include "harness/cli.h"
#include "lessons/long_range/tasks.h"
#include "models/encoder_classifier.h"
#include "models/sequence_classifier.h"

namespace ladder::lessons {

// What --kinds names: an attention kind for the encoder, or the baseline without one.
struct Contender {
  std::string name;                                // as --kinds writes it
  std::optional<nn::AttentionSettings> attention;  // none: the LSTM baseline
  // Every position sees only those before it (ListOps reads the answer at the last real token, the
  // one that has seen them all): for the kinds that attend no other way (the registry's causal_only).
  bool causal = false;
};

// Every attention kind of the registry (nn/attention/attention_registry.h: linear once per feature
// map, each causal-only kind causal), then the baseline "lstm": a kind registered there joins
// without a change in the lesson. `seed` draws BigBird's random blocks, FAVOR+'s features and VQ's
// initial codes.
std::vector<Contender> all_contenders(const harness::LessonCli& cli, const harness::AttentionFlags& attention, uint64_t seed);
std::vector<std::string> names_of(const std::vector<Contender>& list);

struct ModelSize {
  int64_t d_model, layers;
  int64_t heads = 4;  // each d_model / heads wide
};

// The encoder of an attention contender for `task`: feed-forward 2 d_model wide, read at the mean
// of the positions (a causal one at the last real token).
models::EncoderClassifierConfig encoder_config(const Contender& c, const LongRangeTask& task, ModelSize size);
// A classifier for `task`: the encoder classifier, or the LSTM of width d_model for the baseline.
std::unique_ptr<models::SequenceClassifier> make_classifier(const Contender& c, const LongRangeTask& task,
                                                            ModelSize size, Generator& gen);

}  // namespace ladder::lessons
