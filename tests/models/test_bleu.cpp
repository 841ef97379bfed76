// BLEU: d2l's sentence score and Papineni's corpus BLEU-4, against values worked out by hand.
#include "helpers.h"

#include <cmath>
#include <sstream>

#include "models/bleu.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_error;
using Tokens = std::vector<std::string>;

namespace {

Tokens words(const std::string& text) {
  Tokens out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

TEST_CASE("d2l's BLEU: brevity factor times n-gram precisions weighted 1/2^n") {
  // Perfect match: every p_n = 1 and the lengths agree.
  CHECK(bleu_d2l(words("a b c d e"), words("a b c d e"), 4) == doctest::Approx(1.0));

  // A prediction shorter than its label: "a b b c" against "a b c d e", k = 2.
  //   brevity: exp(min(0, 1 - 5/4)) = exp(-0.25)
  //   p_1: a, b, c match, the second b does not (the label has one b): 3/4
  //   p_2: "a b" and "b c" match, "b b" does not: 2/3
  const double shorter = std::exp(-0.25) * std::pow(3.0 / 4, 0.5) * std::pow(2.0 / 3, 0.25);
  CHECK(bleu_d2l(words("a b b c"), words("a b c d e"), 2) == doctest::Approx(shorter).epsilon(1e-12));

  // A prediction longer than its label has no brevity factor: "a b c x" against "a b c", k = 3.
  //   p_1 = 3/4, p_2 = 2/3 ("a b", "b c"), p_3 = 1/2 ("a b c" of "a b c", "b c x")
  const double longer = std::pow(3.0 / 4, 0.5) * std::pow(2.0 / 3, 0.25) * std::pow(1.0 / 2, 0.125);
  CHECK(bleu_d2l(words("a b c x"), words("a b c"), 3) == doctest::Approx(longer).epsilon(1e-12));

  // n runs only up to the prediction's length: "a" against "a b", k = 4: exp(1 - 2) * (1/1)^(1/2).
  CHECK(bleu_d2l(words("a"), words("a b"), 4) == doctest::Approx(std::exp(-1.0)).epsilon(1e-12));
  // No matching bigram: p_2 = 0 gives 0.
  CHECK(bleu_d2l(words("b a"), words("a b"), 2) == 0);
  CHECK(bleu_d2l(Tokens{}, words("a b"), 2) == 0);

  // Characters as ids ('-' is 10): "1998-03-30" predicted for "1998-03-03", k = 3, equal lengths.
  //   p_1 = 10/10: the same characters
  //   p_2 = 7/9: 19 99 98 8- -0 03 3- match, -3 and 30 do not
  //   p_3 = 6/8: 199 998 98- 8-0 -03 03- match, 3-3 and -30 do not
  const std::vector<int> label = {1, 9, 9, 8, 10, 0, 3, 10, 0, 3}, prediction = {1, 9, 9, 8, 10, 0, 3, 10, 3, 0};
  const double ids = std::pow(7.0 / 9, 0.25) * std::pow(6.0 / 8, 0.125);
  CHECK(bleu_d2l(prediction, label, 3) == doctest::Approx(ids).epsilon(1e-12));

  check_error([] { bleu_d2l(words("a"), words("a"), 0); }, {"bleu_d2l", "k", "at least 1, got 0"});
}

TEST_CASE("corpus BLEU-4: clipped counts summed over the corpus, geometric mean, brevity penalty") {
  // Perfect match = 1.
  const std::vector<Tokens> same = {words("the cat sat on the mat"), words("a dog ran in the park")};
  const CorpusBleu perfect = corpus_bleu(same, same);
  CHECK(perfect.bleu == doctest::Approx(1.0));
  CHECK(perfect.brevity_penalty == 1);

  // Candidates shorter than their references in total (c = 12, r = 13):
  //   "the cat sat on the mat" against "the cat sat on the red mat":
  //     1-grams 6 of 6, 2-grams 4 of 5 ("the mat" not), 3-grams 3 of 4 ("on the mat" not),
  //     4-grams 2 of 3 ("the cat sat on", "cat sat on the")
  //   "a dog ran in the park" against itself: 6 of 6, 5 of 5, 4 of 4, 3 of 3
  //   p = 12/12, 9/10, 7/8, 5/6 summed over both; BP = exp(1 - 13/12)
  const std::vector<Tokens> candidates = {words("the cat sat on the mat"), words("a dog ran in the park")};
  const std::vector<Tokens> references = {words("the cat sat on the red mat"), words("a dog ran in the park")};
  const CorpusBleu b = corpus_bleu(candidates, references);
  CHECK(b.candidate_length == 12);
  CHECK(b.reference_length == 13);
  CHECK(b.precisions[0] == doctest::Approx(1.0));
  CHECK(b.precisions[1] == doctest::Approx(9.0 / 10));
  CHECK(b.precisions[2] == doctest::Approx(7.0 / 8));
  CHECK(b.precisions[3] == doctest::Approx(5.0 / 6));
  CHECK(b.brevity_penalty == doctest::Approx(std::exp(1 - 13.0 / 12)));
  const double expected = std::exp(1 - 13.0 / 12) * std::pow(1.0 * 0.9 * 0.875 * (5.0 / 6), 0.25);
  CHECK(b.bleu == doctest::Approx(expected).epsilon(1e-12));

  // Papineni's example of clipping: "the" seven times against "the cat is on the mat" counts twice,
  // p_1 = 2/7; no 4-gram matches, so the corpus BLEU is 0.
  const CorpusBleu clipped = corpus_bleu(std::vector<Tokens>{words("the the the the the the the")},
                                         std::vector<Tokens>{words("the cat is on the mat")});
  CHECK(clipped.precisions[0] == doctest::Approx(2.0 / 7));
  CHECK(clipped.precisions[3] == 0);
  CHECK(clipped.bleu == 0);
  CHECK(clipped.brevity_penalty == 1);  // c = 7 > r = 6

  // Several references: each n-gram is clipped by the reference where it occurs most, and r is the
  // reference length closest to the candidate's, the shorter on a tie ("the the cat": 3; 2 and 4 tie).
  const std::vector<std::vector<Tokens>> lists = {{words("the cat"), words("the the dog sat")}};
  const CorpusBleu several = corpus_bleu(std::vector<Tokens>{words("the the cat")}, lists);
  CHECK(several.precisions[0] == doctest::Approx(1.0));  // "the" twice (second reference), "cat" once (first)
  CHECK(several.precisions[1] == doctest::Approx(1.0));  // "the the" from the second, "the cat" from the first
  CHECK(several.precisions[2] == 0);                     // "the the cat" is in neither
  CHECK(several.reference_length == 2);
  CHECK(several.bleu == 0);  // a 3-token candidate has no 4-gram

  // Token ids work the same way; every candidate empty gives 0.
  const std::vector<std::vector<int>> ids = {{5, 6, 7, 8, 9}};
  CHECK(corpus_bleu(ids, ids).bleu == doctest::Approx(1.0));
  CHECK(corpus_bleu(std::vector<std::vector<int>>{{}}, ids).bleu == 0);

  check_error([&] { corpus_bleu(candidates, std::vector<Tokens>{words("a")}); },
              {"corpus_bleu", "2 candidates but 1 lists of references", "one list for each candidate"});
  check_error([] { corpus_bleu(std::vector<Tokens>{words("a")}, std::vector<std::vector<Tokens>>{{}}); },
              {"corpus_bleu", "candidate 0 has no reference"});
}
