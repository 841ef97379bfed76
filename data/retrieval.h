// The long-range retrieval task of lesson 13, generated and seeded: a sequence of filler with key/value
// pairs scattered in it, and at its end a question naming one key; the answer is that key's value.
//   C 4 . . . A 7 . . . . F 2 . . . . . . . . . D 9 . . . . ? C    -> 4
// The asked pair sits early, at least min_distance positions before the question's key, and no other
// pair uses its key: a model that looks back only a window of fewer positions than that sees
// distractors alone and can only guess (1 / values). Tokens: 0 filler '.', 1 the question mark
// '?', then the keys ('A', 'B', ...), then the values ('0', '1', ...), so each prints as one character.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/batcher.h"

namespace ladder::data {

struct RetrievalTaskOptions {
  int64_t length = 512;        // tokens per sequence, the question ('?' and the key) included
  int64_t keys = 16;           // distinct keys, 2 to 26
  int64_t values = 10;         // distinct values, 2 to 10: the classes
  int64_t distractors = 12;    // other key/value pairs anywhere before the question, keys != the asked one
  int64_t min_distance = 256;  // the asked key sits at least this many positions before the last token
  int64_t train = 10000, val = 1000, test = 1000;  // sequences in each part
  uint64_t seed = 0;  // each part draws from its own generator made from the seed

  // Throws ladder::Error when a setting is out of range, the distance leaves no room before the
  // question, or the distractors would fill more than half the positions. make_retrieval_task
  // calls it; a lesson calls it to refuse its flags before any work.
  void check() const;
};

struct RetrievalSet {
  Tensor tokens;   // (N, length): token ids as floats
  Tensor answers;  // (N): the asked key's value, a class in [0, values)
  std::vector<int64_t> key_positions;  // where the asked key sits in each sequence
};

struct RetrievalSplits {
  RetrievalSet train, val, test;
};

// Checks the options (RetrievalTaskOptions::check), then draws the three parts.
RetrievalSplits make_retrieval_task(const RetrievalTaskOptions& options);

int64_t retrieval_vocabulary(const RetrievalTaskOptions& options);  // 2 + keys + values token ids
int64_t key_token(int64_t key);                                    // the id of key k (0-based)
int64_t value_token(int64_t value, const RetrievalTaskOptions& options);
double retrieval_chance(const RetrievalTaskOptions& options);       // 1 / values: guessing's accuracy

// The task as a classifier reads it best: each pair as one token, key k with value v becoming
// pair_token(k, v) at the key's place and filler at the value's, so that finding the asked pair is
// one attention hop (the question's key against the pair tokens); the question's '?' and key stay
// as they are, and so do the answers and key positions. As two tokens a model must first learn
// from its positions which value follows which key, which takes far more training (lesson 13).
RetrievalSet pair_tokens(const RetrievalSet& set, const RetrievalTaskOptions& options);
int64_t pair_token(int64_t key, int64_t value, const RetrievalTaskOptions& options);  // after the plain ids
int64_t paired_vocabulary(const RetrievalTaskOptions& options);  // retrieval_vocabulary + keys * values
// The set as a classifier's examples, each pair one token: inputs pair_tokens(set).tokens (N,T),
// labels the answers (N), every position real (lessons 13 and 15).
LabelledBatch paired_examples(const RetrievalSet& set, const RetrievalTaskOptions& options);

// How far back the asked key sits in each sequence of `set`: in positions before the question's
// key (the last token), and in blocks of `block` positions from the question's block (0: the same
// block). A sliding window of 3 blocks moves information one block per layer, so a key b blocks
// back needs b layers of it to reach the question (lesson 13).
struct KeyDistances {
  std::vector<int64_t> positions, blocks;  // per sequence
};
KeyDistances key_distances(const RetrievalSet& set, int64_t block);

// Sequence n of a set as characters, one per token: "C4...A7....?C".
std::string retrieval_text(const RetrievalSet& set, int64_t n, const RetrievalTaskOptions& options);
// The same text a block of `block` tokens per line ("block   3 | ...F9..."), each line that holds
// the asked pair or the question followed by one with '^' under them.
std::vector<std::string> retrieval_blocks(const RetrievalSet& set, int64_t n, const RetrievalTaskOptions& options,
                                          int64_t block);

}  // namespace ladder::data
