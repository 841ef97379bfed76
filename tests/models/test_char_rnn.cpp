// The character RNN language model's helpers: truncated BPTT carries (and resets) the state,
// stream_nll and sample run in eval mode and leave the mode as they found it, and the errors.
#include "helpers.h"

#include <cmath>

#include "core/autograd.h"
#include "data/batcher.h"
#include "models/char_rnn.h"
#include "optim/sgd.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_error;

namespace {

// 13 ids from 4..9: one row of 13, windows of 4 -> 3 windows per pass.
std::vector<int> small_stream() {
  std::vector<int> ids;
  for (int i = 0; i < 13; ++i) ids.push_back(4 + (i * 7) % 6);
  return ids;
}

double window_loss(CharRNN& model, const data::Batch& b, Tensor& h, Tensor& c) {
  NoGradGuard no_grad;
  const CharRNN::Output out = model.forward(b.x, h, c);
  h = out.states.h_n, c = out.states.c_n;
  return cross_entropy(out.logits, b.y).item();
}

}  // namespace

TEST_CASE("TBPTT carries the state from window to window and starts again from zeros after a pass") {
  Generator gen(1);
  CharRNN model(10, 4, 6, nn::CellKind::lstm, {}, gen);
  optim::SGD frozen(model.named_parameters(), {.lr = 0.0f});  // the weights stay put: losses comparable
  TBPTT tbptt(small_stream(), 1, 4);
  data::ContiguousBatcher windows(small_stream(), 1, 4);
  REQUIRE(windows.windows() == 3);
  Tensor h, c;
  for (int w = 0; w < 2 * 3; ++w) {
    CAPTURE(w);
    const data::Batch b = windows.next();
    if (w % 3 == 0) h = c = Tensor();  // a new pass: zeros
    Tensor zero_h, zero_c;
    const double from_zeros = window_loss(model, b, zero_h, zero_c);
    const double expected = window_loss(model, b, h, c);
    CHECK(tbptt.step(model, frozen, 0).loss == doctest::Approx(expected).epsilon(1e-6));
    if (w % 3 != 0) CHECK(expected != doctest::Approx(from_zeros).epsilon(1e-6));  // the carried state matters
  }
}

TEST_CASE("stream_nll and sample switch dropout off, and leave the model in the mode it was in") {
  Generator gen(2);
  CharRNN model(10, 4, 6, nn::CellKind::lstm, {.num_layers = 2, .dropout = 0.5f}, gen);
  const std::vector<int> ids = small_stream();
  model.train();
  const double a = stream_nll(model, ids, 4), b = stream_nll(model, ids, 4);
  CHECK(a == b);  // no random masks
  CHECK(model.is_training());
  model.eval();
  CHECK(stream_nll(model, ids, 4) == a);
  CHECK(!model.is_training());

  Generator g1(7), g2(7);
  const std::vector<int> in_eval = model.sample({4, 5}, 20, g1, 0.8f);
  model.train();
  CHECK(model.sample({4, 5}, 20, g2, 0.8f) == in_eval);
  CHECK(model.is_training());
  CHECK(in_eval.size() == 20);
}

TEST_CASE("char RNN errors") {
  Generator gen(3);
  CharRNN model(10, 4, 6, nn::CellKind::gru, {}, gen);
  check_error([&] { model.forward(zeros({5})); }, {"CharRNN", "expects ids (B,T)", "(5)"});
  check_error([&] { model.sample({}, 5, gen); }, {"CharRNN::sample", "at least one token"});
  check_error([&] { model.sample({4}, 5, gen, 0.0f); }, {"CharRNN::sample", "temperature must be positive", "0"});
  check_error([&] { model.sample({4}, 5, gen, -1.0f); }, {"CharRNN::sample", "temperature must be positive", "-1"});
  CharRNN both_ways(10, 4, 6, nn::CellKind::lstm, {.bidirectional = true}, gen);
  optim::SGD sgd(both_ways.named_parameters(), {.lr = 0.1f});
  TBPTT tbptt(small_stream(), 1, 4);
  check_error([&] { both_ways.sample({4}, 5, gen); }, {"CharRNN::sample", "bidirectional model reads the future"});
  check_error([&] { tbptt.step(both_ways, sgd, 1.0f); }, {"TBPTT", "bidirectional model reads the future"});
  check_error([&] { stream_nll(both_ways, small_stream(), 4); }, {"stream_nll", "bidirectional model reads the future"});
}
