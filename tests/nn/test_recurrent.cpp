// Recurrent networks: cells against finite differences, the fused layers against the cells step
// by step (forward and gradients), stacking, directions, causality, and errors.
#include "helpers.h"

#include <memory>

#include "core/autograd.h"
#include "core/gradcheck.h"
#include "nn/linear.h"
#include "nn/recurrent.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::require_threaded;
using ladder::testing::TwoThreads;

namespace {

// Runs a cell over x (T,B,I) from h0, returning every step's state stacked (T,B,H).
template <class Step>
Tensor unroll(const Tensor& x, const Tensor& h0, bool reverse, Step step) {
  const int64_t T = x.size(0);
  std::vector<Tensor> states(static_cast<size_t>(T));
  Tensor h = h0;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    h = step(squeeze(narrow(x, 0, t, 1), 0), h);
    states[static_cast<size_t>(t)] = h;
  }
  return stack(states);
}

// Both ways of computing must give the same values and the same gradients for every input.
void check_same(const std::function<Tensor(const std::vector<Tensor>&)>& fused,
                const std::function<Tensor(const std::vector<Tensor>&)>& cells, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> a, b;
  for (const Tensor& t : inputs) {
    Tensor ta = t.detach().clone(), tb = t.detach().clone();
    a.push_back(ta.requires_grad_());
    b.push_back(tb.requires_grad_());
  }
  const Tensor ya = fused(a), yb = cells(b);
  check_close(ya, yb, 2e-5f, 1e-5f);
  Generator gen(5);
  const Tensor w = randn(ya.shape(), gen);
  ya.backward(w);
  yb.backward(w);
  for (size_t i = 0; i < inputs.size(); ++i) check_close(a[i].grad(), b[i].grad(), 2e-5f, 1e-4f);
}

TEST_CASE("each cell passes the finite-difference check") {
  Generator gen(1);
  const Tensor x = randn({3, 4}, gen), h = randn({3, 5}, gen), c = randn({3, 5}, gen);
  RNNCell rnn(4, 5, false, gen);
  GRUCell gru(4, 5, GRUVariant::classic, gen), gru_pt(4, 5, GRUVariant::pytorch, gen);
  LSTMCell lstm(4, 5, gen);
  auto check = [&](const char* name, const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> in) {
    const GradcheckResult r = gradcheck(f, in);
    CHECK_MESSAGE(r.ok, name, ": ", r.worst);
  };
  Tensor xg = x.clone(), hg = h.clone(), cg = c.clone();
  xg.requires_grad_(), hg.requires_grad_(), cg.requires_grad_();
  check("RNNCell", [&](const std::vector<Tensor>& v) { return rnn.forward(v[0], v[1]); }, {xg, hg});
  check("GRUCell", [&](const std::vector<Tensor>& v) { return gru.forward(v[0], v[1]); }, {xg, hg});
  check("GRUCell pytorch", [&](const std::vector<Tensor>& v) { return gru_pt.forward(v[0], v[1]); }, {xg, hg});
  check("LSTMCell", [&](const std::vector<Tensor>& v) {
    const LSTMState s = lstm.forward(v[0], {v[1], v[2]});
    return concat({s.h, s.c}, 1);
  }, {xg, hg, cg});
  check("LSTMCell weights", [&](const std::vector<Tensor>& v) {
    LSTMCell twin(4, 5);  // the cell's formulas, with the weights being checked
    twin.weight_ih = v[0], twin.weight_hh = v[1], twin.bias_ih = v[2], twin.bias_hh = v[3];
    return twin.forward(x, {h, c}).h;
  }, {lstm.weight_ih.detach().clone().requires_grad_(), lstm.weight_hh.detach().clone().requires_grad_(),
      lstm.bias_ih.detach().clone().requires_grad_(), lstm.bias_hh.detach().clone().requires_grad_()});
}

