#include "data/phrasebook.h"

#include <cctype>
#include <fstream>
#include <string_view>
#include <unordered_set>

#include "core/error.h"
#include "core/random.h"
#include "data/visible_text.h"

namespace ladder::data {

namespace {

// What a noun can be the object of (a bit each).
enum Kind : unsigned { food = 1, drink = 2, readable = 4, animal = 8, thing = 16, openable = 32, washable = 64, watchable = 128 };
constexpr unsigned kAnything = 0xFF;
constexpr unsigned kDescribed = readable | animal | thing;  // nouns that take a colour or a size

struct Noun {
  const char *en, *en_plural, *fr, *fr_plural;  // no plural: a mass noun (bread, water)
  bool feminine;
  unsigned kinds;
};

const Noun kNouns[] = {
    {"apple", "apples", "pomme", "pommes", true, food},           {"bread", nullptr, "pain", nullptr, false, food},
    {"cake", "cakes", "gâteau", "gâteaux", false, food},          {"egg", "eggs", "œuf", "œufs", false, food},
    {"orange", "oranges", "orange", "oranges", true, food},       {"cheese", nullptr, "fromage", nullptr, false, food},
    {"soup", nullptr, "soupe", nullptr, true, food},              {"water", nullptr, "eau", nullptr, true, drink},
    {"coffee", nullptr, "café", nullptr, false, drink},           {"tea", nullptr, "thé", nullptr, false, drink},
    {"milk", nullptr, "lait", nullptr, false, drink},             {"wine", nullptr, "vin", nullptr, false, drink},
    {"book", "books", "livre", "livres", false, readable | openable},
    {"letter", "letters", "lettre", "lettres", true, readable | openable},
    {"newspaper", "newspapers", "journal", "journaux", false, readable},
    {"map", "maps", "carte", "cartes", true, readable},           {"cat", "cats", "chat", "chats", false, animal},
    {"dog", "dogs", "chien", "chiens", false, animal},            {"bird", "birds", "oiseau", "oiseaux", false, animal},
    {"horse", "horses", "cheval", "chevaux", false, animal},      {"cow", "cows", "vache", "vaches", true, animal},
    {"house", "houses", "maison", "maisons", true, thing},
    {"car", "cars", "voiture", "voitures", true, thing | washable},
    {"door", "doors", "porte", "portes", true, thing | openable | washable},
    {"window", "windows", "fenêtre", "fenêtres", true, thing | openable | washable},
    {"key", "keys", "clé", "clés", true, thing},                  {"table", "tables", "table", "tables", true, thing | washable},
    {"chair", "chairs", "chaise", "chaises", true, thing | washable},
    {"box", "boxes", "boîte", "boîtes", true, thing | openable},   {"bike", "bikes", "vélo", "vélos", false, thing | washable},
    {"picture", "pictures", "photo", "photos", true, thing | watchable},
    {"hat", "hats", "chapeau", "chapeaux", false, thing},         {"shoe", "shoes", "chaussure", "chaussures", true, thing | washable},
    {"umbrella", "umbrellas", "parapluie", "parapluies", false, thing | openable},
    {"bag", "bags", "sac", "sacs", false, thing | openable},      {"tree", "trees", "arbre", "arbres", false, thing},
    {"film", "films", "film", "films", false, watchable},
};

struct Verb {
  const char *en, *en_third;  // "see", "sees"
  const char* fr[6];          // je, tu, il, nous, vous, ils
  unsigned objects;           // the kinds of noun it takes
};

const Verb kVerbs[] = {
    {"see", "sees", {"vois", "vois", "voit", "voyons", "voyez", "voient"}, kAnything},
    {"like", "likes", {"aime", "aimes", "aime", "aimons", "aimez", "aiment"}, kAnything},
    {"want", "wants", {"veux", "veux", "veut", "voulons", "voulez", "veulent"}, kAnything},
    {"have", "has", {"ai", "as", "a", "avons", "avez", "ont"}, food | readable | animal | thing},
    {"eat", "eats", {"mange", "manges", "mange", "mangeons", "mangez", "mangent"}, food},
    {"drink", "drinks", {"bois", "bois", "boit", "buvons", "buvez", "boivent"}, drink},
    {"read", "reads", {"lis", "lis", "lit", "lisons", "lisez", "lisent"}, readable},
    {"buy", "buys", {"achète", "achètes", "achète", "achetons", "achetez", "achètent"}, food | drink | readable | thing},
    {"find", "finds", {"trouve", "trouves", "trouve", "trouvons", "trouvez", "trouvent"}, readable | animal | thing},
    {"open", "opens", {"ouvre", "ouvres", "ouvre", "ouvrons", "ouvrez", "ouvrent"}, openable},
    {"watch", "watches", {"regarde", "regardes", "regarde", "regardons", "regardez", "regardent"}, animal | watchable},
    {"wash", "washes", {"lave", "laves", "lave", "lavons", "lavez", "lavent"}, washable},
    {"take", "takes", {"prends", "prends", "prend", "prenons", "prenez", "prennent"}, food | readable | thing},
    {"love", "loves", {"adore", "adores", "adore", "adorons", "adorez", "adorent"}, kAnything},
};
const char* const kEtre[6] = {"suis", "es", "est", "sommes", "êtes", "sont"};

struct Adjective {
  const char* en;
  const char* fr[4];  // masculine, feminine, masculine plural, feminine plural
  bool before_noun;   // "le petit chat", but "le chat noir"
};

const Adjective kColours[] = {
    {"black", {"noir", "noire", "noirs", "noires"}, false},  {"red", {"rouge", "rouge", "rouges", "rouges"}, false},
    {"green", {"vert", "verte", "verts", "vertes"}, false},  {"blue", {"bleu", "bleue", "bleus", "bleues"}, false},
    {"white", {"blanc", "blanche", "blancs", "blanches"}, false},
    {"small", {"petit", "petite", "petits", "petites"}, true}, {"big", {"grand", "grande", "grands", "grandes"}, true},
};
const Adjective kMoods[] = {
    {"tired", {"fatigué", "fatiguée", "fatigués", "fatiguées"}, false}, {"happy", {"heureux", "heureuse", "heureux", "heureuses"}, false},
    {"ready", {"prêt", "prête", "prêts", "prêtes"}, false},           {"sick", {"malade", "malade", "malades", "malades"}, false},
    {"busy", {"occupé", "occupée", "occupés", "occupées"}, false},    {"sad", {"triste", "triste", "tristes", "tristes"}, false},
    {"angry", {"fâché", "fâchée", "fâchés", "fâchées"}, false},       {"late", {"en retard", "en retard", "en retard", "en retard"}, false},
};

// One way of saying a subject in French: the person of its verb (0 je ... 5 ils) and what its
// adjectives agree with.
struct FrenchSubject {
  const char* fr;
  int person;
  bool feminine, plural;
};

struct Subject {
  const char* en;
  bool third_singular;  // "sees", "doesn't", "is"
  const char* be;       // "am", "are", "is"
  std::vector<FrenchSubject> fr;
};

const std::vector<Subject>& subjects() {
  static const std::vector<Subject> all = {
      {"I", false, "am", {{"je", 0, false, false}, {"je", 0, true, false}}},
      {"you", false, "are", {{"tu", 1, false, false}, {"vous", 4, false, true}}},
      {"he", true, "is", {{"il", 2, false, false}}},
      {"she", true, "is", {{"elle", 2, true, false}}},
      {"we", false, "are", {{"nous", 3, false, true}, {"nous", 3, true, true}}},
      {"they", false, "are", {{"ils", 5, false, true}, {"elles", 5, true, true}}},
      {"Tom", true, "is", {{"Tom", 2, false, false}}},
      {"Mary", true, "is", {{"Marie", 2, true, false}}},
      {"my father", true, "is", {{"mon père", 2, false, false}}},
      {"my mother", true, "is", {{"ma mère", 2, true, false}}},
      {"the children", false, "are", {{"les enfants", 5, false, true}}},
  };
  return all;
}

template <class T, size_t N>
const T& pick(const T (&items)[N], Generator& gen) {
  return items[static_cast<size_t>(gen.randint(0, static_cast<int64_t>(N)))];
}

bool starts_with_vowel(std::string_view word) {
  for (const std::string_view vowel : {"a", "e", "i", "o", "u", "é", "è", "ê", "à", "â", "î", "ô", "œ"})
    if (word.starts_with(vowel)) return true;
  return false;
}

// French words joined with spaces, eliding before a vowel: je aime -> j'aime, ne est -> n'est,
// le arbre -> l'arbre, que il -> qu'il.
std::string french(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const bool elides = (word == "je" || word == "ne" || word == "le" || word == "la" || word == "que") &&
                        i + 1 < words.size() && starts_with_vowel(words[i + 1]);
    out += elides ? word.substr(0, word.size() - 1) + "'" : word + (i + 1 < words.size() ? " " : "");
  }
  return out;
}

std::string capitalised(std::string text) {
  text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

// "the small black cats" drawn for a noun of `kinds`: English and French, and what French agrees with.
struct NounPhrase {
  std::string en;
  std::vector<std::string> fr;
  bool feminine, plural;
};

// `adjectives`: whether it may take one (not when the sentence names the colour: "the blue hats are blue").
NounPhrase noun_phrase(unsigned kinds, bool adjectives, Generator& gen) {
  const Noun* noun;
  do noun = &pick(kNouns, gen);
  while ((noun->kinds & kinds) == 0);
  const bool plural = noun->en_plural != nullptr && gen.uniform() < 0.3f;
  NounPhrase np{"the", {plural ? "les" : noun->feminine ? "la" : "le"}, noun->feminine, plural};
  const Adjective* adjective = adjectives && (noun->kinds & kDescribed) && gen.uniform() < 0.3f ? &pick(kColours, gen) : nullptr;
  const char* fr_adjective = adjective ? adjective->fr[noun->feminine + 2 * plural] : nullptr;
  if (adjective) np.en += std::string(" ") + adjective->en;
  np.en += std::string(" ") + (plural ? noun->en_plural : noun->en);
  if (adjective && adjective->before_noun) np.fr.push_back(fr_adjective);
  np.fr.push_back(plural ? noun->fr_plural : noun->fr);
  if (adjective && !adjective->before_noun) np.fr.push_back(fr_adjective);
  return np;
}

enum class Mood { statement, negation, question };

// French: the subject, the verb (or être) with ne ... pas around it, then the rest; "?" questions
// start with "est-ce que" and end, as in Tatoeba's French, with a narrow no-break space before "?".
std::string french_sentence(const std::vector<std::string>& subject, const std::string& verb, const std::vector<std::string>& rest,
                            Mood mood) {
  std::vector<std::string> words;
  if (mood == Mood::question) words = {"est-ce", "que"};
  words.insert(words.end(), subject.begin(), subject.end());
  if (mood == Mood::negation) words.push_back("ne");
  words.push_back(verb);
  if (mood == Mood::negation) words.push_back("pas");
  words.insert(words.end(), rest.begin(), rest.end());
  return capitalised(french(words)) + (mood == Mood::question ? "\u202F?" : ".");
}

// One English sentence and its French translations (one, or two when the English does not say
// which form French must take).
struct Sentence {
  std::string en;
  std::vector<std::string> fr;
};

void add_translation(Sentence& sentence, const std::string& fr) {
  for (const std::string& known : sentence.fr)
    if (known == fr) return;
  sentence.fr.push_back(fr);
}

// "Tom doesn't see the black cats." A person does something to a thing.
Sentence action(Mood mood, Generator& gen) {
  const Subject& subject = subjects()[static_cast<size_t>(gen.randint(0, static_cast<int64_t>(subjects().size())))];
  const Verb& verb = pick(kVerbs, gen);
  const NounPhrase object = noun_phrase(verb.objects, /*adjectives=*/true, gen);
  const std::string en_subject = subject.en;
  Sentence s;
  if (mood == Mood::statement) s.en = en_subject + " " + (subject.third_singular ? verb.en_third : verb.en);
  if (mood == Mood::negation) s.en = en_subject + (subject.third_singular ? " doesn't " : " don't ") + verb.en;
  if (mood == Mood::question) s.en = std::string(subject.third_singular ? "Does " : "Do ") + en_subject + " " + verb.en;
  s.en = capitalised(s.en + " " + object.en + (mood == Mood::question ? "?" : "."));
  for (const FrenchSubject& fr : subject.fr)
    add_translation(s, french_sentence({fr.fr}, verb.fr[fr.person], object.fr, mood));
  return s;
}

// "We are not tired." A person's state: the adjective agrees with who the French says it is.
Sentence state(Mood mood, Generator& gen) {
  const Subject& subject = subjects()[static_cast<size_t>(gen.randint(0, static_cast<int64_t>(subjects().size())))];
  const Adjective& adjective = pick(kMoods, gen);
  Sentence s;
  const std::string be = subject.be;
  if (mood == Mood::statement) s.en = std::string(subject.en) + " " + be + " " + adjective.en + ".";
  if (mood == Mood::negation) s.en = std::string(subject.en) + " " + be + " not " + adjective.en + ".";
  if (mood == Mood::question) s.en = capitalised(be) + " " + subject.en + " " + adjective.en + "?";
  s.en = capitalised(s.en);
  for (const FrenchSubject& fr : subject.fr)
    add_translation(s, french_sentence({fr.fr}, kEtre[fr.person], {adjective.fr[fr.feminine + 2 * fr.plural]}, mood));
  return s;
}

// "Is the door green?" A thing's colour or size.
Sentence description(Mood mood, Generator& gen) {
  const NounPhrase thing = noun_phrase(kDescribed, /*adjectives=*/false, gen);
  const Adjective& adjective = pick(kColours, gen);
  const std::string be = thing.plural ? "are" : "is";
  Sentence s;
  if (mood == Mood::statement) s.en = thing.en + " " + be + " " + adjective.en + ".";
  if (mood == Mood::negation) s.en = thing.en + " " + be + " not " + adjective.en + ".";
  if (mood == Mood::question) s.en = be + " " + thing.en + " " + adjective.en + "?";
  s.en = capitalised(s.en);
  s.fr.push_back(french_sentence(thing.fr, kEtre[thing.plural ? 5 : 2], {adjective.fr[thing.feminine + 2 * thing.plural]}, mood));
  return s;
}

}  // namespace

std::vector<TextPair> phrasebook_pairs(const PhrasebookOptions& options) {
  constexpr int64_t kMostSources = 100000;
  if (options.sources < 1 || options.sources > kMostSources)
    fail("phrasebook_pairs", "sources must be within 1-", kMostSources, ", got ", options.sources);
  Generator gen(options.seed);
  std::unordered_set<std::string> seen;
  std::vector<TextPair> pairs;
  while (static_cast<int64_t>(seen.size()) < options.sources) {
    const float u = gen.uniform(), m = gen.uniform();
    const Mood mood = m < 0.5f ? Mood::statement : m < 0.8f ? Mood::negation : Mood::question;
    const Sentence s = u < 0.55f ? action(mood, gen) : u < 0.8f ? state(mood, gen) : description(mood, gen);
    if (!seen.insert(s.en).second) continue;
    for (const std::string& fr : s.fr) pairs.push_back({s.en, fr});
  }
  return pairs;
}

void write_pairs_file(const std::string& path, const std::vector<TextPair>& pairs, const std::string& attribution) {
  std::ofstream out(path, std::ios::binary);
  if (!out) fail("write_pairs_file", path, ": cannot be written");
  for (size_t i = 0; i < pairs.size(); ++i) {
    for (const std::string* side : {&pairs[i].source, &pairs[i].target})
      if (side->find_first_of("\t\r\n") != std::string::npos)
        fail("write_pairs_file", "pair ", i, " holds a tab or a line break: \"", visible(*side), "\"");
    out << pairs[i].source << '\t' << pairs[i].target << '\t' << attribution << " #" << i + 1 << '\n';
  }
  if (!out.flush()) fail("write_pairs_file", path, ": writing failed");
}

}  // namespace ladder::data
