// Decoding for every EncoderDecoder (lessons 07, 09, 10): greedy, and beam search with length
// normalisation. Both run without recording a graph; put the model in eval mode first.
#pragma once

#include <cstdint>
#include <vector>

#include "data/tokenizer.h"
#include "models/encoder_decoder.h"

namespace ladder::models {

struct DecodeOptions {
  int bos = data::Tokenizer::kBos;  // fed to the decoder first
  int eos = data::Tokenizer::kEos;  // ends a sequence
  int64_t max_len = 50;             // tokens generated at most, <eos> included
};

// For each source row of src (B,S) (src_valid (B,S): 1 real, 0 padding), the tokens chosen one by
// one as the most likely next token, until <eos> (left out of the result) or max_len.
std::vector<std::vector<int>> greedy_decode(EncoderDecoder& model, const Tensor& src, const Tensor& src_valid,
                                            const DecodeOptions& options = {});

struct Hypothesis {
  std::vector<int> tokens;  // without <bos>, and without the <eos> that ended it
  double log_prob = 0;      // log P(tokens, then <eos>) under the model; <eos> counts when it was reached
  int64_t length = 0;       // tokens generated, <eos> included when it was reached
  bool finished = false;    // ended with <eos> (else it was cut at max_len)
  double score = 0;         // log_prob / length^alpha: the ranking with length normalisation
};

// Beam search over one source src (1,S): at each step every live hypothesis is extended by every
// token and the `beam` best extensions (by log-probability) go on; one that takes <eos> is
// finished. Stops at max_len, or once `beam` hypotheses have finished and no live one can still
// score better than the beam-th best of them; returns the `beam` best
// by score = log_prob / length^alpha (alpha = 0: plain log-probability, which favours short
// outputs), best first. With beam = 1 it chooses exactly what greedy_decode chooses.
std::vector<Hypothesis> beam_search(EncoderDecoder& model, const Tensor& src, const Tensor& src_valid, int64_t beam,
                                    float alpha = 0.75f, const DecodeOptions& options = {});

}  // namespace ladder::models