// Every fused layer against its cell, in both directions, for x (T,B,I) and hidden size H.
void check_fused_against_cells(int64_t T, int64_t B, int64_t I, int64_t H, Generator& gen) {
  const Tensor x = randn({T, B, I}, gen), h0 = randn({B, H}, gen), c0 = randn({B, H}, gen);
  for (bool reverse : {false, true}) {
    CAPTURE(reverse);
    for (bool use_relu : {false, true}) {
      CAPTURE(use_relu);
      RNNCell rnn(I, H, use_relu, gen);
      check_same([&](const std::vector<Tensor>& v) { return rnn_layer(v[0], v[1], v[2], v[3], v[4], v[5], use_relu, reverse); },
                 [&](const std::vector<Tensor>& v) {
                   return unroll(v[0], v[1], reverse, [&](const Tensor& xt, const Tensor& h) {
                     const Tensor pre = matmul(xt, v[2], {.transpose_b = true}) + v[4] + matmul(h, v[3], {.transpose_b = true}) + v[5];
                     return use_relu ? relu(pre) : tanh(pre);
                   });
                 },
                 {x, h0, rnn.weight_ih, rnn.weight_hh, rnn.bias_ih, rnn.bias_hh});
    }
    for (GRUVariant variant : {GRUVariant::classic, GRUVariant::pytorch}) {
      GRUCell cell(I, H, variant, gen);
      check_same([&](const std::vector<Tensor>& v) { return gru_layer(v[0], v[1], v[2], v[3], v[4], v[5], variant, reverse); },
                 [&](const std::vector<Tensor>& v) {
                   GRUCell twin(I, H, variant);
                   twin.weight_ih = v[2], twin.weight_hh = v[3], twin.bias_ih = v[4], twin.bias_hh = v[5];
                   return unroll(v[0], v[1], reverse, [&](const Tensor& xt, const Tensor& h) { return twin.forward(xt, h); });
                 },
                 {x, h0, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh});
    }
    LSTMCell cell(I, H, gen);
    check_same([&](const std::vector<Tensor>& v) { return lstm_layer(v[0], v[1], v[2], v[3], v[4], v[5], v[6], reverse); },
               [&](const std::vector<Tensor>& v) {
                 LSTMCell twin(I, H);
                 twin.weight_ih = v[3], twin.weight_hh = v[4], twin.bias_ih = v[5], twin.bias_hh = v[6];
                 std::vector<Tensor> states(static_cast<size_t>(T));
                 LSTMState s{v[1], v[2]};
                 for (int64_t k = 0; k < T; ++k) {
                   const int64_t t = reverse ? T - 1 - k : k;
                   s = twin.forward(squeeze(narrow(v[0], 0, t, 1), 0), s);
                   states[static_cast<size_t>(t)] = concat({s.h, s.c}, 1);
                 }
                 return stack(states);
               },
               {x, h0, c0, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh});
  }
}

}  // namespace

TEST_CASE("fused layers agree with their cells unrolled step by step, forward and backward") {
  Generator gen(2);
  check_fused_against_cells(6, 3, 4, 5, gen);
  check_fused_against_cells(1, 1, 1, 1, gen);
}

TEST_CASE("fused layers agree with their cells where the gate loops split across threads") {
  TwoThreads threads;
  const int64_t T = 8, B = 72, I = 8, H = 64;
  require_threaded(T * B, H);       // the input projection's bias loop (RNN: G = H; more gates, more work)
  require_threaded(B * H, 8);       // the RNN's activation loop
  require_threaded(B, 32 * H);      // the LSTM's gate loops, forward and backward
  require_threaded(B, 16 * H);      // the GRU's gate loops
  Generator gen(3);
  check_fused_against_cells(T, B, I, H, gen);
}

