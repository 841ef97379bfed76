// Tokenizers: text to ids and back, over characters or over words. The vocabulary is built from
// training text and saved with the model (to_json / from_json). It starts with the special tokens
// its use needs, each found by its name: none for a character stream, <bos> and <eos> for lines,
// all four (<pad>, <bos>, <eos>, <unk>) for words and translation pairs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/text.h"

namespace ladder::data {

class Tokenizer {
 public:
  // The four special tokens in the order a vocabulary holds them: <pad>, <bos>, <eos>, <unk>.
  static const std::vector<std::string>& all_specials();
  // Their ids in a vocabulary that starts with all four (every word vocabulary, and chars() unless
  // given fewer): what the pair, n-gram and seq2seq code of lessons 01 to 10 reads.
  static constexpr int kPad = 0, kBos = 1, kEos = 2, kUnk = 3;
  static constexpr int kNone = -1;  // what pad(), bos(), eos() and unk() give when the vocabulary lacks that token

  // How a text is cut into words (lower-casing, when asked, comes first and covers ASCII and the
  // Latin-1 capitals À-Þ):
  enum class WordSplit {
    punctuation,  // every ASCII punctuation mark is a word of its own: "don't." -> don ' t .
    d2l,          // d2l's rule for translation pairs: no-break spaces (U+00A0, U+202F) become
                  // spaces, a space goes before , . ! ? that follow a non-space, and the words are
                  // what white space separates: "don't." -> don't .   "va !" -> va !
  };

  // `specials` (of all_specials(), in their order), then every character (UTF-8 code point) in the texts, sorted.
  static Tokenizer chars(const std::vector<std::string>& texts, const std::vector<std::string>& specials = all_specials());
  // Words seen at least min_count times.
  static Tokenizer words(const std::vector<std::string>& texts, int64_t min_count = 1, bool lowercase = true,
                         WordSplit split = WordSplit::punctuation);

  int64_t vocab_size() const { return static_cast<int64_t>(tokens_.size()); }
  bool is_char_level() const { return char_level_; }
  std::vector<int> encode(const std::string& text) const;  // unknown pieces become unk()
  std::string decode(const std::vector<int>& ids) const;   // <pad>, <bos>, <eos> are left out
  const std::string& token(int id) const;                  // "<bos>", "a", "the"
  int id(const std::string& token) const;                  // unk() when not in the vocabulary
  // The ids of the special tokens in this vocabulary, kNone for one it does not hold.
  int pad() const { return pad_; }
  int bos() const { return bos_; }
  int eos() const { return eos_; }
  int unk() const { return unk_; }
  std::vector<int64_t> special_ids() const;  // those it holds, in id order
  // The pieces encode() would make, before they become ids.
  std::vector<std::string> split(const std::string& text) const;

  std::string to_json() const;
  static Tokenizer from_json(const std::string& json);

 private:
  Tokenizer(bool char_level, bool lowercase, WordSplit split, std::vector<std::string> tokens);
  bool char_level_, lowercase_;
  WordSplit split_;
  std::vector<std::string> tokens_;
  std::map<std::string, int> ids_;
  int pad_ = kNone, bos_ = kNone, eos_ = kNone, unk_ = kNone;
};

// Both sides of a text as token ids: one sequence per line in lines mode, else one sequence
// for the whole side (its lines joined with "\n").
struct EncodedText {
  std::vector<std::vector<int>> train, val;
};
EncodedText encode_text(const TextData& text, const Tokenizer& tokenizer, bool lines);

// Validation text can hold tokens that the training text never had (the vocabulary's unk(), or kNone
// when it has no <unk>). A neural model never
// sees <unk> in training, so the probability it gives <unk> is an accident of its untrained
// weights and would swamp val_loss (on a 9-token vocabulary, val_ppl 2306). The lessons therefore
// drop unknown tokens from validation sequences (a sequence left empty goes too) and score the
// rest; `unknown` says how many went, `kept` how many are scored (an unknown token is `unknown_id`).
// Throws ladder::Error when none is left.
struct DroppedUnknown {
  int64_t unknown = 0, kept = 0;
  int64_t total() const { return unknown + kept; }
  // "3 of the 1000 validation characters (0.30%) are not in the training text: left out of val_loss"
  std::string describe(const std::string& unit) const;
};
DroppedUnknown drop_unknown(std::vector<std::vector<int>>& sequences, int unknown_id = Tokenizer::kUnk);

// The character vocabulary of the training side as encode_text will see it: in stream mode the
// lines are joined with "\n", so the newline is a character too. `specials` come first.
Tokenizer char_tokenizer(const TextData& text, bool lines, const std::vector<std::string>& specials = Tokenizer::all_specials());

}  // namespace ladder::data
