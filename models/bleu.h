// BLEU: how many of a translation's n-grams are found in its reference, the score lessons 07, 09 and
// 10 report for translations. Both forms work on token sequences: words or characters as strings, or
// token ids, so word-level and character-level tasks use the same code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ladder::models {

// d2l's BLEU of one prediction against one label (d2l.ai, "Sequence to Sequence Learning"):
//   exp(min(0, 1 - len_label / len_pred)) * prod_{n=1}^{min(k, len_pred)} p_n^(1 / 2^n)
// p_n is the share of the prediction's n-grams found in the label, each label n-gram used at most as
// often as it occurs there. The weight 1/2^n shrinks p_n less for long n-grams, whose matches are
// harder; the first factor punishes predictions shorter than the label. An empty prediction scores 0.
template <class Token>
double bleu_d2l(const std::vector<Token>& prediction, const std::vector<Token>& label, int k);

// Corpus BLEU-4 (Papineni et al., 2002): n-gram matches clipped per sentence (a candidate n-gram counts
// at most as often as it occurs in one of its references), summed over the corpus, then
//   p_n = matches_n / candidate n-grams_n     BLEU = BP * exp((log p_1 + log p_2 + log p_3 + log p_4) / 4)
//   BP = 1 when c > r, exp(1 - r / c) when c <= r
// with c the total candidate length and r the total reference length (for each candidate the
// reference closest to it in length, the shorter on a tie). BLEU is 0 when some p_n is 0, e.g. no
// 4-gram of the corpus matches, or when every candidate is empty.
struct CorpusBleu {
  double bleu = 0;
  double precisions[4] = {};  // p_1 ... p_4
  double brevity_penalty = 0;
  int64_t candidate_length = 0, reference_length = 0;  // c and r
};
// references[i]: the reference translations of candidates[i] (at least one each).
template <class Token>
CorpusBleu corpus_bleu(const std::vector<std::vector<Token>>& candidates,
                       const std::vector<std::vector<std::vector<Token>>>& references);
// One reference for each candidate.
template <class Token>
CorpusBleu corpus_bleu(const std::vector<std::vector<Token>>& candidates, const std::vector<std::vector<Token>>& references);

}  // namespace ladder::models