TEST_CASE("a 2-layer bidirectional LSTM passes the finite-difference check") {
  Generator gen(3);
  LSTM lstm(2, 3, {.num_layers = 2, .bidirectional = true}, gen);
  Tensor x = randn({3, 2, 2}, gen);
  x.requires_grad_();
  std::vector<Tensor> inputs = {x};
  for (const NamedParameter& p : lstm.named_parameters()) inputs.push_back(p.tensor.detach().clone().requires_grad_());
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& v) {
        std::map<std::string, Tensor> w;
        size_t k = 1;
        for (const NamedParameter& p : lstm.named_parameters()) w[p.name] = v[k++];
        // Run the same stack with the (perturbed) weights v: build the layers from the ops directly.
        Tensor layer_in = v[0];
        std::vector<Tensor> finals;
        for (int64_t l = 0; l < 2; ++l) {
          std::vector<Tensor> halves;
          for (int d = 0; d < 2; ++d) {
            const std::string s = "_l" + std::to_string(l) + (d ? "_reverse" : "");
            const Tensor both = lstm_layer(layer_in, zeros({2, 3}), zeros({2, 3}), w["weight_ih" + s], w["weight_hh" + s],
                                           w["bias_ih" + s], w["bias_hh" + s], d == 1);
            halves.push_back(narrow(both, 2, 0, 3));
          }
          layer_in = concat(halves, 2);
        }
        return layer_in;
      },
      inputs);
  CHECK_MESSAGE(r.ok, r.worst);
  // Through the module itself, with respect to the input and both initial states: every output
  // (all steps of the last layer, every final h and c) must have the right gradient.
  Tensor h0 = randn({4, 2, 3}, gen), c0 = randn({4, 2, 3}, gen);
  h0.requires_grad_(), c0.requires_grad_();
  const GradcheckResult through_module = gradcheck(
      [&](const std::vector<Tensor>& v) {
        const RecurrentOutput o = lstm.forward(v[0], v[1], v[2]);
        return concat({flatten(o.output), flatten(o.h_n), flatten(o.c_n)});
      },
      {x, h0, c0});
  CHECK_MESSAGE(through_module.ok, through_module.worst);
  const RecurrentOutput out = lstm.forward(x);
  CHECK(out.output.shape() == Shape{3, 2, 6});
  CHECK(out.h_n.shape() == Shape{4, 2, 3});
  CHECK(out.c_n.shape() == Shape{4, 2, 3});
}

TEST_CASE("a unidirectional RNN's output at t does not depend on inputs after t") {
  Generator gen(4);
  for (CellKind kind : {CellKind::rnn_tanh, CellKind::gru, CellKind::lstm}) {
    Recurrent net(kind, 3, 4, {.num_layers = 2}, gen);
    const Tensor x = randn({6, 2, 3}, gen);
    Tensor changed = x.clone();
    for (int64_t i = 0; i < 6; ++i) changed.data()[4 * 2 * 3 + i] += 1.0f;  // step 4 only
    const Tensor a = net.forward(x).output, b = net.forward(changed).output;
    for (int64_t i = 0; i < a.numel(); ++i) {
      const int64_t t = i / (2 * 4);
      if (t < 4) CHECK(a.data()[i] == b.data()[i]);
    }
    CHECK(a.to_vector() != b.to_vector());
  }
}

TEST_CASE("batch_first, initial states, final states and parameter names") {
  Generator gen(5);
  GRU gru(3, 4, {.num_layers = 2, .batch_first = true}, GRUVariant::classic, gen);
  const Tensor x = randn({2, 5, 3}, gen), h0 = randn({2, 2, 4}, gen);
  const RecurrentOutput out = gru.forward(x, h0);
  CHECK(out.output.shape() == Shape{2, 5, 4});
  // The last layer's final state is its output at the last step.
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t j = 0; j < 4; ++j) CHECK(out.h_n.at({1, b, j}) == out.output.at({b, 4, j}));
  CHECK(!out.c_n.defined());
  std::vector<std::string> names;
  for (const NamedParameter& p : gru.named_parameters()) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l1",
                                          "weight_hh_l1", "bias_ih_l1", "bias_hh_l1"});
  CHECK(gru.weight("weight_ih", 1, false).shape() == Shape{12, 4});
}

TEST_CASE("dropout between layers: random in training, off in eval, and the layer outlives its generator") {
  struct Built {
    std::unique_ptr<LSTM> lstm;
    std::unique_ptr<Linear> head;
  };
  auto build = [](float p) {
    Generator local(6);  // gone when build returns: the module must not keep a reference to it
    Built b{std::make_unique<LSTM>(3, 8, RecurrentOptions{.num_layers = 2, .dropout = p}, local), nullptr};
    b.head = std::make_unique<Linear>(8, 2, LinearOptions{}, local);
    return b;
  };
  const Built with = build(0.5f), without = build(0.0f);
  // The dropout rate changes neither the layer's weights nor those of the layers built after it.
  CHECK(with.lstm->weight("weight_hh", 1, false).to_vector() == without.lstm->weight("weight_hh", 1, false).to_vector());
  CHECK(with.head->weight.to_vector() == without.head->weight.to_vector());
  const Tensor x = randn({4, 2, 3});
  const Tensor a = with.lstm->forward(x).output, b = with.lstm->forward(x).output;
  CHECK(a.to_vector() != b.to_vector());  // a fresh mask each call
  CHECK(a.to_vector() != without.lstm->forward(x).output.to_vector());
  with.lstm->eval();
  CHECK(with.lstm->forward(x).output.to_vector() == without.lstm->forward(x).output.to_vector());
}

