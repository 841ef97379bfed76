// A character GPT and its text (models/gpt_text.h): the validation loss over the whole text, stream
// or lines, the shares of it that processes score, and line samples that stop at the end marker.
#include "models/gpt_fixtures.h"
#include "helpers.h"

#include <algorithm>
#include <cmath>

#include "core/autograd.h"
#include "core/ops.h"
#include "data/line_batch.h"
#include "data/tokenizer.h"
#include "dist/data_parallel.h"
#include "models/gpt_text.h"

using namespace ladder;
using ladder::testing::sharpen;
using ladder::testing::tiny_gpt_config;

namespace {

// The loss of every target of (x, y) one position at a time, by hand: the sum of -log p(target).
double summed_by_hand(models::GPT& model, const std::vector<int>& x, const std::vector<int>& y) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const auto T = static_cast<int64_t>(x.size());
  const Tensor log_p = log_softmax(model.forward(tensor(std::vector<float>(x.begin(), x.end()), {1, T})), -1);  // (1,T,V)
  const int64_t V = log_p.size(2);
  double sum = 0;
  for (int64_t t = 0; t < T; ++t)
    if (y[static_cast<size_t>(t)] != data::kNoAnswer) sum -= log_p.data()[t * V + y[static_cast<size_t>(t)]];
  return sum;
}

}  // namespace

TEST_CASE("stream_loss predicts every character after the first once, the last window reading back") {
  Generator gen(4);
  models::GPT model(tiny_gpt_config(), gen);  // context 8
  sharpen(model);
  std::vector<int> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(4 + (i * 5) % 7);  // 20 ids: windows [0,8), [8,16), then [11,19) for targets 17..19
  const auto at = [&](int64_t from, int64_t n) { return std::vector<int>(ids.begin() + from, ids.begin() + from + n); };
  std::vector<int> tail_targets = at(12, 8);
  for (int t = 0; t < 5; ++t) tail_targets[static_cast<size_t>(t)] = data::kNoAnswer;  // 12..16: read back, scored before
  const double by_hand = (summed_by_hand(model, at(0, 8), at(1, 8)) + summed_by_hand(model, at(8, 8), at(9, 8)) +
                          summed_by_hand(model, at(11, 8), tail_targets)) / 19;
  for (const int64_t batch : {1, 2, 64}) CHECK(models::stream_loss(model, ids, 8, batch).mean() == doctest::Approx(by_hand).epsilon(1e-5));
  // A share: the second of two processes scores window 1 alone; the shares' sums add to the whole.
  const models::SummedLoss second = models::stream_loss(model, ids, 8, 4, {.index = 1, .of = 2});
  CHECK(second.targets == 8);
  CHECK(second.total == doctest::Approx(summed_by_hand(model, at(8, 8), at(9, 8))).epsilon(1e-5));
  for (const int64_t processes : {2, 3, 5}) {
    CAPTURE(processes);
    models::SummedLoss all;
    for (int64_t p = 0; p < processes; ++p) {
      const models::SummedLoss share = models::stream_loss(model, ids, 8, 2, {.index = p, .of = processes});
      all.total += share.total, all.targets += share.targets;
    }
    CHECK(all.targets == 19);
    CHECK(all.mean() == doctest::Approx(by_hand).epsilon(1e-6));
  }
}

TEST_CASE("lines_loss: per character over every line, each line's end marker counted as one") {
  Generator gen(5);
  models::GPT model(tiny_gpt_config(), gen);
  sharpen(model);
  const std::vector<std::vector<int>> lines = {{4, 5, 6}, {7}, {8, 9, 10, 4, 5, 6, 7}};  // 11 characters, 3 end markers
  double sum = 0;
  for (const std::vector<int>& line : lines) {
    std::vector<int> x = {0}, y = line;  // <bos> 0, <eos> 1
    x.insert(x.end(), line.begin(), line.end());
    y.push_back(1);
    sum += summed_by_hand(model, x, y);
  }
  const data::LineMarkers markers{.bos = 0, .eos = 1};
  for (const int64_t batch : {1, 2, 64})
    CHECK(models::lines_loss(model, lines, 8, batch, markers).mean() == doctest::Approx(sum / 14).epsilon(1e-5));
  // Shares of the lines, as the processes of lesson 16 score them, add up to the whole.
  for (const int64_t processes : {2, 3, 4}) {
    CAPTURE(processes);
    models::SummedLoss all;
    for (int64_t p = 0; p < processes; ++p) {
      const models::SummedLoss share = models::lines_loss(model, lines, 8, 1, markers, {.index = p, .of = processes});
      all.total += share.total, all.targets += share.targets;
    }
    CHECK(all.targets == 14);
    CHECK(all.mean() == doctest::Approx(sum / 14).epsilon(1e-6));
  }
}

