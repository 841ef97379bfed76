// The character RNN language model: its loss is truncated BPTT's (the state carried from window to
// window, detached, and reset at a new pass), stream_nll and sample run in eval mode and leave the
// mode as they found it, and the errors.
#include "helpers.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "core/autograd.h"
#include "data/batcher.h"
#include "models/char_rnn.h"
#include "optim/train_step.h"

using namespace ladder;
using namespace ladder::models;
using ladder::testing::check_close;
using ladder::testing::check_error;

namespace {

static_assert(optim::Trainable<CharRNN, data::Batch>);

// 13 ids from 4..9: one row of 13, windows of 4 -> 3 windows per pass.
std::vector<int> small_stream() {
  std::vector<int> ids;
  for (int i = 0; i < 13; ++i) ids.push_back(4 + (i * 7) % 6);
  return ids;
}

// Every parameter's gradient, copied, after zeroing them and running `loss` backward.
std::vector<Tensor> gradients(CharRNN& model, const std::function<Tensor()>& loss) {
  model.zero_grad();
  loss().backward();
  std::vector<Tensor> grads;
  for (const Tensor& p : model.parameters()) grads.push_back(p.grad().clone());
  return grads;
}

}  // namespace

TEST_CASE("CharRNN::loss is forward + cross_entropy from the state the previous window ended in, detached") {
  Generator gen(1);
  CharRNN model(10, 4, 6, nn::CellKind::lstm, {}, gen);
  data::ContiguousBatcher windows(small_stream(), 1, 4);
  REQUIRE(windows.windows() == 3);
  Tensor h, c;  // the reference's carried state: zeros at a pass's start
  for (int w = 0; w < 2 * 3; ++w) {
    CAPTURE(w);
    const data::Batch b = windows.next();
    if (windows.restarted()) model.reset_state(), h = c = Tensor();
    Tensor expected, carried_h, carried_c;
    const std::vector<Tensor> expected_grads = gradients(model, [&] {
      const CharRNN::Output out = model.forward(b.x, h, c);
      carried_h = out.states.h_n.detach(), carried_c = out.states.c_n.detach();
      return expected = cross_entropy(out.logits, b.y);
    });
    Tensor loss;
    const std::vector<Tensor> grads = gradients(model, [&] { return loss = model.loss(b); });
    CHECK(loss.item() == expected.item());
    for (size_t i = 0; i < grads.size(); ++i) check_close(grads[i], expected_grads[i], 0);
    if (w % 3 != 0) {  // the carried state matters
      NoGradGuard no_grad;
      CHECK(cross_entropy(model.forward(b.x).logits, b.y).item() != loss.item());
    }
    h = carried_h, c = carried_c;
  }
}

TEST_CASE("CharRNN::loss: the gradient stops at the window's start, where full BPTT would go on") {
  Generator gen(4);
  CharRNN model(10, 4, 6, nn::CellKind::gru, {}, gen);
  data::ContiguousBatcher windows(small_stream(), 1, 4);
  const data::Batch first = windows.next(), second = windows.next();
  // Truncated: the second window's loss, right after the first's forward (whose graph is still there).
  model.reset_state();
  const Tensor first_loss = model.loss(first);
  CHECK(first_loss.requires_grad());
  const std::vector<Tensor> truncated = gradients(model, [&] { return model.loss(second); });
  // Through both windows: the same second-window loss, its state not detached.
  const std::vector<Tensor> full = gradients(model, [&] {
    const CharRNN::Output out = model.forward(second.x, model.forward(first.x).states.h_n);
    return cross_entropy(out.logits, second.y);
  });
  // The recurrent weights get more from full BPTT: the first window's steps add to their gradient.
  float largest_gap = 0;
  for (size_t i = 0; i < truncated.size(); ++i) largest_gap = std::max(largest_gap, ladder::testing::max_abs(truncated[i] - full[i]));
  CHECK(largest_gap > 1e-4f);
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
  data::ContiguousBatcher windows(small_stream(), 1, 4);
  check_error([&] { both_ways.sample({4}, 5, gen); }, {"CharRNN::sample", "bidirectional model reads the future"});
  check_error([&] { both_ways.loss(windows.next()); }, {"CharRNN::loss", "bidirectional model reads the future"});
  check_error([&] { stream_nll(both_ways, small_stream(), 4); }, {"stream_nll", "bidirectional model reads the future"});
}
