#include "data/retrieval.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/random.h"

namespace ladder::data {

namespace {

constexpr int64_t filler = 0, question = 1;

}  // namespace

void RetrievalTaskOptions::check() const {
  const char* op = "RetrievalTaskOptions";
  if (keys < 2 || keys > 26) fail(op, "keys must be in [2, 26] (one letter each), got ", keys);
  if (values < 2 || values > 10) fail(op, "values must be in [2, 10] (one digit each), got ", values);
  if (length < 6) fail(op, "length must be >= 6 (the asked pair, room around it and the question), got ", length);
  if (distractors < 0) fail(op, "distractors must be >= 0, got ", distractors);
  // The asked pair (key at p, value at p + 1) ends before the question at length - 2 when p <= length - 4.
  if (min_distance < 3 || min_distance > length - 1)
    fail(op, "min_distance must be in [3, length - 1 = ", length - 1, "], got ", min_distance,
         "; the asked key sits at least min_distance positions before the question's key");
  const int64_t body = length - 2;  // every position before the question
  if (4 * (distractors + 1) > body)
    fail(op, distractors, " distractor pairs and the asked one would fill more than half of the ", body,
         " positions before the question; use at most ", body / 4 - 1, " distractors or a longer sequence");
  if (train < 0 || val < 0 || test < 0)
    fail(op, "the parts need >= 0 sequences, got train ", train, ", val ", val, ", test ", test);
}

namespace {

// One sequence into row n of `set`: filler, the asked pair early, distractor pairs at free places.
void draw_sequence(RetrievalSet& set, int64_t n, const RetrievalTaskOptions& o, Generator& gen) {
  const int64_t length = o.length, body = length - 2;
  std::vector<int64_t> tokens(static_cast<size_t>(length), filler);
  const int64_t key = gen.randint(0, o.keys), value = gen.randint(0, o.values);
  const int64_t position = gen.randint(0, length - o.min_distance);  // length - 1 - position >= min_distance
  tokens[position] = key_token(key);
  tokens[position + 1] = value_token(value, o);
  for (int64_t d = 0; d < o.distractors;) {
    const int64_t at = gen.randint(0, body - 1);  // the pair takes at and at + 1, both before the question
    if (tokens[at] != filler || tokens[at + 1] != filler) continue;  // at most half is taken: few retries
    const int64_t other = (key + gen.randint(1, o.keys)) % o.keys;  // any key but the asked one
    tokens[at] = key_token(other);
    tokens[at + 1] = value_token(gen.randint(0, o.values), o);
    ++d;
  }
  tokens[length - 2] = question;
  tokens[length - 1] = key_token(key);
  for (int64_t t = 0; t < length; ++t) set.tokens.data()[n * length + t] = static_cast<float>(tokens[t]);
  set.answers.data()[n] = static_cast<float>(value);
  set.key_positions[n] = position;
}

RetrievalSet draw_set(int64_t count, const RetrievalTaskOptions& o, Generator gen) {
  RetrievalSet set{zeros({count, o.length}), zeros({count}), std::vector<int64_t>(static_cast<size_t>(count))};
  for (int64_t n = 0; n < count; ++n) draw_sequence(set, n, o, gen);
  return set;
}

}  // namespace

int64_t retrieval_vocabulary(const RetrievalTaskOptions& o) { return 2 + o.keys + o.values; }
int64_t key_token(int64_t key) { return 2 + key; }
int64_t value_token(int64_t value, const RetrievalTaskOptions& o) { return 2 + o.keys + value; }
double retrieval_chance(const RetrievalTaskOptions& o) { return 1.0 / static_cast<double>(o.values); }

RetrievalSplits make_retrieval_task(const RetrievalTaskOptions& o) {
  o.check();
  Generator root(o.seed);  // one child per part: the test part does not change when train grows
  Generator train = root.child(), val = root.child(), test = root.child();
  return {draw_set(o.train, o, train), draw_set(o.val, o, val), draw_set(o.test, o, test)};
}

int64_t pair_token(int64_t key, int64_t value, const RetrievalTaskOptions& o) {
  return retrieval_vocabulary(o) + key * o.values + value;
}
int64_t paired_vocabulary(const RetrievalTaskOptions& o) { return retrieval_vocabulary(o) + o.keys * o.values; }

RetrievalSet pair_tokens(const RetrievalSet& set, const RetrievalTaskOptions& o) {
  const int64_t rows = set.tokens.size(0), length = set.tokens.size(1);
  RetrievalSet paired{set.tokens.clone(), set.answers, set.key_positions};  // tokens (N,T)
  float* t = paired.tokens.data();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t p = r * length; p < r * length + length - 2; ++p) {  // the question's two tokens stay
      const auto key = static_cast<int64_t>(t[p]) - key_token(0), value = static_cast<int64_t>(t[p + 1]) - value_token(0, o);
      if (key < 0 || key >= o.keys || value < 0 || value >= o.values) continue;
      t[p] = static_cast<float>(pair_token(key, value, o));
      t[p + 1] = filler;
    }
  return paired;
}

KeyDistances key_distances(const RetrievalSet& set, int64_t block) {
  if (block < 1) fail("key_distances", "block must be at least 1, got ", block);
  const int64_t last = set.tokens.size(1) - 1;  // the question's key
  KeyDistances d;
  for (const int64_t key : set.key_positions) {
    d.positions.push_back(last - key);
    d.blocks.push_back(last / block - key / block);
  }
  return d;
}

LabelledBatch paired_examples(const RetrievalSet& set, const RetrievalTaskOptions& o) {
  const RetrievalSet paired = pair_tokens(set, o);
  return {paired.tokens, paired.answers};
}

std::string retrieval_text(const RetrievalSet& set, int64_t n, const RetrievalTaskOptions& o) {
  const int64_t length = set.tokens.size(1);
  std::string text;
  for (int64_t t = 0; t < length; ++t) {
    const auto token = static_cast<int64_t>(set.tokens.data()[n * length + t]);
    if (token == filler) {
      text += '.';
    } else if (token == question) {
      text += '?';
    } else if (token < key_token(o.keys)) {
      text += static_cast<char>('A' + (token - key_token(0)));
    } else {
      text += static_cast<char>('0' + (token - value_token(0, o)));
    }
  }
  return text;
}

std::vector<std::string> retrieval_blocks(const RetrievalSet& set, int64_t n, const RetrievalTaskOptions& o,
                                          int64_t block) {
  if (block < 1) fail("retrieval_blocks", "block must be at least 1, got ", block);
  const std::string text = retrieval_text(set, n, o);
  const auto length = static_cast<int64_t>(text.size());
  const int64_t key = set.key_positions[static_cast<size_t>(n)];
  std::vector<std::string> lines;
  for (int64_t start = 0; start < length; start += block) {
    const int64_t end = std::min(length, start + block);
    char label[32];
    std::snprintf(label, sizeof label, "block %3lld | ", static_cast<long long>(start / block));
    std::string marks(std::strlen(label), ' ');
    for (int64_t t = start; t < end; ++t) marks += t == key || t == key + 1 || t >= length - 2 ? '^' : ' ';
    lines.push_back(label + text.substr(static_cast<size_t>(start), static_cast<size_t>(end - start)));
    if (marks.find('^') != std::string::npos) lines.push_back(marks.substr(0, marks.find_last_not_of(' ') + 1));
  }
  return lines;
}

}  // namespace ladder::data