TEST_CASE("sample_lines: each line is what generate drew after <bos> and the prompt, up to its first <eos>") {
  models::GPTConfig config = tiny_gpt_config();  // context 8
  const data::Tokenizer tokenizer = data::Tokenizer::chars({"abc"}, {"<bos>", "<eos>"});
  config.vocab_size = tokenizer.vocab_size();  // <bos>, <eos> and 3 characters: an untrained model draws <eos> often
  Generator init(6);
  models::GPT model(config, init);
  Generator gen(7), twin_gen(7);
  const int64_t count = 40;
  const std::vector<models::SampledLine> lines = models::sample_lines(model, tokenizer, {3}, count, 1.0f, gen);
  std::vector<float> prompt;
  for (int64_t r = 0; r < count; ++r) prompt.insert(prompt.end(), {0.0f, 3.0f});  // <bos> "b"
  const Tensor drawn = model.generate(tensor(prompt, {count, 2}), 6, {.never_sample = {0}}, twin_gen);  // never <bos>
  REQUIRE(lines.size() == static_cast<size_t>(count));
  int64_t cut = 0, unended = 0;
  for (int64_t r = 0; r < count; ++r) {
    CAPTURE(r);
    std::vector<int> expected;
    bool ended = false;
    for (int64_t t = 1; t < 8 && !ended; ++t) {
      const int id = static_cast<int>(drawn.data()[r * 8 + t]);
      ended = id == 1;
      if (!ended) expected.push_back(id);
    }
    CHECK(lines[static_cast<size_t>(r)].ids == expected);
    CHECK(lines[static_cast<size_t>(r)].ended == ended);
    CHECK(lines[static_cast<size_t>(r)].ids.front() == 3);  // the prompt starts every line
    cut += ended && expected.size() < 6, unended += !ended;
  }
  CHECK(cut > 0);  // lines whose <eos> came before the context was full: what followed it is left out
  CHECK(unended > 0);  // and lines that filled the context say so
}

TEST_CASE("never_sampled: the specials the vocabulary holds, <eos> allowed for lines") {
  const data::Tokenizer stream = data::Tokenizer::chars({"ab\n"}, {});
  CHECK(models::never_sampled(stream).empty());  // every id is a character of the text
  const data::Tokenizer lines = data::Tokenizer::chars({"ab"}, {"<bos>", "<eos>"});
  CHECK(models::never_sampled(lines, /*lines=*/true) == std::vector<int64_t>{lines.bos()});
  // A checkpoint's vocabulary from before held all four: none is drawn in a stream.
  const data::Tokenizer old = data::Tokenizer::chars({"ab"});
  CHECK(models::never_sampled(old) == std::vector<int64_t>{0, 1, 2, 3});
}

TEST_CASE("share_of: a shard's share of the batch's loss is its targets', so the shares' weighted losses add to the batch's") {
  Generator gen(8);
  models::GPT model(tiny_gpt_config(), gen);  // context 8
  sharpen(model);
  const data::Batch lines = data::frame_lines({{4, 5, 6, 7, 8, 9}, {5}, {6, 7}, {8, 9, 10}, {4}}, 8, {.bos = 1, .eos = 2});
  const double whole = model.loss(lines).item();
  for (const int processes : {2, 3}) {
    CAPTURE(processes);
    double weighted = 0, shares = 0;
    for (int rank = 0; rank < processes; ++rank) {
      const dist::BatchShare mine = dist::share_of(lines, dist::shard_of(5, rank, processes));
      weighted += mine.share * model.loss(mine.rows).item();
      shares += mine.share;
    }
    CHECK(shares == doctest::Approx(1.0));
    CHECK(weighted == doctest::Approx(whole).epsilon(1e-6));
  }
  // The first of 2 shards (rows 0 and 1) holds 7 + 2 of the 18 targets: not 2 of 5 rows.
  CHECK(dist::share_of(lines, dist::shard_of(5, 0, 2)).share == doctest::Approx(9.0 / 18));
  // In a stream every row has as many targets: the share is the shard's, to the bit.
  const data::Batch windows{zeros({6, 8}), ones({6, 8})};
  for (int rank = 0; rank < 4; ++rank) CHECK(dist::share_of(windows, dist::shard_of(6, rank, 4)).share == dist::shard_of(6, rank, 4).share);
}