TEST_CASE("recurrent errors") {
  LSTM lstm(3, 4, {.num_layers = 2});
  check_error([&] { lstm.forward(zeros({5, 2, 4})); }, {"LSTM", "expects input (T,B,3)", "(5,2,4)"});
  check_error([&] { lstm.forward(zeros({5, 2, 3}), zeros({1, 2, 4}), zeros({1, 2, 4})); },
              {"LSTM", "(2, 2, 4) = (layers*directions, B, H)", "(1,2,4)"});
  check_error([&] { lstm.forward(zeros({5, 2, 3}), {}, zeros({2, 2, 4})); }, {"LSTM", "give both h0 and c0, or neither"});
  check_error([&] { lstm.weight("weight_ih", 2, false); }, {"LSTM", "has no parameter weight_ih_l2"});
  GRU gru(3, 4);
  check_error([&] { gru.forward(zeros({5, 2, 3}), {}, zeros({1, 2, 4})); }, {"GRU", "only the LSTM has a cell state"});
  check_error([&] { gru.forward(zeros({5, 2, 3}), {}, zeros({7})); }, {"GRU", "only the LSTM has a cell state"});
  check_error([] { RNN bad(3, 4, {.num_layers = 0}); }, {"RNN", "num_layers"});
  check_error([] { RNN bad(3, 0); }, {"RNN", "sizes must be positive", "hidden 0"});
  check_error([] { GRUCell bad(0, 4); }, {"GRUCell", "sizes must be positive", "input 0"});
  check_error([] { LSTM bad(3, 4, {.num_layers = 2, .dropout = 1.5f}); }, {"LSTM", "dropout must be in [0, 1]", "1.5"});
  check_error([] { LSTM bad(3, 4, {.dropout = 0.2f}); }, {"LSTM", "dropout acts between stacked layers", "num_layers = 1"});

  // The fused ops check their arguments themselves.
  const Tensor x = zeros({2, 2, 3}), h = zeros({2, 4});
  check_error([] { lstm_layer(zeros({0, 2, 3}), zeros({2, 4}), zeros({2, 4}), zeros({16, 3}), zeros({16, 4}), zeros({16}), zeros({16})); },
              {"lstm_layer", "empty"});
  check_error([&] { rnn_layer(zeros({2, 6}), h, zeros({4, 3}), zeros({4, 4}), zeros({4}), zeros({4})); },
              {"rnn_layer", "expects input (T,B,I)", "(2,6)"});
  check_error([&] { rnn_layer(x, h, zeros({4, 2}), zeros({4, 4}), zeros({4}), zeros({4})); }, {"rnn_layer", "w_ih must be (4, 3)"});
  check_error([&] { gru_layer(x, h, zeros({12, 3}), zeros({12, 5}), zeros({12}), zeros({12})); },
              {"gru_layer", "w_hh must be (3*H, H)", "(12,5)"});
  check_error([&] { gru_layer(x, h, zeros({12, 3}), zeros({12, 4}), zeros({12}), zeros({4})); },
              {"gru_layer", "biases must be (12)", "(4)"});
  check_error([&] { rnn_layer(x, zeros({3, 4}), zeros({4, 3}), zeros({4, 4}), zeros({4}), zeros({4})); },
              {"rnn_layer", "the initial state must be (2, 4)", "(3,4)"});
  check_error([&] { lstm_layer(x, h, zeros({2, 5}), zeros({16, 3}), zeros({16, 4}), zeros({16}), zeros({16})); },
              {"lstm_layer", "the initial cell state must be (2,4)", "(2,5)"});
}
