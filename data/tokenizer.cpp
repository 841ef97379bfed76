#include "data/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "data/text.h"

namespace ladder::data {

namespace {

// ASCII capitals and the Latin-1 capitals À-Þ (U+00C0-U+00DE, except ×) in lower case: enough
// for English, French, German, Spanish; other characters are left as they are.
std::string to_lower(std::string text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x80) {
      text[i] = static_cast<char>(std::tolower(u));
    } else if (u == 0xC3 && i + 1 < text.size()) {  // U+00C0-U+00FF are 0xC3 0x80-0xBF in UTF-8
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next <= 0x9E && next != 0x97) text[i + 1] = static_cast<char>(next + 0x20);
      ++i;
    }
  }
  return text;
}

// Words split on white space, with each ASCII punctuation mark a word of its own.
std::vector<std::string> split_words(const std::string& text) {
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
      word += c;
    }
  }
  flush();
  return words;
}

// d2l's preprocessing of translation pairs, then the words between white space.
std::vector<std::string> split_d2l(const std::string& text) {
  constexpr std::string_view kNoBreakSpaces[] = {"\u00A0", "\u202F"};
  std::string spaced;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string_view rest = std::string_view(text).substr(i);
    if (const auto nbsp = std::find_if(std::begin(kNoBreakSpaces), std::end(kNoBreakSpaces),
                                       [&](std::string_view s) { return rest.starts_with(s); });
        nbsp != std::end(kNoBreakSpaces)) {
      spaced += ' ';
      i += nbsp->size() - 1;
      continue;
    }
    if (std::string_view(",.!?").find(text[i]) != std::string_view::npos && !spaced.empty() && spaced.back() != ' ')
      spaced += ' ';
    spaced += text[i];
  }
  std::vector<std::string> words;
  std::istringstream in(spaced);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace

const std::vector<std::string>& Tokenizer::all_specials() {
  static const std::vector<std::string> specials = {"<pad>", "<bos>", "<eos>", "<unk>"};
  return specials;
}

Tokenizer::Tokenizer(bool char_level, bool lowercase, WordSplit split, std::vector<std::string> tokens)
    : char_level_(char_level), lowercase_(lowercase), split_(split), tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) ids_[tokens_[i]] = static_cast<int>(i);
  const auto special = [this](const std::string& name) {
    const auto it = ids_.find(name);
    return it == ids_.end() ? kNone : it->second;
  };
  pad_ = special("<pad>"), bos_ = special("<bos>"), eos_ = special("<eos>"), unk_ = special("<unk>");
}

std::vector<int64_t> Tokenizer::special_ids() const {
  std::vector<int64_t> ids;
  for (const int id : {pad_, bos_, eos_, unk_})
    if (id != kNone) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

Tokenizer Tokenizer::chars(const std::vector<std::string>& texts, const std::vector<std::string>& specials) {
  std::set<std::string> seen;
  for (const std::string& text : texts)
    for_each_char(text, [&seen](std::string_view c) { seen.insert(std::string(c)); });
  std::vector<std::string> tokens = specials;
  tokens.insert(tokens.end(), seen.begin(), seen.end());
  return Tokenizer(true, false, WordSplit::punctuation, std::move(tokens));
}

Tokenizer Tokenizer::words(const std::vector<std::string>& texts, int64_t min_count, bool lowercase, WordSplit split) {
  if (min_count < 1) fail("Tokenizer::words", "min_count must be at least 1, got ", min_count);
  const Tokenizer splitter(false, lowercase, split, {});
  std::map<std::string, int64_t> counts;
  for (const std::string& text : texts)
    for (const std::string& w : splitter.split(text)) ++counts[w];
  std::vector<std::string> tokens = all_specials();
  for (const auto& [w, n] : counts)
    if (n >= min_count) tokens.push_back(w);
  return Tokenizer(false, lowercase, split, std::move(tokens));
}

std::vector<std::string> Tokenizer::split(const std::string& text) const {
  if (char_level_) return utf8_chars(text);
  const std::string words = lowercase_ ? to_lower(text) : text;
  return split_ == WordSplit::d2l ? split_d2l(words) : split_words(words);
}

std::vector<int> Tokenizer::encode(const std::string& text) const {
  std::vector<int> ids;
  auto add = [&](std::string_view piece) { ids.push_back(id(std::string(piece))); };
  if (char_level_) {
    ids.reserve(text.size());  // at most one id per byte; growing by doubling would need up to 3x
    for_each_char(text, add);  // not split(): a string per character would cost 32 bytes each
  } else {
    for (const std::string& word : split(text)) add(word);
  }
  return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  std::string out;
  for (const int i : ids) {
    if (i == pad_ || i == bos_ || i == eos_) continue;
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
  return it == ids_.end() ? unk_ : it->second;
}

std::string Tokenizer::to_json() const {
  return nlohmann::json{{"level", char_level_ ? "char" : "word"},
                        {"lowercase", lowercase_},
                        {"split", split_ == WordSplit::d2l ? "d2l" : "punctuation"},
                        {"tokens", tokens_}}
      .dump();
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

DroppedUnknown drop_unknown(std::vector<std::vector<int>>& sequences, int unknown_id) {
  DroppedUnknown dropped;
  for (std::vector<int>& s : sequences) {
    const auto unknown = std::count(s.begin(), s.end(), unknown_id);
    dropped.unknown += unknown;
    dropped.kept += static_cast<int64_t>(s.size()) - unknown;
    s.erase(std::remove(s.begin(), s.end(), unknown_id), s.end());
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

Tokenizer char_tokenizer(const TextData& text, bool lines, const std::vector<std::string>& specials) {
  return Tokenizer::chars(lines ? text.train : std::vector<std::string>{join_lines(text.train)}, specials);
}

Tokenizer Tokenizer::from_json(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    auto tokens = j.at("tokens").get<std::vector<std::string>>();  // the specials among them are found by name
    const auto split = j.value("split", std::string("punctuation"));  // files from before d2l's rule have none
    if (split != "punctuation" && split != "d2l")
      fail("Tokenizer::from_json", "unknown word split \"", split, "\"; expected \"punctuation\" or \"d2l\"");
    return Tokenizer(j.at("level").get<std::string>() == "char", j.at("lowercase").get<bool>(),
                     split == "d2l" ? WordSplit::d2l : WordSplit::punctuation, std::move(tokens));
  } catch (const nlohmann::json::exception& e) {
    fail("Tokenizer::from_json", "malformed tokenizer: ", e.what());
  }
}

}  // namespace ladder::data
