// A text as characters, the way the character GPTs of lessons 11, 12, 14 and 16 read it: one
// stream of every character (empty lines too), or each line its own sequence (makemore's names),
// split into training and validation, and the batches a training step reads from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/random.h"
#include "data/batcher.h"
#include "data/line_batch.h"
#include "data/tokenizer.h"

namespace ladder::data {

struct CharCorpus {
  Tokenizer tokenizer;  // the text's characters; with lines, <bos> and <eos> first
  bool lines = false;
  std::vector<int> train_ids, val_ids;                   // a stream: the text as it is, empty lines too
  std::vector<std::vector<int>> train_lines, val_lines;  // lines: one sequence per line, without markers
  std::string source;
  DroppedUnknown dropped;   // validation characters not in the training text
  int64_t empty_lines = 0;  // lines: the empty lines of the files, skipped
};

struct CharCorpusOptions {
  std::string data;  // training text: a file, or a folder of them
  std::string val;   // validation text; empty: held out from data
  bool lines = false;
  // Lines hold out min(1000, 10%) of the `data_lines` lines (makemore's split); a stream holds out
  // 10% of its blocks.
  int64_t data_lines = 0;
  int64_t empty_lines = 0;  // lines: how many of the files' lines are empty (they are skipped)
  uint64_t seed = 0;        // which lines (or blocks of lines) are held out
  bool small = false;       // at most 250 training and 60 validation lines (a smoke test)
};
CharCorpus load_char_corpus(const CharCorpusOptions& options);

// What a training step reads: `batch` random windows of `context` characters of the stream, or
// `batch` random lines framed <bos> line <eos> and padded to `context` (data/line_batch.h).
class TrainingBatches {
 public:
  TrainingBatches(const CharCorpus& corpus, int64_t context);
  Batch sample(int64_t batch, Generator& gen) const;  // x, y (batch, context)

 private:
  std::optional<StreamBatcher> windows_;
  std::optional<LineBatcher> lines_;
};

}  // namespace ladder::data
