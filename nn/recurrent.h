// Recurrent networks. The cells take one step and are written with plain ops, formula by formula:
// the version to read, and the reference the fused layers are tested against. The sequence
// modules RNN, GRU and LSTM run whole sequences through the fused layer ops of core/ops.h, with
// several layers, both directions and dropout between layers, under PyTorch's parameter names.
#pragma once

#include <memory>
#include <string>
#include <tuple>

#include "core/ops.h"
#include "nn/module.h"

namespace ladder::nn {

// What the cells and the sequence modules share: one layer's (and direction's) parameters, under
// PyTorch's names and initialisation.
class RecurrentModule : public Module {
 protected:
  using Module::Module;
  // Registers weight_ih{suffix} (G*H, I), weight_hh{suffix} (G*H, H), bias_ih{suffix} and
  // bias_hh{suffix} (G*H), for G = gates blocks of H rows, all drawn from U(-1/sqrt(H), 1/sqrt(H)),
  // and returns them in that order.
  std::tuple<Tensor, Tensor, Tensor, Tensor> register_layer(const std::string& suffix, int64_t gates, int64_t input,
                                                            int64_t hidden, Generator& gen);
};

// ---- cells: x (B,I), h (B,H) ----

class RNNCell : public RecurrentModule {
 public:
  RNNCell(int64_t input, int64_t hidden, bool relu = false, Generator& gen = default_generator());
  // h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)   (relu instead of tanh when asked)
  Tensor forward(const Tensor& x, const Tensor& h);
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;  // (H,I), (H,H), (H), (H)

 private:
  bool relu_;
};

class GRUCell : public RecurrentModule {
 public:
  GRUCell(int64_t input, int64_t hidden, GRUVariant variant = GRUVariant::classic, Generator& gen = default_generator());
  // r = s(x W_ir^T + b_ir + h W_hr^T + b_hr)          reset gate
  // z = s(x W_iz^T + b_iz + h W_hz^T + b_hz)          update gate
  // n = tanh(x W_in^T + b_in + (r * h) W_hn^T + b_hn) candidate (classic: Cho et al., d2l)
  //   = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)) candidate (pytorch: reset after the matmul)
  // h' = z * h + (1 - z) * n
  Tensor forward(const Tensor& x, const Tensor& h);
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;  // (3H,I), (3H,H), (3H), (3H): rows r, z, n

  // The gates of one step, for plotting: r, z, n, each (B,H).
  std::vector<Tensor> gates(const Tensor& x, const Tensor& h);

 private:
  GRUVariant variant_;
};

struct LSTMState {
  Tensor h, c;  // (B,H) each
};

class LSTMCell : public RecurrentModule {
 public:
  LSTMCell(int64_t input, int64_t hidden, Generator& gen = default_generator());
  // [i f g o] = x W_ih^T + b_ih + h W_hh^T + b_hh, then i, f, o through the sigmoid, g through tanh:
  // c' = f * c + i * g,  h' = o * tanh(c')
  LSTMState forward(const Tensor& x, const LSTMState& state);
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;  // (4H,I), (4H,H), (4H), (4H): rows i, f, g, o

  // The gates of one step, for plotting: i, f, g, o, each (B,H).
  std::vector<Tensor> gates(const Tensor& x, const LSTMState& state);
};

// ---- sequence modules ----

struct RecurrentOptions {
  int64_t num_layers = 1;
  bool bidirectional = false;  // each layer also reads the sequence backwards; the two outputs are concatenated
  float dropout = 0;           // on the outputs of every layer but the last, in training (needs num_layers > 1)
  bool batch_first = false;    // input and output (B,T,...) instead of (T,B,...)
};

struct RecurrentOutput {
  Tensor output;  // (T,B,dirs*H), or (B,T,dirs*H) with batch_first: the last layer at every step
  Tensor h_n;     // (layers*dirs, B, H): every layer's final state, forward direction first
  Tensor c_n;     // the same for the LSTM's cell state; undefined for RNN and GRU
};

enum class CellKind { rnn_tanh, rnn_relu, gru, gru_pytorch, lstm };

// One class for the three: the kind picks the fused op and the number of gates.
class Recurrent : public RecurrentModule {
 public:
  Recurrent(CellKind kind, int64_t input, int64_t hidden, RecurrentOptions options, Generator& gen);  // named RNN, GRU or LSTM
  // x as above; h0 (and c0 for the LSTM): (layers*dirs, B, H), zeros when undefined.
  RecurrentOutput forward(const Tensor& x, const Tensor& h0 = {}, const Tensor& c0 = {});
  int64_t hidden_size() const { return hidden_; }
  CellKind kind() const { return kind_; }
  int64_t directions() const { return options_.bidirectional ? 2 : 1; }

  // weight_ih_l{k}[_reverse], weight_hh_l{k}[_reverse], bias_ih_..., bias_hh_..., as PyTorch names them.
  Tensor weight(const char* which, int64_t layer, bool reverse) const;

 protected:
  std::string describe() const override;

 private:
  CellKind kind_;
  int64_t input_, hidden_;
  RecurrentOptions options_;
  Generator dropout_gen_;  // the layer's own, a child of the constructor's generator, as in nn::Dropout
};

struct RNN : Recurrent {
  RNN(int64_t input, int64_t hidden, RecurrentOptions options = {}, bool relu = false, Generator& gen = default_generator())
      : Recurrent(relu ? CellKind::rnn_relu : CellKind::rnn_tanh, input, hidden, options, gen) {}
};
struct GRU : Recurrent {
  GRU(int64_t input, int64_t hidden, RecurrentOptions options = {}, GRUVariant variant = GRUVariant::classic,
      Generator& gen = default_generator())
      : Recurrent(variant == GRUVariant::classic ? CellKind::gru : CellKind::gru_pytorch, input, hidden, options, gen) {}
};
struct LSTM : Recurrent {
  LSTM(int64_t input, int64_t hidden, RecurrentOptions options = {}, Generator& gen = default_generator())
      : Recurrent(CellKind::lstm, input, hidden, options, gen) {}
};

}  // namespace ladder::nn
