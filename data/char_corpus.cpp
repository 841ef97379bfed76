#include "data/char_corpus.h"

#include <algorithm>

#include "data/text.h"

namespace ladder::data {

CharCorpus load_char_corpus(const CharCorpusOptions& o) {
  const float val_fraction = o.lines ? std::min(0.1f, 1000.0f / static_cast<float>(std::max<int64_t>(o.data_lines, 1))) : 0.1f;
  TextData sides = load_text({.data = o.data, .val = o.val, .lines = o.lines, .keep_empty_lines = !o.lines,
                              .val_fraction = val_fraction, .seed = o.seed});
  if (o.small) keep_first(sides, 250, 60);
  // A stream's vocabulary is its characters alone, as nanoGPT's; lines add the markers that frame them.
  const std::vector<std::string> specials = o.lines ? std::vector<std::string>{"<bos>", "<eos>"} : std::vector<std::string>{};
  CharCorpus c{.tokenizer = char_tokenizer(sides, o.lines, specials), .lines = o.lines, .source = sides.train_source,
               .empty_lines = o.empty_lines};
  EncodedText ids = encode_text(sides, c.tokenizer, o.lines);
  c.dropped = drop_unknown(ids.val, c.tokenizer.unk());
  if (o.lines) {
    c.train_lines = std::move(ids.train);
    c.val_lines = std::move(ids.val);
  } else {
    c.train_ids = std::move(ids.train[0]);
    c.val_ids = std::move(ids.val[0]);
  }
  return c;
}

TrainingBatches::TrainingBatches(const CharCorpus& corpus, int64_t context) {
  if (corpus.lines) lines_.emplace(corpus.train_lines, context, line_markers(corpus.tokenizer));
  else windows_.emplace(corpus.train_ids, context);
}

Batch TrainingBatches::sample(int64_t batch, Generator& gen) const {
  return lines_ ? lines_->sample(batch, gen) : windows_->sample(batch, gen);
}

}  // namespace ladder::data
