#include "data/translation_task.h"

#include <algorithm>

#include "core/error.h"

namespace ladder::data {

std::vector<Seq2SeqBatch> TranslationTask::training_batch(int64_t batch, Generator& gen) const {
  if (bucketed) return buckets->sample(batch, gen);
  return {sample_pairs(train, batch, gen, source_width)};
}

Seq2SeqBatch TranslationTask::padded(const std::vector<IdPair>& pairs) const {
  return pad_pairs(pairs, bucketed ? 0 : source_width);
}

TranslationTask make_translation_task(PairSplits splits, const TaskShape& shape) {
  if (splits.val.empty() || splits.test.empty())
    fail("make_translation_task", "the validation and test parts must not be empty (", splits.val.size(), " and ",
         splits.test.size(), " pairs); give more pairs");
  TranslationTask task{.description = splits.description,
                       .tokenizers = pair_tokenizers(splits.train, shape.source_level, shape.target_level, shape.min_freq)};
  task.bucketed = shape.bucketed;
  task.keep_best = shape.keep_best;
  task.dropped = splits.dropped;
  task.train = encode_pairs(splits.train, task.tokenizers);
  task.val = encode_pairs(splits.val, task.tokenizers);
  task.test = encode_pairs(splits.test, task.tokenizers);
  task.test_text = std::move(splits.test);
  for (const auto* part : {&task.train, &task.val, &task.test})
    for (const auto& [src, tgt] : *part) {
      task.longest_target = std::max(task.longest_target, static_cast<int64_t>(tgt.size()));
      task.source_width = std::max(task.source_width, static_cast<int64_t>(src.size()));
    }
  if (shape.bucketed) task.buckets.emplace(task.train);
  return task;
}

}  // namespace ladder::data
