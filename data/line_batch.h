// Lines as the sequences of a decoder-only language model, as makemore trains on a file of names:
// each line is framed <bos> line <eos> and is one row of the batch, padded at its end. The model
// never reads one line while predicting another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"
#include "data/batcher.h"
#include "data/tokenizer.h"

namespace ladder::data {

// The ids that frame a line: its start and its end marker.
struct LineMarkers {
  int bos = 0, eos = 0;
};
// The tokenizer's <bos> and <eos>; throws when its vocabulary lacks either.
LineMarkers line_markers(const Tokenizer& tokenizer);

// The rows of lines (token ids, without markers), each `width` long:
//   x (B,width): <bos> c1 .. cn  then <eos> as padding  (what the model reads)
//   y (B,width): c1 .. cn <eos>  then kNoAnswer         (what it should predict; kNoAnswer adds no loss)
//   key_padding_mask (B,width): 1 for <bos> c1 .. cn, 0 for the padding
// The padding sits after the line, so causal attention never lets a real position read it, and its
// targets are kNoAnswer: a padded position changes neither the loss nor any gradient, whatever it
// holds, so no <pad> token is needed. The mask is for what reads every key, causal or not: vq
// attention's codebook must not learn from the padding. Throws when a line needs more than `width`
// positions (its length + 1).
Batch frame_lines(const std::vector<std::vector<int>>& lines, int64_t width, LineMarkers markers);

// Random lines, framed and padded: what a step of training on lines reads.
class LineBatcher {
 public:
  // Throws when there is no line, or a line is longer than width - 1 (see frame_lines).
  LineBatcher(std::vector<std::vector<int>> lines, int64_t width, LineMarkers markers);
  Batch sample(int64_t batch, Generator& gen) const;  // `batch` lines drawn with replacement

 private:
  std::vector<std::vector<int>> lines_;
  int64_t width_;
  LineMarkers markers_;
};

// What a file's lines are like before they become sequences, its lines numbered from 1 (a final
// line without its newline counts too; a "\r" before the newline is no character).
struct LineShape {
  int64_t lines = 0, empty = 0;           // every line, and the empty ones among them
  int64_t longest = 0, longest_line = 0;  // the most characters on a line, and the first line with that many
};
LineShape line_shape(const std::string& text);

}  // namespace ladder::data
