#include "data/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "data/text.h"

namespace ladder::data {

namespace {

const std::vector<std::string> kSpecials = {"<pad>", "<bos>", "<eos>", "<unk>"};

// Words split on white space, with each ASCII punctuation mark a word of its own.
std::vector<std::string> split_words(const std::string& text, bool lowercase) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) words.push_back(word);
    word.clear();
  };
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isspace(u)) {
      flush();
    } else if (std::ispunct(u)) {
      flush();
      words.emplace_back(1, c);
    } else {
      word += lowercase && u < 0x80 ? static_cast<char>(std::tolower(u)) : c;
    }
  }
  flush();
  return words;
}

}  // namespace

Tokenizer::Tokenizer(bool char_level, bool lowercase, std::vector<std::string> tokens)
    : char_level_(char_level), lowercase_(lowercase), tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) ids_[tokens_[i]] = static_cast<int>(i);
}

Tokenizer Tokenizer::chars(const std::vector<std::string>& texts) {
  std::set<std::string> seen;
  for (const std::string& text : texts)
    for_each_char(text, [&seen](std::string_view c) { seen.insert(std::string(c)); });
  std::vector<std::string> tokens = kSpecials;
  tokens.insert(tokens.end(), seen.begin(), seen.end());
  return Tokenizer(true, false, std::move(tokens));
}

Tokenizer Tokenizer::words(const std::vector<std::string>& texts, int64_t min_count, bool lowercase) {
  if (min_count < 1) fail("Tokenizer::words", "min_count must be at least 1, got ", min_count);
  std::map<std::string, int64_t> counts;
  for (const std::string& text : texts)
    for (const std::string& w : split_words(text, lowercase)) ++counts[w];
  std::vector<std::string> tokens = kSpecials;
  for (const auto& [w, n] : counts)
    if (n >= min_count) tokens.push_back(w);
  return Tokenizer(false, lowercase, std::move(tokens));
}

std::vector<std::string> Tokenizer::split(const std::string& text) const {
  return char_level_ ? utf8_chars(text) : split_words(text, lowercase_);
}

std::vector<int> Tokenizer::encode(const std::string& text) const {
  std::vector<int> ids;
  auto add = [&](std::string_view piece) { ids.push_back(id(std::string(piece))); };
  if (char_level_) {
    ids.reserve(text.size());  // at most one id per byte; growing by doubling would need up to 3x
    for_each_char(text, add);  // not split(): a string per character would cost 32 bytes each
  } else {
    for (const std::string& word : split_words(text, lowercase_)) add(word);
  }
  return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  std::string out;
  for (const int i : ids) {
    if (i == kPad || i == kBos || i == kEos) continue;
    if (!char_level_ && !out.empty()) out += ' ';
    out += token(i);
  }
  return out;
}

const std::string& Tokenizer::token(int id) const {
  if (id < 0 || id >= vocab_size()) fail("Tokenizer", "id ", id, " is outside the vocabulary of ", vocab_size());
  return tokens_[static_cast<size_t>(id)];
}

int Tokenizer::id(const std::string& token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? kUnk : it->second;
}

std::string Tokenizer::to_json() const {
  return nlohmann::json{{"level", char_level_ ? "char" : "word"}, {"lowercase", lowercase_}, {"tokens", tokens_}}.dump();
}

EncodedText encode_text(const TextData& text, const Tokenizer& tokenizer, bool lines) {
  auto encode = [&](const std::vector<std::string>& side) {
    std::vector<std::vector<int>> out;
    if (lines)
      for (const std::string& line : side) out.push_back(tokenizer.encode(line));
    else
      out.push_back(tokenizer.encode(join_lines(side)));
    return out;
  };
  return {encode(text.train), encode(text.val)};
}

DroppedUnknown drop_unknown(std::vector<std::vector<int>>& sequences) {
  DroppedUnknown dropped;
  for (std::vector<int>& s : sequences) {
    const auto unknown = std::count(s.begin(), s.end(), Tokenizer::kUnk);
    dropped.unknown += unknown;
    dropped.kept += static_cast<int64_t>(s.size()) - unknown;
    s.erase(std::remove(s.begin(), s.end(), Tokenizer::kUnk), s.end());
  }
  std::erase_if(sequences, [](const std::vector<int>& s) { return s.empty(); });
  if (dropped.kept == 0)
    fail("drop_unknown", "none of the ", dropped.unknown, " validation tokens occurs in the training text; "
         "validate on text in the same alphabet (--val) as the training text (--data)");
  return dropped;
}

std::string DroppedUnknown::describe(const std::string& unit) const {
  char text[256];
  std::snprintf(text, sizeof text, "%lld of the %lld validation %ss (%.2f%%) are not in the training text: left out of val_loss",
                static_cast<long long>(unknown), static_cast<long long>(total()), unit.c_str(),
                100.0 * static_cast<double>(unknown) / static_cast<double>(std::max<int64_t>(total(), 1)));
  return text;
}

Tokenizer char_tokenizer(const TextData& text, bool lines) {
  return Tokenizer::chars(lines ? text.train : std::vector<std::string>{join_lines(text.train)});
}

Tokenizer Tokenizer::from_json(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    auto tokens = j.at("tokens").get<std::vector<std::string>>();
    if (tokens.size() < kSpecials.size() || !std::equal(kSpecials.begin(), kSpecials.end(), tokens.begin()))
      fail("Tokenizer::from_json", "the vocabulary does not start with the special tokens");
    return Tokenizer(j.at("level").get<std::string>() == "char", j.at("lowercase").get<bool>(), std::move(tokens));
  } catch (const nlohmann::json::exception& e) {
    fail("Tokenizer::from_json", "malformed tokenizer: ", e.what());
  }
}

}  // namespace ladder::data
