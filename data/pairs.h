// Sequence pairs for translation (lessons 07, 09, 10): pairs read from a tab-separated file, their
// train/validation/test split, the source and target tokenizers, and the pairs as token ids that
// pad_pairs / sample_pairs (batcher.h) turn into padded batches.
//
// A pairs file has one pair a line: source<TAB>target, and any further columns are ignored. That is
// the format of the Tatoeba English-French file (fra.txt) that d2l's seq2seq chapter uses:
//   Go.<TAB>Va !<TAB>CC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #1158250 (Wittydev)
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/batcher.h"
#include "data/tokenizer.h"

namespace ladder::data {

// One pair, as written: the tokenizer does the normalising (lower case, spaces before punctuation).
struct TextPair {
  std::string source, target;
  bool operator==(const TextPair&) const = default;
};

// The three parts of a set of pairs. A source string is never in two parts (all the pairs that share
// a source, such as the several translations of "Go.", stay together).
struct PairSplits {
  std::vector<TextPair> train, val, test;
  std::string description;  // where they came from, for printing
  int64_t dropped = 0;      // pairs left out for being longer than max_len
};

// The tokens of a pair: words by d2l's rule (lower-cased, a space before , . ! ?, no-break spaces
// as spaces; "Va !" -> va !), or characters as written.
enum class PairLevel { word, chars };

struct PairsOptions {
  std::string data;        // the pairs file (--data)
  std::string val;         // a pairs file for validation (--val); empty: held out from `data`
  PairLevel level = PairLevel::word;
  int64_t max_len = 0;     // pairs whose source or target has more tokens are dropped; 0 keeps all
  int64_t batch = 1;       // the training part must hold at least one batch
  float val_fraction = 0.1f, test_fraction = 0.1f;  // shares of the distinct sources held out
  uint64_t seed = 0;       // which sources are held out
};

// The longest line a pairs file may have. Tatoeba's longest sentence pairs, with their attribution,
// take about 1,300 bytes; a line far longer is not a sentence pair (a file without line ends).
inline constexpr size_t kMaxPairLineBytes = 10000;

// Reads, checks and splits a pairs file (test always from `data`; validation from `val` when given).
// Blank lines are skipped; every other bad line is refused, naming the file and the line: a line
// without a tab, with an empty source or target (or one that splits into no tokens: only no-break
// spaces), longer than kMaxPairLineBytes, with a NUL byte or
// with bytes that are not UTF-8 (the message says how to convert the file). A UTF-8 byte order mark
// is skipped; a UTF-16 or UTF-32 file is refused as such. Also throws ladder::Error for a missing or
// empty file, too few pairs to hold out, or fewer training pairs than one batch.
PairSplits load_pairs(const PairsOptions& options);

// The source and the target vocabularies, built from the training pairs only.
struct PairTokenizers {
  Tokenizer source, target;
  // Both, for a checkpoint's metadata: {"source_tokenizer": JSON, "target_tokenizer": JSON}.
  std::map<std::string, std::string> metadata() const;
};
// Each side at its own level (the number task reads words and writes digits). Words seen fewer than
// min_count times in the training pairs are left out of the vocabulary and read as <unk>, as d2l's
// min_freq (min_count applies to word level only: every character is kept).
PairTokenizers pair_tokenizers(const std::vector<TextPair>& train, PairLevel source_level, PairLevel target_level,
                               int64_t min_count = 1);

// Which part a generated source belongs to (the date and number tasks): a seeded hash of the
// string, about 80% train, 10% validation, 10% test. The same string always lands in the same
// part, whichever date, format or number wrote it, so no source is in two parts.
enum class PairPart { train, val, test };
PairPart generated_part(const std::string& source, uint64_t seed);

// The three parts a generated task fills, in order, each with its name in messages ("training")
// and the number of pairs wanted: a task's loop over them draws each part's pairs into `out`.
struct PartToFill {
  PairPart part;
  const char* name;
  int64_t wanted;
  std::vector<TextPair>& pairs;
};
std::array<PartToFill, 3> parts_to_fill(PairSplits& out, int64_t train, int64_t val, int64_t test);

// Each pair as ids (source, target), without <bos> or <eos>: pad_pairs adds them.
std::vector<IdPair> encode_pairs(const std::vector<TextPair>& pairs, const PairTokenizers& tokenizers);

}  // namespace ladder::data
