// Beam search with and without length normalisation, on a task whose outputs differ in length:
// at the end of training and at a few evaluations along it, while the model is still unsure how
// long an output should be (lessons 07, 09 and 10's number task).
#pragma once

#include <cstdint>
#include <vector>

#include "harness/run.h"
#include "data/translation_task.h"
#include "lessons/translation/task_flags.h"
#include "models/translate.h"

namespace ladder::lessons {

// Greedy decoding against beam search of width 4 ranking by plain log-probability (alpha 0) and
// by length-normalised log-probability (models::kLengthNormalisation), on a task whose outputs differ in length (the
// number task): prints their exact match, BLEU and mean output length beside the references', and
// up to three test sources on which they disagree.
struct NormalisationComparison {
  models::Translations greedy, beam, normalised;
  models::TranslationScores greedy_scores, beam_scores, normalised_scores;
};
NormalisationComparison compare_length_normalisation(models::EncoderDecoder& model,
                                                     const data::TranslationTask& task);

// The same three decoders on the test pairs at a few evaluations of a training run, while the model
// is still unsure how long an output should be: a tenth, a fifth and two fifths of the way (the 2nd,
// 4th and 8th of its 20 evaluations). A run resumed after one of them leaves its row out.
struct NormalisationAtStep {
  int64_t step = 0;
  double fraction = 0;  // of the run's steps
  models::TranslationScores greedy, beam, normalised;
  double greedy_length = 0, beam_length = 0, normalised_length = 0;  // mean output lengths, in tokens
  int64_t disagreements = 0;  // test sources on which the two beam searches chose different outputs
};
class NormalisationWatch {
 public:
  explicit NormalisationWatch(int64_t steps);  // the run's --steps: which evaluations it watches
  // At a watched step: translates the test pairs three ways and keeps the figures. The model is
  // left in eval mode, and no random number is drawn.
  void offer(models::EncoderDecoder& model, const data::TranslationTask& task, int64_t step);
  const std::vector<NormalisationAtStep>& rows() const { return rows_; }
  int64_t steps() const { return steps_; }

 private:
  int64_t steps_;
  std::vector<int64_t> watched_;
  std::vector<NormalisationAtStep> rows_;
};

// Prints the watched rows and the end's (`end`, decoded after the last step), writes
// length_normalisation.csv and a chart of each decoder's mean output length against step, beside
// the test targets'.
void report_along_training(harness::Run& run, const NormalisationWatch& watch, const NormalisationComparison& end,
                           const data::TranslationTask& task);

}  // namespace ladder::lessons
