// N-gram language models: counts of every n-gram up to an order, and the estimators that turn
// counts into a probability for the next token.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/random.h"

namespace ladder::models {

constexpr int kMaxOrder = 8;

enum class Smoothing {
  mle,             // c(h w) / c(h): zero for anything unseen
  add_one,         // Laplace: (c(h w) + 1) / (c(h) + V)
  add_delta,       // (c(h w) + delta) / (c(h) + delta V)
  simple_backoff,  // the longest seen context's relative frequency; NOT a distribution (sums exceed 1)
  backoff,         // back-off with absolute discounting, normalised (Katz style)
  interpolation,   // sum_k lambda_k * MLE of order k (see interpolation_component), plus lambda_0 / V
};
const char* smoothing_name(Smoothing s);
Smoothing parse_smoothing(const std::string& name);  // "mle", "add-one", "add-delta", "simple-backoff", "backoff", "interp"

// Which estimator, at which order, with its settings.
struct Estimator {
  Smoothing smoothing = Smoothing::add_one;
  int order = 3;
  double delta = 1;             // add_delta
  std::vector<double> lambdas;  // interpolation: [uniform, order 1, ..., order `order`], summing to 1
};

// Counts of all n-grams of orders 1..max_order. Each sequence is padded on the left with
// max_order - 1 <bos> and ends with <eos>; only <eos> and real tokens are ever predicted.
class NGramCounts {
 public:
  NGramCounts(int max_order, const std::vector<std::vector<int>>& sequences, int64_t vocab_size);

  int max_order() const { return max_order_; }
  int64_t vocab_size() const { return vocab_size_; }
  // V: how many tokens can be predicted (every id but <pad> and <bos>).
  int64_t predictable() const { return vocab_size_ - 2; }
  bool is_predictable(int id) const;

  // c(ngram) for an n-gram of 1..max_order ids.
  int64_t count(std::span<const int> ngram) const;
  // c(h .) = sum over w of c(h w), and N1+(h .) = how many distinct w follow h; an empty h is
  // the unigram level (the number of predicted tokens, and of distinct ones).
  int64_t context_total(std::span<const int> history) const;
  int64_t context_types(std::span<const int> history) const;
  // Absolute discount for order n, D = n1 / (n1 + 2 n2) from the counts of counts (Ney et al.).
  double discount(int order) const;

  // P(w | history) with the estimator; uses the last order-1 ids of history.
  double probability(const Estimator& e, std::span<const int> history, int w) const;
  // P(. | history) over every id (zero for <pad> and <bos>).
  std::vector<double> distribution(const Estimator& e, std::span<const int> history) const;
  // Component k of interpolation: the MLE of order k after the last k-1 ids of history, or of a
  // lower order when that history was never seen (so that every component is a distribution).
  double interpolation_component(std::span<const int> history, int w, int order) const;

 private:
  struct Key {
    std::array<int32_t, kMaxOrder> ids{};
    int32_t n = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct ContextStats {
    int64_t total = 0, types = 0;
  };
  static Key key(std::span<const int> ids);
  const ContextStats* context(std::span<const int> history) const;
  int64_t count_after(std::span<const int> history, int w) const;  // c(h w)
  double mle(std::span<const int> history, int w) const;
  double backoff(std::span<const int> history, int w) const;
  double simple_backoff(std::span<const int> history, int w) const;
  double backoff_weight(std::span<const int> history) const;

  int max_order_;
  int64_t vocab_size_;
  std::unordered_map<Key, int64_t, KeyHash> counts_;
  std::unordered_map<Key, ContextStats, KeyHash> contexts_;  // keyed by the history
  std::vector<double> discounts_;                             // per order
  mutable std::unordered_map<Key, double, KeyHash> backoff_weights_;  // filled as needed
};

// Mean negative log-likelihood per predicted token (nats) over the sequences, padded as in counting.
struct Evaluation {
  double nll = 0;               // mean over tokens; infinite when some token has probability 0
  int64_t tokens = 0;
  int64_t zero_probability = 0;  // tokens the model gives probability 0 (MLE on unseen n-grams)
  double perplexity() const;     // exp(nll); infinite with any zero-probability token
};
Evaluation evaluate(const NGramCounts& counts, const Estimator& e, const std::vector<std::vector<int>>& sequences);

// The interpolation weights that maximise the likelihood of `sequences` (EM on held-out data).
std::vector<double> fit_lambdas(const NGramCounts& counts, int order, const std::vector<std::vector<int>>& sequences,
                                int iterations = 30);

// The mean of sum_w P(w | h) over the histories in `sequences`: 1 for a normalised estimator.
double mean_total_probability(const NGramCounts& counts, const Estimator& e,
                              const std::vector<std::vector<int>>& sequences);

// Draws a sequence token by token until <eos> (or max_length tokens); returns it without <eos>.
std::vector<int> sample(const NGramCounts& counts, const Estimator& e, Generator& gen, int max_length = 100);

}  // namespace ladder::models
