// Sequence pairs: d2l's word rule, reading and splitting pairs files, padded seq2seq batches, and the
// tokenizers kept in a checkpoint.
#include "helpers.h"
#include "pair_sets.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "data/pairs.h"
#include "io/checkpoint.h"
#include "nn/linear.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_error;
using ladder::testing::shared;
using ladder::testing::sources_of;
using ladder::testing::check_tensor;
namespace fs = std::filesystem;
using Words = std::vector<std::string>;

namespace {

std::string temp_file(const std::string& name, const std::string& content) {
  const fs::path path = fs::temp_directory_path() / ("ladder_pairs_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

// Tatoeba's layout: English, French, attribution; "Go." has three translations. CRLF line ends and a
// blank line are allowed.
const std::string kTatoeba =
    "Go.\tVa !\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #1158250 (Wittydev)\r\n"
    "Go.\tMarche.\tCC-BY 2.0 (France)\r\n"
    "Go.\tBouge !\tCC-BY 2.0 (France)\r\n"
    "Hi.\tSalut !\tCC-BY 2.0 (France)\r\n"
    "Run!\tCours\u202F!\tCC-BY 2.0 (France)\r\n"
    "\r\n"
    "I'm home.\tJe suis à la maison.\tCC-BY 2.0 (France)\r\n"
    "Who won?\tQui a gagné\u00A0?\tCC-BY 2.0 (France)\r\n"
    "It's me.\tC'est moi.\tCC-BY 2.0 (France)\r\n"
    "I agree.\tJe suis d'accord.\tCC-BY 2.0 (France)\r\n"
    "Be calm.\tSois calme !\tCC-BY 2.0 (France)\r\n"
    "Be nice.\tSois gentil !\tCC-BY 2.0 (France)\r\n"
    "Call me.\tAppelle-moi !\tCC-BY 2.0 (France)\r\n"
    "Come in.\tEntrez !\tCC-BY 2.0 (France)\r\n"
    "Get out!\tSors !\tCC-BY 2.0 (France)\r\n"
    "Go away.\tPars !\tCC-BY 2.0 (France)\r\n"
    "He's sad.\tIl est triste.\tCC-BY 2.0 (France)\r\n"
    "I am old.\tJe suis vieux.\tCC-BY 2.0 (France)\r\n"
    "Let me in, please.\tLaisse-moi entrer, s'il te plaît.\tCC-BY 2.0 (France)\r\n";
constexpr size_t kTatoebaPairs = 18;  // 16 distinct sources

}  // namespace

TEST_CASE("d2l's word rule: lower case, a space before , . ! ?, no-break spaces as spaces") {
  const Tokenizer d2l = Tokenizer::words({}, 1, true, Tokenizer::WordSplit::d2l);
  CHECK(d2l.split("Go.") == Words{"go", "."});
  CHECK(d2l.split("Va !") == Words{"va", "!"});
  CHECK(d2l.split("Cours\u202F!") == Words{"cours", "!"});              // narrow no-break space
  CHECK(d2l.split("Qui a gagné\u00A0?") == Words{"qui", "a", "gagné", "?"});  // no-break space
  CHECK(d2l.split("I'm home.") == Words{"i'm", "home", "."});            // the apostrophe stays inside
  CHECK(d2l.split("ÇA VA, MERCI? ÉTÉ") == Words{"ça", "va", ",", "merci", "?", "été"});
  CHECK(d2l.split("a,b") == Words{"a", ",b"});  // d2l puts the space before the mark only
  // The tokenizers of other lessons keep splitting off every punctuation mark.
  CHECK(Tokenizer::words({}).split("I'm home.") == Words{"i", "'", "m", "home", "."});

  const Tokenizer vocab = Tokenizer::words({"Va !", "Je suis à la maison."}, 1, true, Tokenizer::WordSplit::d2l);
  const Tokenizer back = Tokenizer::from_json(vocab.to_json());
  CHECK(back.split("C'est moi.") == Words{"c'est", "moi", "."});
  CHECK(back.encode("JE SUIS À LA MAISON !") == vocab.encode("je suis à la maison !"));
  CHECK(back.decode(back.encode("Va !")) == "va !");
  // A tokenizer saved before the word rule had a name reads as the punctuation rule.
  const Tokenizer old = Tokenizer::from_json(R"({"level":"word","lowercase":true,"tokens":["<pad>","<bos>","<eos>","<unk>","m"]})");
  CHECK(old.split("I'm") == Words{"i", "'", "m"});
  check_error([] { Tokenizer::from_json(R"({"level":"word","lowercase":true,"split":"bpe","tokens":["<pad>","<bos>","<eos>","<unk>"]})"); },
              {"Tokenizer::from_json", "unknown word split \"bpe\"", "\"d2l\""});
}

TEST_CASE("pairs files: read in file order, split by distinct source, seeded") {
  const std::string path = temp_file("fra.txt", kTatoeba);
  const PairSplits a = load_pairs({.data = path, .val_fraction = 0.2f, .test_fraction = 0.2f, .seed = 5});
  CHECK(a.train.size() + a.val.size() + a.test.size() == kTatoebaPairs);
  CHECK(a.dropped == 0);
  // 16 distinct sources: round(0.2 * 16) = 3 held out for test and 3 for validation.
  CHECK(sources_of(a.test).size() == 3);
  CHECK(sources_of(a.val).size() == 3);
  CHECK(shared(sources_of(a.train), sources_of(a.test)) == 0);
  CHECK(shared(sources_of(a.train), sources_of(a.val)) == 0);
  CHECK(shared(sources_of(a.val), sources_of(a.test)) == 0);
  // The three translations of "Go." stay together, in file order, third column left out.
  const std::vector<TextPair>* with_go = nullptr;
  for (const auto* part : {&a.train, &a.val, &a.test})
    if (sources_of(*part).count("Go.")) with_go = part;
  REQUIRE(with_go != nullptr);
  std::vector<std::string> go;
  for (const TextPair& pair : *with_go)
    if (pair.source == "Go.") go.push_back(pair.target);
  CHECK(go == Words{"Va !", "Marche.", "Bouge !"});
  CHECK(a.description == path + " (words, seed 5)");

  const PairSplits again = load_pairs({.data = path, .val_fraction = 0.2f, .test_fraction = 0.2f, .seed = 5});
  CHECK(again.test == a.test);
  CHECK(again.train == a.train);
  bool differs = false;
  for (uint64_t seed = 6; seed < 10; ++seed)
    differs |= load_pairs({.data = path, .val_fraction = 0.2f, .test_fraction = 0.2f, .seed = seed}).test != a.test;
  CHECK(differs);
  fs::remove(path);
}

TEST_CASE("pairs files: a validation file, --max-len, and character level") {
  const std::string path = temp_file("fra.txt", kTatoeba);
  const std::string val = temp_file("val.txt", "Hello!\tBonjour !\nThank you very much.\tMerci beaucoup.\n");
  const PairSplits with_val = load_pairs({.data = path, .val = val, .test_fraction = 0.2f});
  CHECK(with_val.val == std::vector<TextPair>{{"Hello!", "Bonjour !"}, {"Thank you very much.", "Merci beaucoup."}});
  CHECK(with_val.train.size() + with_val.test.size() == kTatoebaPairs);
  CHECK(with_val.description == path + " (words, seed 0, validation from " + val + ")");

  // Word level, at most 3 tokens a side: dropped are "I'm home." (je suis à la maison . : 6),
  // "Who won?" (qui a gagné ? : 4), "I agree." (je suis d'accord . : 4), "He's sad." (il est triste . : 4),
  // "I am old." (i am old . : 4), "Let me in, please." (6 and 7) and, from the validation file,
  // "Thank you very much." (5).
  const PairSplits short_words = load_pairs({.data = path, .val = val, .max_len = 3, .test_fraction = 0.2f});
  CHECK(short_words.dropped == 7);
  CHECK(short_words.train.size() + short_words.test.size() == kTatoebaPairs - 6);
  CHECK(short_words.val == std::vector<TextPair>{{"Hello!", "Bonjour !"}});
  // Character level counts characters (code points): at most 7 keeps the three "Go." pairs, "Hi." and
  // "Run!" -> "Cours\u202F!" (7 characters, 9 bytes); the 13 others have a side of 8 or more.
  const PairSplits chars = load_pairs({.data = path, .level = PairLevel::chars, .max_len = 7, .val_fraction = 0.3f,
                                       .test_fraction = 0.3f});
  CHECK(chars.dropped == 13);
  std::vector<TextPair> all = chars.train;
  all.insert(all.end(), chars.val.begin(), chars.val.end());
  all.insert(all.end(), chars.test.begin(), chars.test.end());
  CHECK(all.size() == 5);
  CHECK(std::count(all.begin(), all.end(), TextPair{"Run!", "Cours\u202F!"}) == 1);
  CHECK(sources_of(all) == std::set<std::string>{"Go.", "Hi.", "Run!"});
  fs::remove(path);
  fs::remove(val);
}

TEST_CASE("pairs files: every bad line is refused, naming the file and the line") {
  const std::string no_tab = temp_file("no_tab.txt", "Go.\tVa !\nHi. Salut !\n");
  check_error([&] { load_pairs({.data = no_tab}); },
              {"load_pairs", no_tab + ":2: no tab in \"Hi. Salut !\"", "source<TAB>target"});
  const std::string empty_side = temp_file("empty_side.txt", "Go.\tVa !\n\nHi.\tSalut !\n  \tVa !\n");
  check_error([&] { load_pairs({.data = empty_side}); }, {empty_side + ":4: the source is empty"});
  const std::string no_target = temp_file("no_target.txt", "Go.\t \tCC-BY\n");
  check_error([&] { load_pairs({.data = no_target}); }, {no_target + ":1: the target is empty"});
  const std::string long_line = temp_file("long_line.txt", std::string(100, 'x') + "\n");
  check_error([&] { load_pairs({.data = long_line}); }, {":1: no tab in \"" + std::string(57, 'x') + "...\""});
  // A line of 10,001 bytes, tab included, is not a sentence pair; one of 10,000 is read.
  const std::string huge = temp_file("huge.txt", "Go.\tVa !\n" + std::string(5000, 'a') + "\t" + std::string(5000, 'b') + "\n");
  check_error([&] { load_pairs({.data = huge}); }, {huge + ":2:", "10001 bytes", "more than the 10000"});
  const std::string just_fits = temp_file("just_fits.txt", "Go.\tVa !\nHi.\tSalut !\nRun!\tCours !\n" + std::string(4999, 'a') +
                                                            "\t" + std::string(5000, 'b') + "\n");
  CHECK(load_pairs({.data = just_fits, .val_fraction = 0.25f, .test_fraction = 0.25f}).dropped == 0);
  // Encodings: a Latin-1 byte names its line and byte; UTF-16 is named by its byte order mark (or,
  // without one, by its NUL bytes); a UTF-8 byte order mark is not part of the first source.
  const std::string latin1 = temp_file("latin1.txt", "Go.\tVa !\nHi.\t\xC7" "a va\n");
  check_error([&] { load_pairs({.data = latin1}); }, {"load_pairs", latin1 + ":2:", "byte 5", "not UTF-8", "iconv"});
  const std::string utf16 = temp_file("utf16.txt", std::string("\xFF\xFEG\0o\0\t\0V\0a\0\n\0", 14));
  check_error([&] { load_pairs({.data = utf16}); }, {"load_pairs", utf16, "is UTF-16", "iconv -f UTF-16"});
  const std::string utf32 = temp_file("utf32.txt", std::string("\xFF\xFE\0\0G\0\0\0", 8));
  check_error([&] { load_pairs({.data = utf32}); }, {"load_pairs", utf32, "is UTF-32"});
  const std::string binary = temp_file("binary.txt", std::string("Go.\tVa !\n\0\x01", 11));
  check_error([&] { load_pairs({.data = binary}); }, {"load_pairs", binary + ":2:", "NUL byte", "binary"});
  const std::string bom = temp_file("bom.txt", "\xEF\xBB\xBFGo.\tVa !\nHi.\tSalut !\nRun!\tCours !\nWow!\tÇa alors !\n");
  const PairSplits with_bom = load_pairs({.data = bom, .val_fraction = 0.25f, .test_fraction = 0.25f});
  std::set<std::string> sources = sources_of(with_bom.train);
  for (const auto* part : {&with_bom.val, &with_bom.test})
    for (const TextPair& pair : *part) sources.insert(pair.source);
  CHECK(sources == std::set<std::string>{"Go.", "Hi.", "Run!", "Wow!"});

  // A side of no-break spaces alone is no tokens once split; a Windows line end is not quoted.
  const std::string no_words = temp_file("no_words.txt", "Go.\tVa !\n\xC2\xA0\xE2\x80\xAF\tSalut !\n");
  check_error([&] { load_pairs({.data = no_words}); }, {no_words + ":2: the source", "no tokens"});
  const std::string crlf = temp_file("crlf.txt", "Go.\tVa !\r\nHi. Salut !\r\n");
  check_error([&] { load_pairs({.data = crlf}); }, {crlf + ":2: no tab in \"Hi. Salut !\";"});

  const std::string empty = temp_file("empty.txt", "");
  check_error([&] { load_pairs({.data = empty}); }, {"load_pairs", empty, "the file is empty"});
  const std::string tabs = temp_file("tabs.txt", "\t\t\n \n");  // a file of tabs is not empty: it has no text
  check_error([&] { load_pairs({.data = tabs}); }, {"load_pairs", tabs, "only blanks (spaces, tabs, line ends)"});
  check_error([] { load_pairs({.data = "/nonexistent/fra.txt"}); }, {"load_pairs", "/nonexistent/fra.txt", "cannot open"});
  check_error([] { load_pairs({.data = "/tmp"}); }, {"load_pairs", "/tmp", "not a regular file"});
  check_error([] { load_pairs({}); }, {"load_pairs", "no pairs file given (--data)"});
  for (const std::string& file : {no_tab, empty_side, no_target, long_line, huge, just_fits, latin1, utf16, utf32, binary, bom, no_words, crlf, empty})
    fs::remove(file);
}

TEST_CASE("pairs files: sizes that cannot be split or batched are refused") {
  const std::string path = temp_file("fra.txt", kTatoeba);
  check_error([&] { load_pairs({.data = path, .batch = 64}); },
              {"load_pairs", path, "training pairs (of 18 kept, 0 dropped by --max-len) are fewer than one batch of 64",
               "smaller --batch"});
  const std::string two = temp_file("two.txt", "Go.\tVa !\nGo.\tMarche.\nHi.\tSalut !\n");
  check_error([&] { load_pairs({.data = two}); },
              {"load_pairs", two, "2 distinct source(s) are too few to hold out 1 for test and 1 for validation"});
  check_error([&] { load_pairs({.data = path, .max_len = 1}); },
              {"load_pairs", path, "all 18 pairs are longer than --max-len 1 tokens"});
  check_error([&] { load_pairs({.data = path, .max_len = -1}); }, {"load_pairs", "--max-len", "got -1"});
  check_error([&] { load_pairs({.data = path, .batch = 0}); }, {"load_pairs", "--batch must be at least 1, got 0"});
  check_error([&] { load_pairs({.data = path, .val_fraction = 0.5f, .test_fraction = 0.5f}); },
              {"load_pairs", "add up to less than 1", "test 0.5 and validation 0.5"});
  check_error([&] { load_pairs({.data = path, .test_fraction = 0}); }, {"load_pairs", "above 0"});
  for (const std::string& file : {path, two}) fs::remove(file);
}

TEST_CASE("seq2seq batches: <bos> + target in, target + <eos> out, <pad> that the loss ignores") {
  const std::vector<TextPair> train = {{"Go.", "Va !"}, {"I'm home.", "Je suis à la maison."}};
  const PairTokenizers tokenizers = pair_tokenizers(train, PairLevel::word, PairLevel::word);
  const Tokenizer& src = tokenizers.source;
  const Tokenizer& tgt = tokenizers.target;
  CHECK(src.vocab_size() == 4 + 4);  // go . i'm home
  CHECK(tgt.vocab_size() == 4 + 8);  // va ! je suis à la maison .
  const std::vector<IdPair> ids = encode_pairs(train, tokenizers);
  REQUIRE(ids.size() == 2);
  CHECK(ids[0].first == std::vector<int>{src.id("go"), src.id(".")});
  CHECK(ids[1].second.size() == 6);

  // B = 2, S = 3 (the longest source), T = 7 (the longest target + 1).
  const Seq2SeqBatch b = pad_pairs(ids);
  const auto s = [&](const char* w) { return static_cast<float>(src.id(w)); };
  const auto t = [&](const char* w) { return static_cast<float>(tgt.id(w)); };
  const float bos = Tokenizer::kBos, eos = Tokenizer::kEos, pad = Tokenizer::kPad;
  check_tensor(b.src, {2, 3}, {s("go"), s("."), pad, s("i'm"), s("home"), s(".")});
  check_tensor(b.src_mask, {2, 3}, {1, 1, 0, 1, 1, 1});
  check_tensor(b.src_len, {2}, {2, 3});
  check_tensor(b.tgt_in, {2, 7}, {bos, t("va"), t("!"), pad, pad, pad, pad,  //
                                  bos, t("je"), t("suis"), t("à"), t("la"), t("maison"), t(".")});
  check_tensor(b.tgt_out, {2, 7}, {t("va"), t("!"), eos, pad, pad, pad, pad,  //
                                   t("je"), t("suis"), t("à"), t("la"), t("maison"), t("."), eos});
  check_tensor(b.tgt_mask, {2, 7}, {1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1});

  // cross_entropy with ignore_index = <pad>: the logits at padded positions do not count.
  Generator gen(1);
  const Tensor logits = randn({2, 7, tgt.vocab_size()}, gen);
  const Tensor changed = where(unsqueeze(b.tgt_mask, -1), logits, full_like(logits, 5.0f));
  const CrossEntropyOptions skip_pad{.ignore_index = Tokenizer::kPad};
  CHECK(cross_entropy(changed, b.tgt_out, skip_pad).item() == doctest::Approx(cross_entropy(logits, b.tgt_out, skip_pad).item()));
  CHECK(cross_entropy(changed, b.tgt_out).item() != doctest::Approx(cross_entropy(logits, b.tgt_out).item()));

  // Random batches draw whole pairs; the same seed draws the same ones.
  Generator g1(7), g2(7);
  const Seq2SeqBatch r1 = sample_pairs(ids, 16, g1), r2 = sample_pairs(ids, 16, g2);
  CHECK(r1.src.shape() == Shape{16, 3});
  for (int64_t r = 0; r < 16; ++r) {
    const bool first = r1.src_len.at({r}) == 2;
    CHECK(r1.tgt_out.at({r, first ? 2 : 6}) == eos);
    CHECK(r1.src.at({r, 0}) == (first ? s("go") : s("i'm")));
  }
  check_tensor(r2.tgt_in, r1.tgt_in.shape(), std::vector<float>(r1.tgt_in.data(), r1.tgt_in.data() + r1.tgt_in.numel()));
  check_error([&] { sample_pairs({}, 4, g1); }, {"sample_pairs", "no pairs"});
  check_error([&] { sample_pairs(ids, 0, g1); }, {"sample_pairs", "batch must be at least 1, got 0"});
}

TEST_CASE("pair vocabularies: words seen fewer than min_count times read as <unk>; each side at its own level") {
  const std::vector<TextPair> train = {{"I see the cat.", "Je vois le chat."},
                                       {"I see the dog.", "Je vois le chien."},
                                       {"You see the cat!", "Tu vois le chat !"}};
  const PairTokenizers twice = pair_tokenizers(train, PairLevel::word, PairLevel::word, 2);
  CHECK(twice.source.vocab_size() == 4 + 5);  // i see the cat . ; not dog, you, !
  CHECK(twice.target.vocab_size() == 4 + 5);  // je vois le chat . ; not chien, tu, !
  const Tokenizer& src = twice.source;
  CHECK(src.encode("I see the dog!") ==
        std::vector<int>{src.id("i"), src.id("see"), src.id("the"), Tokenizer::kUnk, Tokenizer::kUnk});
  CHECK(src.decode(src.encode("You see the dog.")) == "<unk> see the <unk> .");
  CHECK(pair_tokenizers(train, PairLevel::word, PairLevel::word).source.vocab_size() == 4 + 8);  // every word once
  check_error([&] { pair_tokenizers(train, PairLevel::word, PairLevel::word, 0); }, {"min_count must be at least 1, got 0"});

  // The number task reads words and writes digits; min_count leaves characters alone.
  const PairTokenizers numbers =
      pair_tokenizers({{"three hundred twelve", "312"}, {"forty", "40"}}, PairLevel::word, PairLevel::chars, 2);
  CHECK_FALSE(numbers.source.is_char_level());
  CHECK(numbers.source.vocab_size() == 4);  // no word is seen twice
  CHECK(numbers.target.is_char_level());
  CHECK(numbers.target.vocab_size() == 4 + 5);  // 0 1 2 3 4
  CHECK(numbers.target.encode("3120").size() == 4);
}

TEST_CASE("bucketing: a random batch split by source length, none padded, every pair drawn equally often") {
  // 30 pairs: 1 of source length 1, 4 of length 2, 10 of length 3, 15 of length 5; targets of any length.
  std::vector<IdPair> pairs;
  for (const auto& [length, count] : std::vector<std::pair<int, int>>{{3, 10}, {1, 1}, {5, 15}, {2, 4}})
    for (int i = 0; i < count; ++i)
      pairs.emplace_back(std::vector<int>(static_cast<size_t>(length), 4 + static_cast<int>(pairs.size())),
                         std::vector<int>(static_cast<size_t>(1 + i % 3), 5));
  const SourceLengthBuckets buckets(pairs);
  Generator gen(11), again(11);
  std::map<int, int64_t> drawn;  // the first source id of a row names its pair
  std::set<int64_t> widths;
  int64_t mixed = 0;  // batches of more than one source length
  const int64_t batches = 3000, batch = 8;
  for (int64_t b = 0; b < batches; ++b) {
    const std::vector<Seq2SeqBatch> groups = buckets.sample(batch, gen);
    int64_t rows = 0, previous_width = 0;
    for (const Seq2SeqBatch& one : groups) {
      CHECK(one.src.size(1) > previous_width);  // one group per length, shortest first
      previous_width = one.src.size(1);
      widths.insert(one.src.size(1));
      CHECK(sum(one.src_mask).item() == static_cast<float>(one.src.numel()));  // no source padding
      for (int64_t r = 0; r < one.src.size(0); ++r) ++drawn[static_cast<int>(one.src.at({r, 0}))];
      rows += one.src.size(0);
    }
    CHECK(rows == batch);
    mixed += groups.size() > 1;
    if (b == 0) {
      const std::vector<Seq2SeqBatch> same = buckets.sample(batch, again);  // the same seed, the same draws
      REQUIRE(same.size() == groups.size());
      for (size_t g = 0; g < groups.size(); ++g)
        check_tensor(same[g].tgt_out, groups[g].tgt_out.shape(),
                     std::vector<float>(groups[g].tgt_out.data(), groups[g].tgt_out.data() + groups[g].tgt_out.numel()));
    }
  }
  CHECK(widths == std::set<int64_t>{1, 2, 3, 5});
  CHECK(mixed > batches * 9 / 10);  // 8 draws of one length: (1/2)^8 + (1/3)^8 + ... of the batches
  REQUIRE(drawn.size() == pairs.size());
  const double expected = static_cast<double>(batches * batch) / static_cast<double>(pairs.size());  // 800
  for (const auto& [id, count] : drawn) CHECK_MESSAGE(std::abs(static_cast<double>(count) - expected) < 0.4 * expected, id, ": ", count);

  // For scoring: each pair once, in batches of one source length, shortest first.
  const std::vector<std::vector<size_t>> groups = batches_by_source_length(pairs, 4);
  std::vector<size_t> seen, lengths;
  for (const std::vector<size_t>& group : groups) {
    CHECK(group.size() <= 4);
    for (const size_t i : group) CHECK(pairs[i].first.size() == pairs[group.front()].first.size());
    seen.insert(seen.end(), group.begin(), group.end());
    lengths.push_back(pairs[group.front()].first.size());
  }
  CHECK(lengths == std::vector<size_t>{1, 2, 3, 3, 3, 5, 5, 5, 5});  // 1, 4, 10 and 15 pairs in fours
  std::sort(seen.begin(), seen.end());
  for (size_t i = 0; i < pairs.size(); ++i) CHECK(seen[i] == i);

  check_error([] { SourceLengthBuckets({}); }, {"SourceLengthBuckets", "no pairs"});
  check_error([] { SourceLengthBuckets({{{4}, {5}}, {{}, {5}}}); }, {"SourceLengthBuckets", "pair 1 has an empty source"});
  check_error([&] { buckets.sample(0, gen); }, {"SourceLengthBuckets", "batch must be at least 1, got 0"});
  check_error([&] { batches_by_source_length(pairs, 0); }, {"batches_by_source_length", "at least 1"});
}

TEST_CASE("the source and target tokenizers travel in a checkpoint's metadata") {
  const std::vector<TextPair> train = {{"Tuesday, March 3, 1998", "1998-03-03"}, {"3 mar 98", "1998-03-03"}};
  const PairTokenizers tokenizers = pair_tokenizers(train, PairLevel::chars, PairLevel::chars);
  CHECK(tokenizers.target.vocab_size() == 4 + 6);  // - 0 1 3 8 9
  nn::Linear model(2, 3);
  const std::string path = temp_file("model.safetensors", "");
  std::map<std::string, std::string> metadata = tokenizers.metadata();
  metadata["lesson"] = "07_seq2seq";
  io::save_module(path, model, metadata);
  const std::map<std::string, std::string> saved = io::load_module(path, model);
  const PairTokenizers back{Tokenizer::from_json(saved.at("source_tokenizer")), Tokenizer::from_json(saved.at("target_tokenizer"))};
  CHECK(back.source.is_char_level());
  CHECK(back.source.to_json() == tokenizers.source.to_json());
  CHECK(back.target.to_json() == tokenizers.target.to_json());
  CHECK(back.source.encode("Tue, 3 Mar") == tokenizers.source.encode("Tue, 3 Mar"));
  CHECK(back.target.decode(back.target.encode("1998-03-03")) == "1998-03-03");
  fs::remove(path);
}
