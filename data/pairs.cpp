#include "data/pairs.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "core/file.h"
#include "core/random.h"
#include "data/text.h"
#include "data/visible_text.h"

namespace ladder::data {

namespace {

constexpr const char* kSourceKey = "source_tokenizer";
constexpr const char* kTargetKey = "target_tokenizer";

// A tokenizer of this level with a vocabulary from `texts` (none: it can still split and count).
Tokenizer level_tokenizer(const std::vector<std::string>& texts, PairLevel level, int64_t min_count) {
  return level == PairLevel::chars ? Tokenizer::chars(texts)
                                   : Tokenizer::words(texts, min_count, true, Tokenizer::WordSplit::d2l);
}

// A line as an error message shows it: at most 60 bytes, cut at a character boundary, its control
// characters written out.
std::string excerpt(const std::string& line) {
  if (line.size() <= 60) return visible(line);
  size_t cut = 57;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return visible(line.substr(0, cut)) + "...";
}

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// "UTF-16" or "UTF-32" when the text starts with their byte order mark, else "".
std::string wide_encoding(std::string_view text) {
  using namespace std::string_view_literals;
  if (text.starts_with("\xFF\xFE\0\0"sv) || text.starts_with("\0\0\xFE\xFF"sv)) return "UTF-32";
  if (text.starts_with("\xFF\xFE"sv) || text.starts_with("\xFE\xFF"sv)) return "UTF-16";
  return "";
}

// The bytes of a pairs file, without a UTF-8 byte order mark. Refuses what cannot be a pairs file
// before looking at its lines: too large, empty, or UTF-16/UTF-32 (their byte order marks).
std::string read_pairs_file(const std::string& path) {
  const RegularFile file("load_pairs", path);
  if (file.size() > kMaxTextBytes)
    fail("load_pairs", path, ": the file holds ", file.size(), " bytes; ladder reads at most ", kMaxTextBytes >> 20,
         " MiB of pairs (e.g. head -n 200000 FILE > part.txt)");
  std::string text(file.size(), '\0');
  file.read_at(0, text.data(), text.size());
  if (const std::string wide = wide_encoding(text); !wide.empty())
    fail("load_pairs", path, ": is ", wide, " (its byte order mark says so); pairs files are UTF-8: convert it, e.g. iconv -f ",
         wide, " -t UTF-8 FILE > fixed.txt");
  const auto starts = [&text](std::string_view mark) { return std::string_view(text).starts_with(mark); };
  if (starts("\xEF\xBB\xBF")) text.erase(0, 3);  // a UTF-8 byte order mark: not part of the first source
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    fail("load_pairs", path, text.empty() ? ": the file is empty" : ": the file holds only blanks (spaces, tabs, line ends), no text");
  return text;
}

// What is wrong with a line's bytes, or "" when nothing is: too long, a NUL byte, not UTF-8.
std::string bad_bytes(const std::string& line) {
  if (line.size() > kMaxPairLineBytes)
    return cat("the line holds ", line.size(), " bytes, more than the ", kMaxPairLineBytes,
               " a sentence pair could need (is the file a pairs file, with one pair a line?)");
  for (size_t i = 0; i < line.size();) {
    if (line[i] == '\0') return cat("a NUL byte at byte ", i + 1, " of the line: a binary file, or UTF-16 without its byte order mark?");
    const size_t n = utf8_char_length(line, i);
    if (n == 0)
      return cat("byte ", i + 1, " of the line (value ", static_cast<int>(static_cast<unsigned char>(line[i])),
                 ") is not UTF-8; convert the file to UTF-8, e.g. iconv -f LATIN1 -t UTF-8 FILE > fixed.txt");
    i += n;
  }
  return "";
}

// The pairs of a file in file order: source<TAB>target[<TAB>ignored], one a line; blank lines
// skipped. Every other bad line stops the reading, naming the file and the line; so does a side
// that `splitter` cuts into no tokens (only no-break spaces, say).
std::vector<TextPair> read_pairs(const std::string& path, const Tokenizer& splitter) {
  std::istringstream in(read_pairs_file(path));
  std::vector<TextPair> pairs;
  int64_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.ends_with('\r')) line.pop_back();  // a Windows line end: quoted with it, a message would be overwritten
    if (const std::string bad = bad_bytes(line); !bad.empty()) fail("load_pairs", path, ":", number, ": ", bad);
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
    for (const auto& [side, text] : {std::pair{"source", &pair.source}, std::pair{"target", &pair.target}})
      if (splitter.split(*text).empty())
        fail("load_pairs", path, ":", number, ": the ", side, " of \"", excerpt(line),
             "\" is no tokens once split (only spaces, such as no-break spaces); each side needs a word");
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

  const std::vector<TextPair> pairs = keep_short(read_pairs(options.data, splitter), options.data);
  PairSplits out = split_by_source(pairs, val_fraction, options.test_fraction, options.seed, options.data);
  if (!hold_out_val) out.val = keep_short(read_pairs(options.val, splitter), options.val);
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

PairTokenizers pair_tokenizers(const std::vector<TextPair>& train, PairLevel source_level, PairLevel target_level,
                               int64_t min_count) {
  std::vector<std::string> sources, targets;
  for (const TextPair& pair : train) {
    sources.push_back(pair.source);
    targets.push_back(pair.target);
  }
  return {level_tokenizer(sources, source_level, min_count), level_tokenizer(targets, target_level, min_count)};
}

PairPart generated_part(const std::string& source, uint64_t seed) {
  constexpr float kValShare = 0.1f, kTestShare = 0.1f;
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a
  for (const char c : source) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  const float u = Generator(hash ^ seed).uniform();  // the generator's seeding mixes the bits
  return u < kTestShare ? PairPart::test : u < kTestShare + kValShare ? PairPart::val : PairPart::train;
}

std::array<PartToFill, 3> parts_to_fill(PairSplits& out, int64_t train, int64_t val, int64_t test) {
  return {{{PairPart::train, "training", train, out.train},
           {PairPart::val, "validation", val, out.val},
           {PairPart::test, "test", test, out.test}}};
}

std::vector<IdPair> encode_pairs(const std::vector<TextPair>& pairs, const PairTokenizers& tokenizers) {
  std::vector<IdPair> ids;
  ids.reserve(pairs.size());
  for (const TextPair& pair : pairs) ids.emplace_back(tokenizers.source.encode(pair.source), tokenizers.target.encode(pair.target));
  return ids;
}

}  // namespace ladder::data
