#include "models/bleu.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"

namespace ladder::models {

namespace {

template <class Token>
using Grams = std::map<std::vector<Token>, int64_t>;

// How often each n-gram occurs in the tokens.
template <class Token>
Grams<Token> ngram_counts(const std::vector<Token>& tokens, size_t n) {
  Grams<Token> counts;
  for (size_t i = 0; i + n <= tokens.size(); ++i) ++counts[std::vector<Token>(tokens.begin() + i, tokens.begin() + i + n)];
  return counts;
}

// The candidate's n-grams found in the references, each counted at most as often as it occurs in the
// reference where it occurs most (Papineni's clipping; with one reference this is d2l's matching).
template <class Token>
int64_t clipped_matches(const std::vector<Token>& candidate, const std::vector<std::vector<Token>>& references, size_t n) {
  Grams<Token> most;
  for (const std::vector<Token>& reference : references)
    for (const auto& [gram, count] : ngram_counts(reference, n)) most[gram] = std::max(most[gram], count);
  int64_t matches = 0;
  for (const auto& [gram, count] : ngram_counts(candidate, n))
    if (const auto it = most.find(gram); it != most.end()) matches += std::min(count, it->second);
  return matches;
}

// The number of n-grams in a sequence of this length.
int64_t ngrams_in(size_t length, size_t n) { return length >= n ? static_cast<int64_t>(length - n + 1) : 0; }

// The length of the reference closest to the candidate's, the shorter one on a tie.
template <class Token>
size_t closest_length(size_t candidate, const std::vector<std::vector<Token>>& references) {
  size_t best = references[0].size();
  for (const std::vector<Token>& reference : references) {
    const size_t length = reference.size();
    const auto distance = [candidate](size_t l) { return l > candidate ? l - candidate : candidate - l; };
    if (distance(length) < distance(best) || (distance(length) == distance(best) && length < best)) best = length;
  }
  return best;
}

}  // namespace

template <class Token>
double bleu_d2l(const std::vector<Token>& prediction, const std::vector<Token>& label, int k) {
  if (k < 1) fail("bleu_d2l", "k (the longest n-gram) must be at least 1, got ", k);
  if (prediction.empty()) return 0;
  const auto len_pred = static_cast<double>(prediction.size()), len_label = static_cast<double>(label.size());
  double score = std::exp(std::min(0.0, 1.0 - len_label / len_pred));
  for (size_t n = 1; n <= std::min(static_cast<size_t>(k), prediction.size()); ++n) {
    const double p_n = static_cast<double>(clipped_matches(prediction, {label}, n)) /
                       static_cast<double>(ngrams_in(prediction.size(), n));
    score *= std::pow(p_n, std::pow(0.5, static_cast<double>(n)));
  }
  return score;
}

template <class Token>
CorpusBleu corpus_bleu(const std::vector<std::vector<Token>>& candidates,
                       const std::vector<std::vector<std::vector<Token>>>& references) {
  if (candidates.size() != references.size())
    fail("corpus_bleu", candidates.size(), " candidates but ", references.size(),
         " lists of references; give one list for each candidate");
  int64_t matches[4] = {}, totals[4] = {};
  CorpusBleu out;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (references[i].empty()) fail("corpus_bleu", "candidate ", i, " has no reference");
    const size_t c = candidates[i].size();
    out.candidate_length += static_cast<int64_t>(c);
    out.reference_length += static_cast<int64_t>(closest_length(c, references[i]));
    for (size_t n = 1; n <= 4; ++n) {
      matches[n - 1] += clipped_matches(candidates[i], references[i], n);
      totals[n - 1] += ngrams_in(c, n);
    }
  }
  if (out.candidate_length == 0) return out;
  double log_sum = 0;
  bool some_zero = false;  // log 0 = -inf: the geometric mean is 0
  for (size_t n = 0; n < 4; ++n) {
    out.precisions[n] = totals[n] > 0 ? static_cast<double>(matches[n]) / static_cast<double>(totals[n]) : 0;
    if (out.precisions[n] == 0) some_zero = true;
    else log_sum += std::log(out.precisions[n]);
  }
  const auto c = static_cast<double>(out.candidate_length), r = static_cast<double>(out.reference_length);
  out.brevity_penalty = c > r ? 1 : std::exp(1 - r / c);
  out.bleu = some_zero ? 0 : out.brevity_penalty * std::exp(log_sum / 4);
  return out;
}

template <class Token>
CorpusBleu corpus_bleu(const std::vector<std::vector<Token>>& candidates, const std::vector<std::vector<Token>>& references) {
  std::vector<std::vector<std::vector<Token>>> lists;
  lists.reserve(references.size());
  for (const std::vector<Token>& reference : references) lists.push_back({reference});
  return corpus_bleu(candidates, lists);
}

// Tokens as strings (words, characters) or as ids.
template double bleu_d2l(const std::vector<std::string>&, const std::vector<std::string>&, int);
template double bleu_d2l(const std::vector<int>&, const std::vector<int>&, int);
template CorpusBleu corpus_bleu(const std::vector<std::vector<std::string>>&,
                                const std::vector<std::vector<std::vector<std::string>>>&);
template CorpusBleu corpus_bleu(const std::vector<std::vector<int>>&, const std::vector<std::vector<std::vector<int>>>&);
template CorpusBleu corpus_bleu(const std::vector<std::vector<std::string>>&, const std::vector<std::vector<std::string>>&);
template CorpusBleu corpus_bleu(const std::vector<std::vector<int>>&, const std::vector<std::vector<int>>&);

}  // namespace ladder::models
