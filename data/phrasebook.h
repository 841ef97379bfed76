// A generated English-French phrasebook: short sentences from a small grammar, in the format of
// Tatoeba's pairs files (source<TAB>target<TAB>attribution), for trying a pairs file without a
// download. It has what makes real pairs harder than the generated tasks: words of several forms
// ("see", "sees"; "vois", "voit", "voient"), French agreement and elision ("la maison noire",
// "l'arbre", "je n'aime pas"), adjectives on either side of the noun, and sources with two correct
// translations, each on its own line, as Tatoeba lists them ("you" is "tu" or "vous"; "I am tired"
// is "je suis fatigué" or "je suis fatiguée").
//   Tom doesn't see the black cats.     Tom ne voit pas les chats noirs.
//   Do you want the small car?          Est-ce que tu veux la petite voiture ?
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/pairs.h"

namespace ladder::data {

struct PhrasebookOptions {
  int64_t sources = 3000;  // distinct English sentences; each brings one or two lines
  uint64_t seed = 0;
};

// The sentences, each with all its French translations, one pair per translation, a source's pairs
// next to each other. Throws ladder::Error for fewer than 1 source, or more than the grammar makes
// at random without repeating itself (100,000).
std::vector<TextPair> phrasebook_pairs(const PhrasebookOptions& options);

// Writes pairs as a pairs file, source<TAB>target<TAB>attribution a line (the attribution column,
// as Tatoeba's, is what load_pairs ignores). Throws ladder::Error when the file cannot be written or
// a pair holds a tab or a line break.
void write_pairs_file(const std::string& path, const std::vector<TextPair>& pairs, const std::string& attribution);

}  // namespace ladder::data
