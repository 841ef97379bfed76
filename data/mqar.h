// Multi-query associative recall (MQAR, Arora et al. 2023, "Zoology"): key-value pairs side by side,
// then queries, each a key of one pair, answered at its own position by that pair's value:
//   k7 v3 k2 v9 k5 v1 k0 v4  .  .  k2  .  k0  k5  .        answers at the queries: 9, 4, 1
// Keys are distinct within a sequence; so are the keys asked. The answer is at the query, whose
// value is two tokens away from the matching key: an attention model must first bring each value
// to its key (or the key to its value), then match the query against it, an induction-style circuit
// of two layers. The one-hop form writes each pair as one token (key and value in one id), which one
// attention layer can read directly: the easier variant.
// Token ids: 0 filler '.', then the keys, then the values, then (one-hop form) the pair tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/batcher.h"

namespace ladder::data {

struct MqarOptions {
  int64_t pairs = 16;    // key-value pairs per sequence, at its start, each key once
  int64_t queries = 16;  // keys asked after the pairs, each once (at most pairs)
  int64_t keys = 64;     // distinct keys (at least pairs)
  int64_t values = 16;   // distinct values: the classes
  int64_t length = 0;    // tokens per sequence; 0: just enough (2 pairs + queries), more: filler among the queries
  bool one_hop = false;  // each pair as one token: key and value in one id, then filler
  int64_t train = 10000, val = 500, test = 1000;  // sequences in each part
  uint64_t seed = 0;  // each part draws from its own generator made from the seed

  // Throws ladder::Error when a setting is out of range or the pairs and queries do not fit the
  // length. make_mqar calls it; a lesson calls it to refuse its flags before any work.
  void check() const;
  int64_t tokens() const { return length > 0 ? length : 2 * pairs + queries; }  // per sequence
};

struct MqarSplits {
  // inputs (N,T) token ids; labels (N,T): the value asked at each query, kNoAnswer elsewhere.
  LabelledBatch train, val, test;
};

// Draws the three parts: in each sequence the pairs (keys without repeats, values with), then
// queries at distinct positions after them, in the order drawn, filler elsewhere.
MqarSplits make_mqar(const MqarOptions& options);

int64_t mqar_key_token(int64_t key);                                            // the id of key k (0-based)
int64_t mqar_value_token(int64_t value, const MqarOptions& options);            // of value v
int64_t mqar_pair_token(int64_t key, int64_t value, const MqarOptions& options);  // one-hop: key k with value v
int64_t mqar_vocabulary(const MqarOptions& options);  // every id above, the pair tokens only in the one-hop form
double mqar_chance(const MqarOptions& options);       // 1 / values: guessing's accuracy per query

// Sequence n as text, a word per token: "k7 v3 k2 v9 . . k2? ..." (one-hop pairs "k7=3"), each query
// written with a '?' after its key.
std::string mqar_text(const LabelledBatch& set, int64_t n, const MqarOptions& options);

}  // namespace ladder::data
