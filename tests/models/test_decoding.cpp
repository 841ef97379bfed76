// Greedy decoding and beam search, on hand-made decoders whose probabilities are written out here.
#include "helpers.h"

#include <cmath>
#include <map>

#include "models/decoding.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_error;

namespace {

// Tokens: 0 <pad>, 1 <bos>, 2 <eos>, 3 "A", 4 "B". The next token's probabilities depend only on the
// previous token (a table), and on nothing in the source. The state carries the step count per
// row so that the test can see beam search reorder rows.
class MarkovDecoder : public EncoderDecoder {
 public:
  explicit MarkovDecoder(std::map<int, std::vector<float>> next) : EncoderDecoder("MarkovDecoder"), next_(std::move(next)) {}
  DecoderState encode(const Tensor& src, const Tensor&) override {
    return {.tensors = {zeros({src.size(0)})}, .batch_dims = {0}};
  }
  Tensor decode_step(DecoderState& state, const Tensor& tokens) override {
    const int64_t rows = tokens.numel();
    Tensor logits = empty({rows, 5});
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<float>& p = next_.at(static_cast<int>(tokens.data()[r]));
      for (int64_t v = 0; v < 5; ++v) logits.data()[r * 5 + v] = std::log(p[static_cast<size_t>(v)]);
    }
    state.tensors[0] = state.tensors[0] + 1.0f;
    ++steps;
    return logits;
  }
  Tensor forward(const Tensor&, const Tensor&, const Tensor&) override { return {}; }
  int steps = 0;

 private:
  std::map<int, std::vector<float>> next_;
};

// After <bos>: A 0.6, B 0.4. After A: <eos> 0.3, A 0.35, B 0.35. After B: <eos> 0.9.
// Greedy takes A (0.6), then A or B (0.35) and so on: every sequence through A is worth less than
// B <eos> = 0.36, which greedy never sees; A <eos> = 0.18.
MarkovDecoder greedy_trap() {
  return MarkovDecoder({{1, {1e-9f, 1e-9f, 1e-9f, 0.6f, 0.4f}},
                        {3, {1e-9f, 1e-9f, 0.3f, 0.35f, 0.35f}},
                        {4, {1e-9f, 1e-9f, 0.9f, 0.05f, 0.05f}}});
}

const Tensor kSrc = zeros({1, 3}), kValid = ones({1, 3});

}  // namespace

TEST_CASE("greedy takes the locally best token and misses the better sequence; beam search with k = 2 finds it") {
  MarkovDecoder model = greedy_trap();
  const auto greedy = greedy_decode(model, kSrc, kValid, {.max_len = 4});
  CHECK(greedy == std::vector<std::vector<int>>{{3, 3, 3, 3}});  // A A A A, cut at max_len: never <eos>

  const auto beams = beam_search(model, kSrc, kValid, 2, /*alpha=*/0, {.max_len = 4});
  REQUIRE(beams.size() == 2);
  CHECK(beams[0].tokens == std::vector<int>{4});  // B <eos>
  CHECK(beams[0].finished);
  CHECK(beams[0].length == 2);
  CHECK(beams[0].log_prob == doctest::Approx(std::log(0.4 * 0.9)));
  // Second: at step 2 the two best extensions were B <eos> (0.36) and A A (0.21), so A <eos> (0.18)
  // fell out of the beam; A A then grew to A A B <eos> = 0.6 * 0.35 * 0.35 * 0.9.
  CHECK(beams[1].tokens == std::vector<int>{3, 3, 4});
  CHECK(beams[1].log_prob == doctest::Approx(std::log(0.6 * 0.35 * 0.35 * 0.9)));
}

TEST_CASE("beam search with k = 1 chooses exactly what greedy chooses") {
  MarkovDecoder model = greedy_trap();
  const auto greedy = greedy_decode(model, kSrc, kValid, {.max_len = 6});
  const auto one = beam_search(model, kSrc, kValid, 1, 0.75f, {.max_len = 6});
  REQUIRE(one.size() == 1);
  CHECK(one[0].tokens == greedy[0]);
  CHECK_FALSE(one[0].finished);
  CHECK(one[0].length == 6);
}

