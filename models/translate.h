// What an encoder-decoder does with a translation task (data/translation_task.h) once it trains:
// its teacher-forced loss over a set of pairs, translating their sources greedily or by beam search,
// and scoring the translations by exact match and BLEU against every reference a source has.
#pragma once

#include <cstdint>
#include <vector>

#include "data/translation_task.h"
#include "models/encoder_decoder.h"

namespace ladder::models {

// The length normalisation of the lessons' beam searches: hypotheses ranked by log P / length^0.75.
inline constexpr float kLengthNormalisation = 0.75f;

// The mean loss per target token over `pairs` (pairs of `task`), teacher forcing, in eval mode and
// without a graph.
double translation_loss(EncoderDecoder& model, const data::TranslationTask& task, const std::vector<data::IdPair>& pairs);

struct Translations {
  std::vector<std::vector<int>> outputs;  // one per pair, without <bos> and <eos>
  double seconds = 0;
};
// Translates the sources of `pairs` (pairs of `task`): beam = 0 greedy (in batches), else beam search
// of that width with length normalisation alpha (models::beam_search), for at most the task's
// longest target. The model is put in eval mode.
Translations translate(EncoderDecoder& model, const data::TranslationTask& task, const std::vector<data::IdPair>& pairs,
                       int64_t beam, float alpha = kLengthNormalisation);

// Every target of a source in `pairs` is a reference for each of its outputs, as a pairs file lists
// several translations of one sentence ("Go." -> "Va !", "Marche.", "Bouge !").
struct TranslationScores {
  double exact_match = 0;  // the share of outputs equal to one of their references, token for token
  double bleu = 0;         // corpus BLEU-4 over the task's tokens (characters for the date task), no smoothing
};
TranslationScores score(const Translations& translations, const std::vector<data::IdPair>& pairs);

}  // namespace ladder::models
