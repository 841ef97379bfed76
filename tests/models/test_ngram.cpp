// N-gram estimators on a corpus small enough to count by hand: ids a=4, b=5 (0-3 are the special
// tokens); sequences "ab", "a", "bb". Predicted tokens (with one <bos> in front, <eos> behind):
//   a|bos  b|a  eos|b    a|bos  eos|a    b|bos  b|b  eos|b
// unigrams a 2, b 3, eos 3 (N = 8); bigrams (bos a) 2, (bos b) 1, (a b) 1, (a eos) 1, (b b) 1,
// (b eos) 2. V = 4 predictable tokens: eos, unk, a, b.
#include "helpers.h"

#include <cmath>

#include "models/ngram.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_error;

namespace {

constexpr int bos = 1, eos = 2, unk = 3, a = 4, b = 5;
const std::vector<std::vector<int>> corpus = {{a, b}, {a}, {b, b}};

double p(const NGramCounts& c, const Estimator& e, std::vector<int> history, int w) { return c.probability(e, history, w); }

}  // namespace

TEST_CASE("counts") {
  const NGramCounts c(2, corpus, 6);
  CHECK(c.predictable() == 4);
  CHECK(c.count(std::vector<int>{a}) == 2);
  CHECK(c.count(std::vector<int>{eos}) == 3);
  CHECK(c.count(std::vector<int>{bos, a}) == 2);
  CHECK(c.count(std::vector<int>{b, eos}) == 2);
  CHECK(c.count(std::vector<int>{b, a}) == 0);
  CHECK(c.context_total({}) == 8);
  CHECK(c.context_total(std::vector<int>{bos}) == 3);
  CHECK(c.context_types(std::vector<int>{b}) == 2);
  CHECK(c.discount(2) == doctest::Approx(0.5));  // n1 = 4 bigrams seen once, n2 = 2 seen twice: 4 / (4 + 4)
}

TEST_CASE("every estimator by hand") {
  const NGramCounts c(2, corpus, 6);
  const Estimator mle{Smoothing::mle, 2}, add_one{Smoothing::add_one, 2}, add_half{Smoothing::add_delta, 2, 0.5};
  CHECK(p(c, mle, {bos}, a) == doctest::Approx(2.0 / 3));
  CHECK(p(c, mle, {b}, b) == doctest::Approx(1.0 / 3));
  CHECK(p(c, mle, {a}, unk) == 0);
  CHECK(p(c, {Smoothing::mle, 1}, {}, eos) == doctest::Approx(3.0 / 8));
  CHECK(p(c, add_one, {bos}, a) == doctest::Approx(3.0 / 7));
  CHECK(p(c, add_one, {bos}, unk) == doctest::Approx(1.0 / 7));
  CHECK(p(c, add_one, {a}, eos) == doctest::Approx(2.0 / 6));
  CHECK(p(c, add_half, {bos}, a) == doctest::Approx(2.5 / 5));
  CHECK(p(c, add_one, {bos}, bos) == 0);  // <bos> is never predicted
  // The curriculum's back-off: the longest seen context's relative frequency.
  const Estimator simple{Smoothing::simple_backoff, 2};
  CHECK(p(c, simple, {bos}, b) == doctest::Approx(1.0 / 3));
  CHECK(p(c, simple, {bos}, eos) == doctest::Approx(3.0 / 8));   // (bos eos) unseen: the unigram
  CHECK(p(c, simple, {bos}, unk) == doctest::Approx(1.0 / 12));  // unseen even alone: add-one unigram
  // Back-off with absolute discounting, D = 0.5, base = add-one unigram (3/12, 4/12, 4/12, 1/12):
  // seen after bos: (c - D) / 3; unseen: alpha * base with alpha = (D * 2 / 3) / (1 - 3/12 - 4/12) = 4/5.
  const Estimator backoff{Smoothing::backoff, 2};
  CHECK(p(c, backoff, {bos}, a) == doctest::Approx(0.5));
  CHECK(p(c, backoff, {bos}, b) == doctest::Approx(1.0 / 6));
  CHECK(p(c, backoff, {bos}, eos) == doctest::Approx(4.0 / 15));
  CHECK(p(c, backoff, {bos}, unk) == doctest::Approx(1.0 / 15));
  CHECK(p(c, backoff, {unk}, a) == doctest::Approx(3.0 / 12));  // unseen history: the base alone
  const Estimator interp{Smoothing::interpolation, 2, 1, {0.1, 0.3, 0.6}};
  CHECK(p(c, interp, {bos}, a) == doctest::Approx(0.1 / 4 + 0.3 * 2 / 8 + 0.6 * 2 / 3));
}

