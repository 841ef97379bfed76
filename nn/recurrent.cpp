#include "nn/recurrent.h"

#include <cmath>

#include "core/error.h"
#include "nn/init.h"

namespace ladder::nn {

namespace {

// x (B,I) @ w^T + b for the rows [first, first + n) of w and b: one gate's (or several gates') part.
Tensor gate_part(const Tensor& x, const Tensor& w, const Tensor& b, int64_t first, int64_t n) {
  return matmul(x, narrow(w, 0, first, n), {.transpose_b = true}) + narrow(b, 0, first, n);
}

const char* kind_name(CellKind kind) {
  switch (kind) {
    case CellKind::rnn_tanh:
    case CellKind::rnn_relu: return "RNN";
    case CellKind::gru:
    case CellKind::gru_pytorch: return "GRU";
    case CellKind::lstm: return "LSTM";
  }
  return "RNN";
}

int64_t gate_count(CellKind kind) {
  switch (kind) {
    case CellKind::rnn_tanh:
    case CellKind::rnn_relu: return 1;
    case CellKind::gru:
    case CellKind::gru_pytorch: return 3;
    case CellKind::lstm: return 4;
  }
  return 1;
}

void check_sizes(const char* op, int64_t input, int64_t hidden) {
  if (input <= 0 || hidden <= 0) fail(op, "sizes must be positive, got input ", input, ", hidden ", hidden);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> RecurrentModule::register_layer(const std::string& suffix, int64_t gates,
                                                                          int64_t input, int64_t hidden, Generator& gen) {
  const int64_t G = gates * hidden;
  const float bound = 1.0f / std::sqrt(static_cast<float>(hidden));
  auto init = [&](const Shape& shape) { return uniform(shape, -bound, bound, gen); };
  Tensor w_ih = register_parameter("weight_ih" + suffix, init({G, input}));
  Tensor w_hh = register_parameter("weight_hh" + suffix, init({G, hidden}));
  Tensor b_ih = register_parameter("bias_ih" + suffix, init({G}), ParamKind::bias);
  Tensor b_hh = register_parameter("bias_hh" + suffix, init({G}), ParamKind::bias);
  return {w_ih, w_hh, b_ih, b_hh};
}

// ---- cells ----

RNNCell::RNNCell(int64_t input, int64_t hidden, bool relu, Generator& gen) : RecurrentModule("RNNCell"), relu_(relu) {
  check_sizes("RNNCell", input, hidden);
  std::tie(weight_ih, weight_hh, bias_ih, bias_hh) = register_layer("", 1, input, hidden, gen);
}

Tensor RNNCell::forward(const Tensor& x, const Tensor& h) {
  const Tensor pre = gate_part(x, weight_ih, bias_ih, 0, weight_hh.size(0)) + gate_part(h, weight_hh, bias_hh, 0, weight_hh.size(0));
  return relu_ ? relu(pre) : tanh(pre);
}

GRUCell::GRUCell(int64_t input, int64_t hidden, GRUVariant variant, Generator& gen)
    : RecurrentModule("GRUCell"), variant_(variant) {
  check_sizes("GRUCell", input, hidden);
  std::tie(weight_ih, weight_hh, bias_ih, bias_hh) = register_layer("", 3, input, hidden, gen);
}

std::vector<Tensor> GRUCell::gates(const Tensor& x, const Tensor& h) {
  const int64_t H = weight_hh.size(1);
  const Tensor r = sigmoid(gate_part(x, weight_ih, bias_ih, 0, H) + gate_part(h, weight_hh, bias_hh, 0, H));
  const Tensor z = sigmoid(gate_part(x, weight_ih, bias_ih, H, H) + gate_part(h, weight_hh, bias_hh, H, H));
  const Tensor n = variant_ == GRUVariant::classic
                       ? tanh(gate_part(x, weight_ih, bias_ih, 2 * H, H) + gate_part(r * h, weight_hh, bias_hh, 2 * H, H))
                       : tanh(gate_part(x, weight_ih, bias_ih, 2 * H, H) + r * gate_part(h, weight_hh, bias_hh, 2 * H, H));
  return {r, z, n};
}

Tensor GRUCell::forward(const Tensor& x, const Tensor& h) {
  const std::vector<Tensor> g = gates(x, h);
  return g[1] * h + (1.0f - g[1]) * g[2];
}

LSTMCell::LSTMCell(int64_t input, int64_t hidden, Generator& gen) : RecurrentModule("LSTMCell") {
  check_sizes("LSTMCell", input, hidden);
  std::tie(weight_ih, weight_hh, bias_ih, bias_hh) = register_layer("", 4, input, hidden, gen);
}

std::vector<Tensor> LSTMCell::gates(const Tensor& x, const LSTMState& state) {
  const int64_t H = weight_hh.size(1);
  std::vector<Tensor> out;
  for (int64_t k = 0; k < 4; ++k) {
    const Tensor pre = gate_part(x, weight_ih, bias_ih, k * H, H) + gate_part(state.h, weight_hh, bias_hh, k * H, H);
    out.push_back(k == 2 ? tanh(pre) : sigmoid(pre));  // input, forget, candidate, output
  }
  return out;
}

LSTMState LSTMCell::forward(const Tensor& x, const LSTMState& state) {
  const std::vector<Tensor> g = gates(x, state);
  const Tensor c = g[1] * state.c + g[0] * g[2];
  return {g[3] * tanh(c), c};
}

// ---- sequence modules ----

Recurrent::Recurrent(CellKind kind, int64_t input, int64_t hidden, RecurrentOptions options, Generator& gen)
    : RecurrentModule(kind_name(kind)), kind_(kind), input_(input), hidden_(hidden), options_(options), dropout_gen_(gen.child()) {
  const char* op = kind_name(kind);
  check_sizes(op, input, hidden);
  if (options.num_layers < 1) fail(op, "num_layers must be at least 1, got ", options.num_layers);
  if (!(options.dropout >= 0 && options.dropout <= 1)) fail(op, "dropout must be in [0, 1], got ", options.dropout);
  register_generator(dropout_gen_);
  if (options.dropout > 0 && options.num_layers == 1)
    fail(op, "dropout acts between stacked layers; with num_layers = 1 it would do nothing");
  for (int64_t layer = 0; layer < options.num_layers; ++layer)
    for (int64_t d = 0; d < directions(); ++d) {
      const std::string suffix = "_l" + std::to_string(layer) + (d ? "_reverse" : "");
      const int64_t in = layer == 0 ? input : hidden * directions();
      register_layer(suffix, gate_count(kind), in, hidden, gen);
    }
}

Tensor Recurrent::weight(const char* which, int64_t layer, bool reverse) const {
  const std::string name = std::string(which) + "_l" + std::to_string(layer) + (reverse ? "_reverse" : "");
  for (const NamedParameter& p : named_parameters())
    if (p.name == name) return p.tensor;
  fail(type_name().c_str(), "has no parameter ", name);
}

RecurrentOutput Recurrent::forward(const Tensor& x_in, const Tensor& h0, const Tensor& c0) {
  const char* op = type_name().c_str();
  if (x_in.dim() != 3 || x_in.size(2) != input_)
    fail(op, "expects input ", options_.batch_first ? "(B,T," : "(T,B,", input_, "), got ", shape_str(x_in.shape()));
  Tensor x = options_.batch_first ? transpose(x_in, 0, 1) : x_in;  // the layers work on (T,B,I)
  const int64_t T = x.size(0), B = x.size(1), states = options_.num_layers * directions();
  if (c0.defined() && kind_ != CellKind::lstm) fail(op, "only the LSTM has a cell state");
  if (kind_ == CellKind::lstm && h0.defined() != c0.defined()) fail(op, "give both h0 and c0, or neither (zeros)");
  for (const Tensor* s : {&h0, &c0})
    if (s->defined() && s->shape() != Shape{states, B, hidden_})
      fail(op, "initial states must be (", states, ", ", B, ", ", hidden_, ") = (layers*directions, B, H), got ",
           shape_str(s->shape()));
  auto initial = [&](const Tensor& given, int64_t k) { return given.defined() ? squeeze(narrow(given, 0, k, 1), 0) : zeros({B, hidden_}); };

  std::vector<Tensor> h_n, c_n;
  for (int64_t layer = 0; layer < options_.num_layers; ++layer) {
    std::vector<Tensor> halves;
    for (int64_t d = 0; d < directions(); ++d) {
      const bool reverse = d == 1;
      const int64_t k = layer * directions() + d, last = reverse ? 0 : T - 1;
      const Tensor w_ih = weight("weight_ih", layer, reverse), w_hh = weight("weight_hh", layer, reverse);
      const Tensor b_ih = weight("bias_ih", layer, reverse), b_hh = weight("bias_hh", layer, reverse);
      Tensor seq;
      switch (kind_) {
        case CellKind::rnn_tanh:
        case CellKind::rnn_relu:
          seq = rnn_layer(x, initial(h0, k), w_ih, w_hh, b_ih, b_hh, kind_ == CellKind::rnn_relu, reverse);
          break;
        case CellKind::gru:
        case CellKind::gru_pytorch:
          seq = gru_layer(x, initial(h0, k), w_ih, w_hh, b_ih, b_hh,
                          kind_ == CellKind::gru ? GRUVariant::classic : GRUVariant::pytorch, reverse);
          break;
        case CellKind::lstm: {
          const Tensor both = lstm_layer(x, initial(h0, k), initial(c0, k), w_ih, w_hh, b_ih, b_hh, reverse);
          seq = narrow(both, 2, 0, hidden_);  // (T,B,H): h at every step
          c_n.push_back(squeeze(narrow(narrow(both, 2, hidden_, hidden_), 0, last, 1), 0));
          break;
        }
      }
      h_n.push_back(squeeze(narrow(seq, 0, last, 1), 0));  // the state after the whole sequence
      halves.push_back(seq);
    }
    x = halves.size() == 1 ? halves[0] : concat(halves, 2);
    if (layer + 1 < options_.num_layers) x = dropout(x, options_.dropout, is_training(), dropout_gen_);
  }
  RecurrentOutput out{options_.batch_first ? transpose(x, 0, 1) : x, stack(h_n), Tensor()};
  if (kind_ == CellKind::lstm) out.c_n = stack(c_n);
  return out;
}

std::string Recurrent::describe() const {
  return cat(input_, ", ", hidden_, ", num_layers=", options_.num_layers, options_.bidirectional ? ", bidirectional" : "",
             options_.dropout > 0 ? cat(", dropout=", options_.dropout) : "", options_.batch_first ? ", batch_first" : "",
             kind_ == CellKind::rnn_relu ? ", relu" : "", kind_ == CellKind::gru_pytorch ? ", pytorch variant" : "");
}

}  // namespace ladder::nn
