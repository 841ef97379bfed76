#include "data/pairs.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "core/random.h"
#include "data/text.h"

namespace ladder::data {

namespace {

constexpr const char* kSourceKey = "source_tokenizer";
constexpr const char* kTargetKey = "target_tokenizer";

// A tokenizer of this level with a vocabulary from `texts` (none: it can still split and count).
Tokenizer level_tokenizer(const std::vector<std::string>& texts, PairLevel level, int64_t min_count) {
  return level == PairLevel::chars ? Tokenizer::chars(texts)
                                   : Tokenizer::words(texts, min_count, true, Tokenizer::WordSplit::d2l);
}

// A line as an error message shows it: at most 60 bytes, cut at a character boundary.
std::string excerpt(const std::string& line) {
  if (line.size() <= 60) return line;
  size_t cut = 57;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return line.substr(0, cut) + "...";
}

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// The pairs of a file in file order: source<TAB>target[<TAB>ignored], one a line; blank lines skipped.
std::vector<TextPair> read_pairs(const std::string& path) {
  std::istringstream in(read_text_file(path));
  std::vector<TextPair> pairs;
  int64_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (trim(line).empty()) continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos)
      fail("load_pairs", path, ":", number, ": no tab in \"", excerpt(line),
           "\"; each line must be source<TAB>target (further columns are ignored)");
    const size_t end = line.find('\t', tab + 1);  // npos: the target runs to the end of the line
    TextPair pair{trim(line.substr(0, tab)), trim(line.substr(tab + 1, end == std::string::npos ? end : end - tab - 1))};
    if (pair.source.empty() || pair.target.empty())
      fail("load_pairs", path, ":", number, ": the ", pair.source.empty() ? "source" : "target", " is empty in \"",
           excerpt(line), "\"; each line must be source<TAB>target");
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

// The pairs of distinct sources, shuffled (seeded), cut into test, validation and training parts;
// each part keeps the file order.
PairSplits split_by_source(const std::vector<TextPair>& pairs, float val_fraction, float test_fraction, uint64_t seed,
                           const std::string& path) {
  std::vector<std::string> sources;
  std::unordered_map<std::string, int> part_of;  // 0 train, 1 validation, 2 test
  for (const TextPair& pair : pairs)
    if (part_of.emplace(pair.source, 0).second) sources.push_back(pair.source);
  Generator gen(seed);
  shuffle(sources, gen);
  const size_t n = sources.size();
  auto held_out = [n](float fraction) {
    return fraction > 0 ? std::max<size_t>(1, static_cast<size_t>(std::lround(fraction * static_cast<float>(n)))) : 0;
  };
  const size_t test = held_out(test_fraction), val = held_out(val_fraction);
  if (test + val >= n)
    fail("load_pairs", path, ": ", n, " distinct source(s) are too few to hold out ", test, " for test and ", val,
         " for validation and keep some for training; give more pairs");
  for (size_t i = 0; i < n; ++i) part_of[sources[i]] = i < test ? 2 : i < test + val ? 1 : 0;
  PairSplits out;
  for (const TextPair& pair : pairs) {
    const int part = part_of[pair.source];
    (part == 0 ? out.train : part == 1 ? out.val : out.test).push_back(pair);
  }
  return out;
}

}  // namespace

PairSplits load_pairs(const PairsOptions& options) {
  if (options.data.empty()) fail("load_pairs", "no pairs file given (--data)");
  const bool hold_out_val = options.val.empty();  // a --val file replaces the held-out validation part
  const float val_fraction = hold_out_val ? options.val_fraction : 0;
  if (!(options.test_fraction > 0 && (val_fraction > 0 || !hold_out_val) && options.test_fraction + val_fraction < 1))
    fail("load_pairs", "the held-out fractions must be above 0 and add up to less than 1, got test ",
         options.test_fraction, " and validation ", options.val_fraction);
  if (options.max_len < 0) fail("load_pairs", "--max-len must be 0 (no limit) or more, got ", options.max_len);
  if (options.batch < 1) fail("load_pairs", "--batch must be at least 1, got ", options.batch);

  const Tokenizer splitter = level_tokenizer({}, options.level, 1);
  int64_t dropped = 0;
  auto keep_short = [&](std::vector<TextPair> pairs, const std::string& path) {
    if (options.max_len == 0) return pairs;
    const auto too_long = [&](const TextPair& pair) {
      return static_cast<int64_t>(splitter.split(pair.source).size()) > options.max_len ||
             static_cast<int64_t>(splitter.split(pair.target).size()) > options.max_len;
    };
    const size_t before = pairs.size();
    std::erase_if(pairs, too_long);
    if (pairs.empty())
      fail("load_pairs", path, ": all ", before, " pairs are longer than --max-len ", options.max_len,
           " tokens; raise --max-len");
    dropped += static_cast<int64_t>(before - pairs.size());
    return pairs;
  };

  const std::vector<TextPair> pairs = keep_short(read_pairs(options.data), options.data);
  PairSplits out = split_by_source(pairs, val_fraction, options.test_fraction, options.seed, options.data);
  if (!hold_out_val) out.val = keep_short(read_pairs(options.val), options.val);
  out.dropped = dropped;
  if (static_cast<int64_t>(out.train.size()) < options.batch)
    fail("load_pairs", options.data, ": ", out.train.size(), " training pairs (of ", pairs.size(), " kept, ", dropped,
         " dropped by --max-len) are fewer than one batch of ", options.batch,
         "; give more pairs or a smaller --batch");
  out.description = cat(options.data, " (", options.level == PairLevel::chars ? "characters" : "words", ", seed ",
                        options.seed, hold_out_val ? "" : cat(", validation from ", options.val), ")");
  return out;
}

std::map<std::string, std::string> PairTokenizers::metadata() const {
  return {{kSourceKey, source.to_json()}, {kTargetKey, target.to_json()}};
}

PairTokenizers PairTokenizers::from_metadata(const std::map<std::string, std::string>& metadata) {
  auto get = [&](const char* key) {
    const auto it = metadata.find(key);
    if (it == metadata.end())
      fail("PairTokenizers::from_metadata", "no \"", key,
           "\" in the metadata: the checkpoint was not saved with the tokenizers of its pairs");
    return Tokenizer::from_json(it->second);
  };
  return {get(kSourceKey), get(kTargetKey)};
}

PairTokenizers pair_tokenizers(const std::vector<TextPair>& train, PairLevel level, int64_t min_count) {
  std::vector<std::string> sources, targets;
  for (const TextPair& pair : train) {
    sources.push_back(pair.source);
    targets.push_back(pair.target);
  }
  return {level_tokenizer(sources, level, min_count), level_tokenizer(targets, level, min_count)};
}

std::vector<IdPair> encode_pairs(const std::vector<TextPair>& pairs, const PairTokenizers& tokenizers) {
  std::vector<IdPair> ids;
  ids.reserve(pairs.size());
  for (const TextPair& pair : pairs) ids.emplace_back(tokenizers.source.encode(pair.source), tokenizers.target.encode(pair.target));
  return ids;
}

}  // namespace ladder::data
