#include "lessons/17_delta_rule/memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "plot/plot.h"

namespace ladder::lessons {
namespace {

constexpr int64_t kAgedPairs = 48;   // the gated rule's pairs, fewer than D: the forgetting is the decay's
constexpr int64_t kAgedDraws = 16;   // sets of pairs averaged at each age

// n random unit keys (n,D): rows of normal numbers, each scaled to length 1.
Tensor unit_rows(int64_t n, int64_t d, Generator& gen) {
  const Tensor x = randn({n, d}, gen);
  return x / sqrt(sum(x * x, {1}, /*keepdim=*/true));
}

// Linear attention's state: S = sum_i k_i v_i^T = K^T V, keys (N,D), values (N,E) -> (D,E).
Tensor additive_state(const Tensor& keys, const Tensor& values) { return matmul(transpose(keys, 0, 1), values); }

// The delta rule over the pairs in order, starting from `state`, each write after a decay alpha.
Tensor delta_write(Tensor state, const Tensor& keys, const Tensor& values, float alpha) {
  for (int64_t t = 0; t < keys.size(0); ++t) {
    const Tensor k = narrow(keys, 0, t, 1), v = narrow(values, 0, t, 1);  // (1,D), (1,E)
    state = alpha * state;
    const Tensor held = matmul(k, state);  // (1,E): S^T k, what the state answers for k now
    state = state + matmul(transpose(k, 0, 1), v - held);
  }
  return state;
}

// |S^T k_i - v_i|^2 / |v_i|^2 for each pair: (N).
Tensor squared_errors(const Tensor& state, const Tensor& keys, const Tensor& values) {
  const Tensor miss = matmul(keys, state) - values;
  return sum(miss * miss, {1}) / sum(values * values, {1});
}

double rms_error(const Tensor& state, const Tensor& keys, const Tensor& values) {
  return std::sqrt(mean(squared_errors(state, keys, values)).item());
}

struct Rules {
  std::string name, label;
  std::vector<double> error;  // at each count of pairs
};

// Error against the pairs written, for each rule, averaged (as a mean square) over the draws.
std::vector<Rules> error_against_pairs(const MemorySettings& s, const std::vector<int64_t>& counts, Generator& gen) {
  std::vector<Rules> rules = {{"additive", "additive (linear attention)", {}},
                              {"delta", "delta rule, one pass", {}},
                              {"swept", cat("delta rule, ", s.sweeps, " passes over the pairs"), {}},
                              {"least_squares", "least squares: the best a D x D state does", {}}};
  for (const int64_t n : counts) {
    double additive = 0, delta = 0, swept = 0;
    for (int64_t draw = 0; draw < s.draws; ++draw) {
      const Tensor keys = unit_rows(n, s.dim, gen), values = unit_rows(n, s.dim, gen);
      additive += std::pow(rms_error(additive_state(keys, values), keys, values), 2);
      Tensor state = delta_write(zeros({s.dim, s.dim}), keys, values, 1.0f);
      delta += std::pow(rms_error(state, keys, values), 2);
      for (int64_t pass = 1; pass < s.sweeps; ++pass) state = delta_write(state, keys, values, 1.0f);
      swept += std::pow(rms_error(state, keys, values), 2);
    }
    const auto draws = static_cast<double>(s.draws);
    rules[0].error.push_back(std::sqrt(additive / draws));
    rules[1].error.push_back(std::sqrt(delta / draws));
    rules[2].error.push_back(std::sqrt(swept / draws));
    // The values outside the keys' span are lost whatever S is: (N - D) / N of them in mean square.
    rules[3].error.push_back(std::sqrt(std::max(0.0, 1.0 - static_cast<double>(s.dim) / static_cast<double>(n))));
  }
  return rules;
}

// Half D pairs written, then half of their keys written again with new values: what each rule
// answers for a rewritten key, against its new value, and for a key left alone.
void overwrite(const MemorySettings& s, Generator& gen, harness::Summary& summary) {
  const int64_t n = s.dim / 2, rewritten = n / 2;
  double errors[2][2] = {};  // [additive, delta][rewritten, untouched], mean squares
  for (int64_t draw = 0; draw < s.draws; ++draw) {
    const Tensor keys = unit_rows(n, s.dim, gen), values = unit_rows(n, s.dim, gen);
    const Tensor again = narrow(keys, 0, 0, rewritten), fresh = unit_rows(rewritten, s.dim, gen);
    const Tensor kept = narrow(keys, 0, rewritten, n - rewritten), kept_values = narrow(values, 0, rewritten, n - rewritten);
    const Tensor additive = additive_state(keys, values) + additive_state(again, fresh);
    const Tensor delta = delta_write(delta_write(zeros({s.dim, s.dim}), keys, values, 1.0f), again, fresh, 1.0f);
    int rule = 0;
    for (const Tensor* state : {&additive, &delta}) {
      errors[rule][0] += std::pow(rms_error(*state, again, fresh), 2);
      errors[rule][1] += std::pow(rms_error(*state, kept, kept_values), 2);
      ++rule;
    }
  }
  std::printf("\n  %lld pairs written, then %lld of their keys again with new values; the error of a read:\n"
              "  %-10s %24s %16s\n", static_cast<long long>(n), static_cast<long long>(rewritten), "rule",
              "rewritten key, new value", "untouched key");
  const char* names[] = {"additive", "delta"};
  for (int rule = 0; rule < 2; ++rule) {
    const double changed = std::sqrt(errors[rule][0] / static_cast<double>(s.draws));
    const double untouched = std::sqrt(errors[rule][1] / static_cast<double>(s.draws));
    std::printf("  %-10s %24.3f %16.3f\n", names[rule], changed, untouched);
    summary.report(cat("overwrite_", names[rule]), changed, "part 1: error reading a rewritten key, against its new value");
    summary.report(cat("untouched_", names[rule]), untouched, "part 1: error reading a key written once, in the same state");
  }
}

// The gated rule: kAgedPairs pairs written with decay alpha, each read back; error against its
// age (0: the last written), a root mean square over the draws. The keys do not overlap (the first
// unit vectors: what a trained model can make of distinct keys), so that what is lost is the
// decay's alone, alpha^age of each value; one line with random keys beside them, for the overlap's.
void forgetting(harness::Run& run, const MemorySettings& s, Generator& gen, harness::Summary& summary) {
  plot::LineChart chart{.title = cat("The gated delta rule forgets the oldest first: ", kAgedPairs, " pairs, D = ", s.dim),
                        .x_label = "age of the pair (writes since; 0: the last)", .y_label = "error of its read"};
  std::printf("\n  gated: %lld pairs, each write after a decay alpha of the state; error by age of the pair:\n  %-22s",
              static_cast<long long>(kAgedPairs), "keys, alpha");
  const int64_t ages[] = {0, 8, 16, 32, kAgedPairs - 1};
  for (const int64_t age : ages) std::printf(" %8s", cat("age ", age).c_str());
  std::printf("\n");
  const Tensor apart = one_hot(arange(static_cast<float>(kAgedPairs)), s.dim);  // (N,D): key i is unit vector i
  struct Line {
    std::string keys;
    float alpha;
  };
  for (const Line& l : {Line{"apart", 1.0f}, Line{"apart", 0.98f}, Line{"apart", 0.9f}, Line{"random", 1.0f}}) {
    std::vector<double> squared(kAgedPairs, 0.0);
    for (int64_t draw = 0; draw < kAgedDraws; ++draw) {
      const Tensor keys = l.keys == "apart" ? apart : unit_rows(kAgedPairs, s.dim, gen);
      const Tensor values = unit_rows(kAgedPairs, s.dim, gen);
      const Tensor errors = squared_errors(delta_write(zeros({s.dim, s.dim}), keys, values, l.alpha), keys, values);
      for (int64_t i = 0; i < kAgedPairs; ++i) squared[static_cast<size_t>(kAgedPairs - 1 - i)] += errors.data()[i];
    }
    const std::string name = cat(l.keys, " keys, alpha ", l.alpha);
    plot::Series line{name, {}, {}};
    for (int64_t age = 0; age < kAgedPairs; ++age)
      line.x.push_back(static_cast<double>(age)), line.y.push_back(std::sqrt(squared[static_cast<size_t>(age)] / kAgedDraws));
    std::printf("  %-22s", name.c_str());
    for (const int64_t age : ages) std::printf(" %8.3f", line.y[static_cast<size_t>(age)]);
    std::printf("\n");
    summary.report(cat("forget_", l.keys, "_", l.alpha, "_age_32"), line.y[32],
                   cat("part 1: gated, ", name, ", error of the pair 32 writes old"));
    chart.series.push_back(line);
  }
  run.wrote(plot::save_line_chart(run.path("memory_age"), chart));
}

}  // namespace

void state_as_memory(harness::Run& run, const MemorySettings& s, Generator& gen, harness::Summary& summary) {
  std::printf("\n== 1. The state as a memory: random unit keys and values, D = %lld, a state of %lld numbers ==\n",
              static_cast<long long>(s.dim), static_cast<long long>(s.dim * s.dim));
  NoGradGuard no_grad;
  std::vector<int64_t> counts;
  for (int64_t n = 4; n <= s.most_pairs; n += 4) counts.push_back(n);
  const std::vector<Rules> rules = error_against_pairs(s, counts, gen);
  std::printf("  error of a read (root mean square over the pairs and %lld draws) against the pairs written:\n  %-8s",
              static_cast<long long>(s.draws), "pairs");
  for (const Rules& r : rules) std::printf(" %14s", r.name.c_str());
  std::printf("\n");
  plot::LineChart chart{.title = cat("Reading back what was written: ", s.dim, " x ", s.dim, " state, random unit keys"),
                        .x_label = "key-value pairs written", .y_label = "error of a read (0: exact)"};
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] % 16 != 0 && counts[i] != 4) continue;  // the table every 16; the chart has every 4
    std::printf("  %-8lld", static_cast<long long>(counts[i]));
    for (const Rules& r : rules) std::printf(" %14.3f", r.error[i]);
    std::printf("\n");
  }
  for (const Rules& r : rules) {
    chart.series.push_back({r.label, {counts.begin(), counts.end()}, r.error});
    for (const int64_t at : {int64_t{16}, s.dim, s.most_pairs})
      if (const auto it = std::find(counts.begin(), counts.end(), at); it != counts.end())
        summary.report(cat("memory_", r.name, "_", at), r.error[static_cast<size_t>(it - counts.begin())],
                       cat("part 1: ", r.label, ", error of a read after ", at, " pairs"));
  }
  run.wrote(plot::save_line_chart(run.path("memory_error"), chart));
  overwrite(s, gen, summary);
  forgetting(run, s, gen, summary);
}

}  // namespace ladder::lessons
