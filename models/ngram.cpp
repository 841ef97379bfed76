#include "models/ngram.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "data/tokenizer.h"
#include "data/visible_text.h"

namespace ladder::models {

namespace {

constexpr int kBos = data::Tokenizer::kBos, kEos = data::Tokenizer::kEos, kPad = data::Tokenizer::kPad;

// The sequence as the model sees it: `pad` <bos> in front, <eos> at the end.
std::vector<int> padded(const std::vector<int>& sequence, int pad) {
  std::vector<int> out(static_cast<size_t>(pad), kBos);
  out.insert(out.end(), sequence.begin(), sequence.end());
  out.push_back(kEos);
  return out;
}

// Calls visit(history, w) for every predicted token of every sequence, the history holding the
// order-1 ids before it.
template <class Visit>
void for_each_prediction(const std::vector<std::vector<int>>& sequences, int order, Visit visit) {
  for (const std::vector<int>& s : sequences) {
    const std::vector<int> p = padded(s, order - 1);
    for (size_t i = static_cast<size_t>(order - 1); i < p.size(); ++i)
      visit(std::span<const int>(p.data() + i - (order - 1), static_cast<size_t>(order - 1)), p[i]);
  }
}

std::span<const int> last(std::span<const int> history, int n) {
  return history.subspan(history.size() - static_cast<size_t>(std::min<int>(n, static_cast<int>(history.size()))));
}

}  // namespace

const char* smoothing_name(Smoothing s) {
  switch (s) {
    case Smoothing::mle: return "mle";
    case Smoothing::add_one: return "add-one";
    case Smoothing::add_delta: return "add-delta";
    case Smoothing::simple_backoff: return "simple-backoff";
    case Smoothing::backoff: return "backoff";
    case Smoothing::interpolation: return "interp";
  }
  return "?";
}

Smoothing parse_smoothing(const std::string& name) {
  for (Smoothing s : {Smoothing::mle, Smoothing::add_one, Smoothing::add_delta, Smoothing::simple_backoff,
                      Smoothing::backoff, Smoothing::interpolation})
    if (name == smoothing_name(s)) return s;
  fail("smoothing", "unknown estimator '", data::visible(name), "'; choose mle, add-one, add-delta, simple-backoff, backoff or interp");
}

size_t NGramCounts::KeyHash::operator()(const Key& k) const {
  uint64_t h = 1469598103934665603ULL ^ static_cast<uint64_t>(k.n);  // FNV-1a over the ids
  for (int i = 0; i < k.n; ++i) h = (h ^ static_cast<uint32_t>(k.ids[static_cast<size_t>(i)])) * 1099511628211ULL;
  return static_cast<size_t>(h ^ (h >> 29));
}

NGramCounts::Key NGramCounts::key(std::span<const int> ids) {
  if (ids.size() > static_cast<size_t>(kMaxOrder))
    fail("ngram", "a history or n-gram of ", ids.size(), " tokens is longer than the largest order, ", kMaxOrder);
  Key k;
  k.n = static_cast<int32_t>(ids.size());
  std::copy(ids.begin(), ids.end(), k.ids.begin());
  return k;
}

NGramCounts::NGramCounts(int max_order, const std::vector<std::vector<int>>& sequences, int64_t vocab_size)
    : max_order_(max_order), vocab_size_(vocab_size) {
  if (max_order < 1 || max_order > kMaxOrder) fail("NGramCounts", "order must be 1 to ", kMaxOrder, ", got ", max_order);
  if (vocab_size <= 4) fail("NGramCounts", "the vocabulary has only the special tokens");
  std::vector<std::array<int64_t, 3>> counts_of_counts(static_cast<size_t>(max_order) + 1, {0, 0, 0});
  for (const std::vector<int>& s : sequences)
    for (const int id : s)
      if (id < 0 || id >= vocab_size || id == kPad || id == kBos)
        fail("NGramCounts", "id ", id, " cannot be counted (vocabulary ", vocab_size, "; <pad> and <bos> are not tokens)");
  for_each_prediction(sequences, max_order, [&](std::span<const int> history, int w) {
    for (int n = 1; n <= max_order; ++n) {
      std::array<int, kMaxOrder> gram{};
      const std::span<const int> h = last(history, n - 1);
      std::copy(h.begin(), h.end(), gram.begin());
      gram[static_cast<size_t>(n - 1)] = w;
      const int64_t c = ++counts_[key({gram.data(), static_cast<size_t>(n)})];
      ContextStats& stats = contexts_[key(h)];
      ++stats.total;
      if (c == 1) ++stats.types;
    }
  });
  for (const auto& [k, c] : counts_)
    if (c <= 2) ++counts_of_counts[static_cast<size_t>(k.n)][static_cast<size_t>(c)];
  discounts_.assign(static_cast<size_t>(max_order) + 1, 0.5);
  for (int n = 1; n <= max_order; ++n) {
    const double n1 = static_cast<double>(counts_of_counts[static_cast<size_t>(n)][1]);
    const double n2 = static_cast<double>(counts_of_counts[static_cast<size_t>(n)][2]);
    if (n1 + n2 > 0) discounts_[static_cast<size_t>(n)] = std::clamp(n1 / (n1 + 2 * n2), 0.05, 0.95);
  }
}

bool NGramCounts::is_predictable(int id) const { return id >= 0 && id < vocab_size_ && id != kPad && id != kBos; }

int64_t NGramCounts::count(std::span<const int> ngram) const {
  if (ngram.empty() || static_cast<int>(ngram.size()) > max_order_) return 0;
  const auto it = counts_.find(key(ngram));
  return it == counts_.end() ? 0 : it->second;
}

const NGramCounts::ContextStats* NGramCounts::context(std::span<const int> history) const {
  const auto it = contexts_.find(key(history));
  return it == contexts_.end() ? nullptr : &it->second;
}

int64_t NGramCounts::context_total(std::span<const int> history) const {
  const ContextStats* s = context(history);
  return s ? s->total : 0;
}

int64_t NGramCounts::context_types(std::span<const int> history) const {
  const ContextStats* s = context(history);
  return s ? s->types : 0;
}

double NGramCounts::discount(int order) const { return discounts_.at(static_cast<size_t>(order)); }

int64_t NGramCounts::count_after(std::span<const int> history, int w) const {
  if (history.size() >= static_cast<size_t>(kMaxOrder)) return 0;  // no n-gram that long was counted
  std::array<int, kMaxOrder> gram{};
  std::copy(history.begin(), history.end(), gram.begin());
  gram[history.size()] = w;
  return count({gram.data(), history.size() + 1});
}

// c(h w) / c(h .), or 0 when h was never seen.
double NGramCounts::mle(std::span<const int> history, int w) const {
  const int64_t total = context_total(history);
  return total == 0 ? 0 : static_cast<double>(count_after(history, w)) / static_cast<double>(total);
}

double NGramCounts::simple_backoff(std::span<const int> history, int w) const {
  // The relative frequency after the longest part of the history that has been seen with w.
  for (size_t n = history.size() + 1; n >= 1; --n) {
    const double p = mle(last(history, static_cast<int>(n) - 1), w);
    if (p > 0) return p;
  }
  return 1.0 / static_cast<double>(context_total({}) + predictable());  // never seen: the add-one unigram
}

// alpha(h): the mass the discounts freed after h, spread over the words never seen after h in
// proportion to the lower order, so that the distribution sums to 1.
double NGramCounts::backoff_weight(std::span<const int> history) const {
  const Key k = key(history);
  if (const auto it = backoff_weights_.find(k); it != backoff_weights_.end()) return it->second;
  const ContextStats* s = context(history);
  const double d = discount(static_cast<int>(history.size()) + 1);
  double seen_lower = 0;
  for (int w = 0; w < vocab_size_; ++w)
    if (is_predictable(w) && count_after(history, w) > 0) seen_lower += backoff(history.subspan(1), w);
  const double freed = d * static_cast<double>(s->types) / static_cast<double>(s->total);
  const double alpha = freed / (1 - seen_lower);
  backoff_weights_.emplace(k, alpha);
  return alpha;
}

double NGramCounts::backoff(std::span<const int> history, int w) const {
  if (history.empty())  // the base: the add-one unigram, which gives every token some probability
    return static_cast<double>(count_after({}, w) + 1) / static_cast<double>(context_total({}) + predictable());
  const ContextStats* s = context(history);
  if (!s) return backoff(history.subspan(1), w);  // an unseen history says nothing: back off entirely
  // A history followed by every token has no unseen word to give freed mass to: no discount there.
  if (s->types == predictable()) return mle(history, w);
  const int64_t c = count_after(history, w);
  if (c > 0) return (static_cast<double>(c) - discount(static_cast<int>(history.size()) + 1)) / static_cast<double>(s->total);
  return backoff_weight(history) * backoff(history.subspan(1), w);
}

double NGramCounts::probability(const Estimator& e, std::span<const int> history_in, int w) const {
  if (e.order < 1 || e.order > max_order_) fail("ngram", "order ", e.order, " is outside 1..", max_order_, " (the counts)");
  if (!is_predictable(w)) return 0;
  const std::span<const int> h = last(history_in, e.order - 1);
  const auto V = static_cast<double>(predictable());
  switch (e.smoothing) {
    case Smoothing::mle: return mle(h, w);
    case Smoothing::add_one:
    case Smoothing::add_delta: {
      const double delta = e.smoothing == Smoothing::add_one ? 1.0 : e.delta;
      // exercise: add_delta
      return (static_cast<double>(count_after(h, w)) + delta) / (static_cast<double>(context_total(h)) + delta * V);
      // end of exercise: add_delta
    }
    case Smoothing::simple_backoff: return simple_backoff(h, w);
    case Smoothing::backoff: return backoff(h, w);
    case Smoothing::interpolation: {
      if (e.lambdas.size() != static_cast<size_t>(e.order) + 1)
        fail("ngram", "interpolation of order ", e.order, " needs ", e.order + 1, " lambdas, got ", e.lambdas.size());
      double p = e.lambdas[0] / V;
      for (int k = 1; k <= e.order; ++k) p += e.lambdas[static_cast<size_t>(k)] * interpolation_component(h, w, k);
      return p;
    }
  }
  return 0;
}

double NGramCounts::interpolation_component(std::span<const int> history, int w, int order) const {
  std::span<const int> h = last(history, order - 1);
  while (!h.empty() && context_total(h) == 0) h = h.subspan(1);
  return mle(h, w);
}

std::vector<double> NGramCounts::distribution(const Estimator& e, std::span<const int> history) const {
  std::vector<double> p(static_cast<size_t>(vocab_size_));
  for (int w = 0; w < vocab_size_; ++w) p[static_cast<size_t>(w)] = probability(e, history, w);
  return p;
}

double Evaluation::perplexity() const { return std::exp(nll); }

Evaluation evaluate(const NGramCounts& counts, const Estimator& e, const std::vector<std::vector<int>>& sequences) {
  Evaluation out;
  double total = 0;
  for_each_prediction(sequences, e.order, [&](std::span<const int> history, int w) {
    const double p = counts.probability(e, history, w);
    ++out.tokens;
    if (p > 0) total -= std::log(p);
    else ++out.zero_probability;
  });
  if (out.tokens == 0) fail("evaluate", "no tokens to evaluate");
  out.nll = out.zero_probability > 0 ? INFINITY : total / static_cast<double>(out.tokens);
  return out;
}

std::vector<double> fit_lambdas(const NGramCounts& counts, int order, const std::vector<std::vector<int>>& sequences,
                                int iterations) {
  if (order < 1 || order > counts.max_order())
    fail("fit_lambdas", "order ", order, " is outside 1..", counts.max_order(), " (the counts)");
  // Each component's probability of each held-out token: uniform, then the MLE of order 1..order.
  std::vector<std::vector<double>> components;
  for_each_prediction(sequences, order, [&](std::span<const int> history, int w) {
    std::vector<double> c(static_cast<size_t>(order) + 1);
    c[0] = counts.is_predictable(w) ? 1.0 / static_cast<double>(counts.predictable()) : 0.0;
    for (int k = 1; k <= order; ++k) c[static_cast<size_t>(k)] = counts.interpolation_component(history, w, k);
    components.push_back(std::move(c));
  });
  if (components.empty()) fail("fit_lambdas", "no held-out tokens to fit the weights on");
  std::vector<double> lambdas(static_cast<size_t>(order) + 1, 1.0 / (order + 1));
  for (int it = 0; it < iterations; ++it) {
    // E step: how much each component is responsible for each token; M step: the average.
    std::vector<double> responsibility(lambdas.size(), 0.0);
    for (const std::vector<double>& c : components) {
      double mix = 0;
      for (size_t k = 0; k < c.size(); ++k) mix += lambdas[k] * c[k];
      if (mix <= 0) continue;
      for (size_t k = 0; k < c.size(); ++k) responsibility[k] += lambdas[k] * c[k] / mix;
    }
    double sum = 0;
    for (double r : responsibility) sum += r;
    for (size_t k = 0; k < lambdas.size(); ++k) lambdas[k] = responsibility[k] / sum;
  }
  return lambdas;
}

double mean_total_probability(const NGramCounts& counts, const Estimator& e,
                              const std::vector<std::vector<int>>& sequences) {
  double total = 0;
  int64_t histories = 0;
  for_each_prediction(sequences, e.order, [&](std::span<const int> history, int) {
    for (double p : counts.distribution(e, history)) total += p;
    ++histories;
  });
  return histories ? total / static_cast<double>(histories) : 0;
}

std::vector<int> sample(const NGramCounts& counts, const Estimator& e, Generator& gen, int max_length) {
  std::vector<int> history(static_cast<size_t>(std::max(0, e.order - 1)), kBos), out;
  for (int t = 0; t < max_length; ++t) {
    const std::vector<double> p = counts.distribution(e, history);
    double total = 0;
    for (double v : p) total += v;  // divides out the excess of simple back-off
    if (total <= 0) break;          // MLE after a history it never saw
    double u = gen.uniform() * total;
    int w = 0;
    while (w + 1 < static_cast<int>(p.size()) && u >= p[static_cast<size_t>(w)]) u -= p[static_cast<size_t>(w++)];
    if (w == kEos) break;
    out.push_back(w);
    if (!history.empty()) {
      history.erase(history.begin());
      history.push_back(w);
    }
  }
  return out;
}

}  // namespace ladder::models