TEST_CASE("normalised estimators sum to 1 after any history; the simple back-off does not") {
  const NGramCounts c(3, corpus, 6);
  const std::vector<std::vector<int>> histories = {{bos, bos}, {bos, a}, {a, b}, {b, b}, {b, a}, {unk, unk}};
  for (int order = 1; order <= 3; ++order) {
    std::vector<double> lambdas(static_cast<size_t>(order) + 1, 1.0 / (order + 1));
    for (const Estimator& e : {Estimator{Smoothing::add_one, order}, Estimator{Smoothing::add_delta, order, 0.1},
                               Estimator{Smoothing::backoff, order}, Estimator{Smoothing::interpolation, order, 1, lambdas}})
      for (const auto& h : histories) {
        double total = 0;
        for (double v : c.distribution(e, h)) total += v;
        CHECK_MESSAGE(total == doctest::Approx(1.0).epsilon(1e-12), std::string(smoothing_name(e.smoothing)), " order ", order);
      }
  }
  double mle_total = 0;  // MLE sums to 1 after a seen history
  for (double v : c.distribution({Smoothing::mle, 3}, std::vector<int>{bos, a})) mle_total += v;
  CHECK(mle_total == doctest::Approx(1.0));
  CHECK(mean_total_probability(c, {Smoothing::simple_backoff, 3}, corpus) > 1.05);
  CHECK(mean_total_probability(c, {Smoothing::backoff, 3}, corpus) == doctest::Approx(1.0));
}

TEST_CASE("add-one bigram NLL matches the closed form") {
  const NGramCounts c(2, corpus, 6);
  // -mean log (c(h w) + 1) / (c(h) + 4) over the eight predicted tokens listed at the top.
  const double expected = -(std::log(3.0 / 7) + std::log(2.0 / 6) + std::log(3.0 / 7) + std::log(3.0 / 7) +
                            std::log(2.0 / 6) + std::log(2.0 / 7) + std::log(2.0 / 7) + std::log(3.0 / 7)) / 8;
  const Evaluation ev = evaluate(c, {Smoothing::add_one, 2}, corpus);
  CHECK(ev.tokens == 8);
  CHECK(ev.nll == doctest::Approx(expected).epsilon(1e-12));
  CHECK(ev.perplexity() == doctest::Approx(std::exp(expected)));
}

TEST_CASE("MLE gives an unseen n-gram probability zero: infinite perplexity, never NaN") {
  const NGramCounts c(2, corpus, 6);
  const Evaluation ev = evaluate(c, {Smoothing::mle, 2}, {{b, a}});  // (b a) never seen
  CHECK(ev.zero_probability == 1);
  CHECK(std::isinf(ev.nll));
  CHECK(std::isinf(ev.perplexity()));
  CHECK(!std::isnan(ev.perplexity()));
  CHECK(std::isfinite(evaluate(c, {Smoothing::add_one, 2}, {{b, a}}).nll));
}

TEST_CASE("EM interpolation weights sum to 1 and beat equal weights on the data they were fitted on") {
  const NGramCounts c(3, corpus, 6);
  const std::vector<std::vector<int>> held_out = {{a, b, b}, {b}};
  const std::vector<double> lambdas = fit_lambdas(c, 3, held_out);
  double total = 0;
  for (double l : lambdas) total += l;
  CHECK(total == doctest::Approx(1.0));
  const double fitted = evaluate(c, {Smoothing::interpolation, 3, 1, lambdas}, held_out).nll;
  const double equal = evaluate(c, {Smoothing::interpolation, 3, 1, {0.25, 0.25, 0.25, 0.25}}, held_out).nll;
  CHECK(fitted < equal);
}

TEST_CASE("sampling follows the counts and stops at <eos>") {
  const NGramCounts c(2, corpus, 6);
  Generator gen(4);
  for (int i = 0; i < 50; ++i) {
    const std::vector<int> s = sample(c, {Smoothing::mle, 2}, gen);
    for (size_t t = 0; t + 1 < s.size(); ++t) CHECK(!(s[t] == b && s[t + 1] == a));  // (b a) has count 0
    for (int id : s) CHECK((id == a || id == b));
  }
}

TEST_CASE("n-gram errors") {
  check_error([] { NGramCounts(9, corpus, 6); }, {"NGramCounts", "order must be 1 to 8"});
  check_error([] { NGramCounts(2, {{7}}, 6); }, {"NGramCounts", "id 7"});
  const NGramCounts c(2, corpus, 6);
  check_error([&] { c.probability({Smoothing::add_one, 3}, {}, a); }, {"ngram", "order 3 is outside 1..2"});
  check_error([&] { c.probability({Smoothing::interpolation, 2}, {}, a); }, {"interpolation of order 2 needs 3 lambdas"});
  check_error([] { parse_smoothing("kneser"); }, {"unknown estimator 'kneser'", "add-delta"});
  check_error([&] { fit_lambdas(c, 5, corpus); }, {"fit_lambdas", "order 5 is outside 1..2"});
  check_error([&] { fit_lambdas(c, 2, {}); }, {"fit_lambdas", "no held-out tokens"});
  check_error([&] { c.context_total(std::vector<int>(9, a)); }, {"ngram", "9 tokens is longer than the largest order, 8"});
}