TEST_CASE("length normalisation: score = log_prob / length^alpha reorders long and short outputs") {
  // After <bos>: <eos> 0.5, A 0.5. After A: <eos> 0.95. Short "" (<eos> at once) has log 0.5 over
  // length 1; "A" has log 0.475 over length 2. alpha = 0 prefers the short one, alpha = 1 the long one.
  MarkovDecoder model({{1, {1e-9f, 1e-9f, 0.5f, 0.5f, 1e-9f}}, {3, {1e-9f, 1e-9f, 0.95f, 0.025f, 0.025f}}});
  const auto plain = beam_search(model, kSrc, kValid, 2, 0.0f);
  CHECK(plain[0].tokens.empty());
  const auto normalised = beam_search(model, kSrc, kValid, 2, 1.0f);
  CHECK(normalised[0].tokens == std::vector<int>{3});
  CHECK(normalised[0].score == doctest::Approx(std::log(0.475) / 2));
}

TEST_CASE("beam search goes on past `beam` unlikely early <eos> endings while a likely hypothesis is still live") {
  // After <bos>: A 0.98, <eos> 0.01, B 0.01. After A: B 0.98. After B: <eos> 0.98. With k = 2 the
  // empty output (0.01) and "A" <eos> (0.0098) have finished by step 2, while "A B" (0.96) has not.
  MarkovDecoder model({{1, {1e-9f, 1e-9f, 0.01f, 0.98f, 0.01f}},
                       {3, {1e-9f, 1e-9f, 0.01f, 0.01f, 0.98f}},
                       {4, {1e-9f, 1e-9f, 0.98f, 0.01f, 0.01f}}});
  const auto beams = beam_search(model, kSrc, kValid, 2, 0.75f, {.max_len = 5});
  REQUIRE(beams.size() == 2);
  CHECK(beams[0].tokens == std::vector<int>{3, 4});  // A B <eos>
  CHECK(beams[0].finished);
  CHECK(beams[0].log_prob == doctest::Approx(std::log(0.98 * 0.98 * 0.98)));
}

TEST_CASE("greedy decodes a batch row by row; rows that finish early stop growing") {
  MarkovDecoder model({{1, {1e-9f, 1e-9f, 0.1f, 0.1f, 0.8f}}, {4, {1e-9f, 1e-9f, 0.9f, 0.05f, 0.05f}}});
  const auto out = greedy_decode(model, zeros({3, 2}), ones({3, 2}), {.max_len = 10});
  CHECK(out == std::vector<std::vector<int>>{{4}, {4}, {4}});
  CHECK(model.steps == 2);  // B, then <eos> for every row: no step after all are done
}

TEST_CASE("DecoderState::select keeps, reorders and repeats rows of every tensor along its batch dim") {
  const DecoderState state{.tensors = {tensor({10, 11, 12}), tensor({0, 1, 2, 3, 4, 5}, {2, 3})},
                           .batch_dims = {0, 1}};
  const DecoderState picked = state.select({2, 0, 0});
  ladder::testing::check_tensor(picked.tensors[0], {3}, {12, 10, 10});
  ladder::testing::check_tensor(picked.tensors[1], {2, 3}, {2, 0, 0, 5, 3, 3});
}

TEST_CASE("decoding errors") {
  MarkovDecoder model = greedy_trap();
  check_error([&] { beam_search(model, zeros({2, 3}), ones({2, 3}), 2); }, {"beam_search", "one source at a time", "(2,3)"});
  check_error([&] { beam_search(model, kSrc, kValid, 0); }, {"beam_search", "beam width must be at least 1, got 0"});
  check_error([&] { beam_search(model, kSrc, kValid, 2, -1); }, {"beam_search", "alpha must be >= 0"});
  check_error([&] { greedy_decode(model, zeros({3}), ones({3})); }, {"greedy_decode", "src must be (B,S)"});
  check_error([&] { greedy_decode(model, zeros({1, 3}), ones({1, 4})); }, {"greedy_decode", "src_valid", "(1,4)"});
}
