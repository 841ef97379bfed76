// The generated phrasebook: seeded, distinct English sources, French that agrees and elides, the
// sources with two translations on neighbouring lines, and a file that load_pairs reads back whole.
#include "helpers.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "data/phrasebook.h"

using namespace ladder;
using namespace ladder::data;
using ladder::testing::check_error;
namespace fs = std::filesystem;

TEST_CASE("phrasebook: seeded, distinct sources, agreement and elision, two translations side by side") {
  const std::vector<TextPair> pairs = phrasebook_pairs({.sources = 2000, .seed = 3});
  CHECK(pairs == phrasebook_pairs({.sources = 2000, .seed = 3}));
  CHECK(pairs != phrasebook_pairs({.sources = 2000, .seed = 4}));
  std::map<std::string, std::vector<std::string>> translations;
  std::string previous;
  for (const TextPair& pair : pairs) {
    // A source's translations are consecutive: a source seen before is the line just above.
    if (translations.count(pair.source)) CHECK_MESSAGE(previous == pair.source, pair.source);
    translations[pair.source].push_back(pair.target);
    previous = pair.source;
    CHECK(pair.target.find("je a") == std::string::npos);  // elided: j'aime
    CHECK(pair.target.find("ne est") == std::string::npos);  // elided: n'est
    CHECK(pair.target.find(" le arbre") == std::string::npos);  // elided: l'arbre
  }
  CHECK(translations.size() == 2000);
  size_t twice = 0;
  for (const auto& [source, targets] : translations) {
    CHECK(targets.size() <= 2);
    twice += targets.size() == 2;
  }
  CHECK(twice > 100);  // "you" is "tu" or "vous"
  REQUIRE(translations.count("You are ready.") + translations.count("You are tired.") > 0);
  const std::string you = translations.count("You are ready.") ? "You are ready." : "You are tired.";
  CHECK(translations[you].size() == 2);
  // Questions end with Tatoeba's narrow no-break space before "?", statements with ".".
  for (const auto& [source, targets] : translations) {
    if (source.back() == '?') CHECK(targets.front().ends_with("\u202F?"));
    if (source.back() == '.') CHECK(targets.front().ends_with("."));
  }
  check_error([] { phrasebook_pairs({.sources = 0}); }, {"phrasebook_pairs", "sources", "got 0"});
  check_error([] { phrasebook_pairs({.sources = 100001}); }, {"phrasebook_pairs", "100000"});
}

TEST_CASE("phrasebook: written as a pairs file with an attribution column, read back whole") {
  const std::string path = (fs::temp_directory_path() / ("ladder_phrasebook_" + std::to_string(getpid()) + ".tsv")).string();
  const std::vector<TextPair> pairs = phrasebook_pairs({.sources = 500, .seed = 1});
  write_pairs_file(path, pairs, "generated");
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  CHECK(first == pairs.front().source + "\t" + pairs.front().target + "\tgenerated #1");
  const PairSplits splits = load_pairs({.data = path, .seed = 1});
  CHECK(splits.train.size() + splits.val.size() + splits.test.size() == pairs.size());
  std::set<std::pair<std::string, std::string>> written, read;
  for (const TextPair& pair : pairs) written.insert({pair.source, pair.target});
  for (const auto* part : {&splits.train, &splits.val, &splits.test})
    for (const TextPair& pair : *part) read.insert({pair.source, pair.target});
  CHECK(read == written);
  check_error([&] { write_pairs_file(path, {{"a\tb", "c"}}, "x"); }, {"write_pairs_file", "pair 0", "tab or a line break"});
  check_error([] { write_pairs_file("/nonexistent/dir/p.tsv", {{"a", "b"}}, "x"); }, {"write_pairs_file", "cannot be written"});
  fs::remove(path);
}
