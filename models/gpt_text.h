// A character GPT and its text (data/char_corpus.h): the cross-entropy over a whole text, a
// stream's windows or every line, scored in eval mode without a graph; and samples, which never
// draw the tokenizer's special tokens (lines: every line until its end marker).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"
#include "data/char_corpus.h"
#include "data/line_batch.h"
#include "data/tokenizer.h"
#include "models/gpt.h"

namespace ladder::models {

// A cross-entropy summed over targets, and their number: shares of one text add up to the whole.
struct SummedLoss {
  double total = 0;
  int64_t targets = 0;
  double mean() const { return total / static_cast<double>(targets); }
};
// The windows or lines a process scores: every `of`-th from the `index`-th (one process: all of them).
struct Share {
  int64_t index = 0, of = 1;
};
// The cross-entropy of the stream: consecutive windows of `context` tokens, `batch` at a time, each
// predicting the token after every position; every token after the first is predicted once (the
// last window ends at the stream's end, and predicts only the tokens the others left). Summed over
// the windows of `share`.
SummedLoss stream_loss(GPT& model, const std::vector<int>& ids, int64_t context, int64_t batch, Share share = {});
// The cross-entropy of every line of `share`, its end marker counted as a character (as makemore
// counts it), the lines framed with `markers` and padded to `context` (data::frame_lines).
SummedLoss lines_loss(GPT& model, const std::vector<std::vector<int>>& lines, int64_t context, int64_t batch,
                      data::LineMarkers markers, Share share = {});
// The summed loss of the share of the whole validation text (stream or lines): processes that
// each score theirs and add the sums get the loss of one process scoring all.
SummedLoss validation_loss(GPT& model, const data::CharCorpus& corpus, Share share = {});

// The special tokens of the vocabulary (a checkpoint from before the stream had none holds all four)
// are no characters of the text: the model never saw one as a next character, and whatever
// probability it gives them is an accident of its weights, so samples never draw them; lines let
// <eos> be drawn, as it ends each line.
std::vector<int64_t> never_sampled(const data::Tokenizer& tokenizer, bool lines = false);
// `length` characters sampled after `prompt` at this temperature, decoded with the prompt, the
// white space it ends in trimmed.
std::string sample_text(GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt, int64_t length,
                        float temperature, Generator& gen);
// `count` lines sampled at this temperature, each from <bos> and `prompt` until the model draws
// <eos>; a line that fills the context without it ends there (`ended` false).
struct SampledLine {
  std::vector<int> ids;  // the prompt and what followed, without markers
  bool ended = true;     // closed by <eos>
};
std::vector<SampledLine> sample_lines(GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                                      int64_t count, float temperature, Generator& gen);

}  // namespace ladder::models
