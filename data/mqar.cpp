#include "data/mqar.h"

#include <algorithm>

#include "core/error.h"
#include "core/random.h"

namespace ladder::data {

namespace {

constexpr int64_t kFiller = 0;

}  // namespace

void MqarOptions::check() const {
  const char* op = "MqarOptions";
  if (pairs < 1) fail(op, "pairs must be >= 1, got ", pairs);
  if (keys < pairs) fail(op, "keys must be at least the ", pairs, " pairs (each key once per sequence), got ", keys);
  if (values < 2) fail(op, "values must be >= 2, got ", values);
  if (queries < 1 || queries > pairs)
    fail(op, "queries must be in [1, pairs = ", pairs, "] (each key asked once), got ", queries);
  if (length != 0 && length < 2 * pairs + queries)
    fail(op, "length ", length, " is too short for ", pairs, " pairs (", 2 * pairs, " tokens) and ", queries,
         " queries; give at least ", 2 * pairs + queries, " or 0 for just enough");
  if (train < 0 || val < 0 || test < 0)
    fail(op, "the parts need >= 0 sequences, got train ", train, ", val ", val, ", test ", test);
}

int64_t mqar_key_token(int64_t key) { return 1 + key; }
int64_t mqar_value_token(int64_t value, const MqarOptions& o) { return 1 + o.keys + value; }
int64_t mqar_pair_token(int64_t key, int64_t value, const MqarOptions& o) {
  return 1 + o.keys + o.values + key * o.values + value;
}
int64_t mqar_vocabulary(const MqarOptions& o) { return 1 + o.keys + o.values + (o.one_hop ? o.keys * o.values : 0); }
double mqar_chance(const MqarOptions& o) { return 1.0 / static_cast<double>(o.values); }

namespace {

// Row n of `set`: the pairs, then the queries at distinct places after them, filler elsewhere.
void draw_sequence(LabelledBatch& set, int64_t n, const MqarOptions& o, Generator& gen) {
  const int64_t length = o.tokens();
  std::vector<int64_t> keys(static_cast<size_t>(o.keys));
  for (int64_t k = 0; k < o.keys; ++k) keys[k] = k;
  shuffle(keys, gen);  // the first `pairs` are this sequence's keys
  std::vector<int64_t> values(static_cast<size_t>(o.pairs));
  float* tokens = set.inputs.data() + n * length;
  float* labels = set.labels.data() + n * length;
  std::fill(tokens, tokens + length, static_cast<float>(kFiller));
  std::fill(labels, labels + length, static_cast<float>(kNoAnswer));
  for (int64_t p = 0; p < o.pairs; ++p) {
    values[p] = gen.randint(0, o.values);
    tokens[2 * p] = static_cast<float>(o.one_hop ? mqar_pair_token(keys[p], values[p], o) : mqar_key_token(keys[p]));
    if (!o.one_hop) tokens[2 * p + 1] = static_cast<float>(mqar_value_token(values[p], o));
  }
  std::vector<int64_t> asked(static_cast<size_t>(o.pairs)), places(static_cast<size_t>(length - 2 * o.pairs));
  for (int64_t p = 0; p < o.pairs; ++p) asked[p] = p;
  for (size_t i = 0; i < places.size(); ++i) places[i] = 2 * o.pairs + static_cast<int64_t>(i);
  shuffle(asked, gen), shuffle(places, gen);
  for (int64_t q = 0; q < o.queries; ++q) {
    const int64_t pair = asked[q], at = places[q];
    tokens[at] = static_cast<float>(mqar_key_token(keys[pair]));
    labels[at] = static_cast<float>(values[pair]);
  }
}

LabelledBatch draw_set(int64_t count, const MqarOptions& o, Generator gen) {
  LabelledBatch set{zeros({count, o.tokens()}), zeros({count, o.tokens()}), Tensor()};
  for (int64_t n = 0; n < count; ++n) draw_sequence(set, n, o, gen);
  return set;
}

}  // namespace

MqarSplits make_mqar(const MqarOptions& o) {
  o.check();
  Generator root(o.seed);  // one child per part: the test part does not change when train grows
  Generator train = root.child(), val = root.child(), test = root.child();
  return {draw_set(o.train, o, train), draw_set(o.val, o, val), draw_set(o.test, o, test)};
}

std::string mqar_text(const LabelledBatch& set, int64_t n, const MqarOptions& o) {
  const int64_t length = set.inputs.size(1);
  std::string text;
  for (int64_t t = 0; t < length; ++t) {
    const auto token = static_cast<int64_t>(set.inputs.data()[n * length + t]);
    const bool query = set.labels.data()[n * length + t] != kNoAnswer;
    std::string word;
    if (token == kFiller) word = ".";
    else if (token < mqar_value_token(0, o)) word = cat("k", token - mqar_key_token(0), query ? "?" : "");
    else if (token < mqar_pair_token(0, 0, o)) word = cat("v", token - mqar_value_token(0, o));
    else word = cat("k", (token - mqar_pair_token(0, 0, o)) / o.values, "=", (token - mqar_pair_token(0, 0, o)) % o.values);
    text += (t ? " " : "") + word;
  }
  return text;
}

}  // namespace ladder::data
