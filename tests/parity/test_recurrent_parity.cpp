// nn::LSTM and nn::GRU (2 layers, bidirectional) against torch.nn.LSTM and torch.nn.GRU with the
// same weights: outputs, final states and gradients. Golden values: tests/parity/golden/lstm.json
// and gru.json (bench/pytorch/golden_recurrent.py).
#include "helpers.h"
#include "parity/golden.h"

#include "nn/recurrent.h"

using namespace ladder;
using namespace ladder::testing;

namespace {

Tensor golden_tensor(const nlohmann::json& g, const char* name, const Shape& shape) {
  return tensor(g[name].get<std::vector<float>>(), shape);
}

// Loads PyTorch's weights by name (weight_ih_l0, ..., bias_hh_l1_reverse), runs the module from the
// golden initial states, then checks outputs, final states and every gradient of the golden loss.
void check_module(nn::Recurrent& net, const nlohmann::json& g) {
  const int64_t T = g["sizes"]["T"], B = g["sizes"]["B"], I = g["sizes"]["I"], H = g["sizes"]["H"];
  const bool lstm = g.contains("c0");
  std::map<std::string, Tensor> weights;
  for (const nn::NamedParameter& p : net.named_parameters()) weights[p.name] = golden_tensor(g["weights"], p.name.c_str(), p.tensor.shape());
  net.load_state_dict(weights);

  Tensor x = golden_tensor(g, "x", {T, B, I}), h0 = golden_tensor(g, "h0", {4, B, H});
  Tensor c0 = lstm ? golden_tensor(g, "c0", {4, B, H}) : Tensor();
  for (Tensor* t : {&x, &h0, &c0})
    if (t->defined()) t->requires_grad_();
  const nn::RecurrentOutput out = net.forward(x, h0, c0);
  check_golden(out.output, g["output"], "output", 1e-5f);
  check_golden(out.h_n, g["h_n"], "h_n", 1e-5f);
  Tensor loss = sum(out.output * golden_tensor(g, "w_out", out.output.shape())) + sum(out.h_n * golden_tensor(g, "w_h_n", out.h_n.shape()));
  if (lstm) {
    check_golden(out.c_n, g["c_n"], "c_n", 1e-5f);
    loss = loss + sum(out.c_n * golden_tensor(g, "w_c_n", out.c_n.shape()));
  }
  loss.backward();
  check_golden(x.grad(), g["grad"]["x"], "dL/dx", 1e-5f);
  check_golden(h0.grad(), g["grad"]["h0"], "dL/dh0", 1e-5f);
  if (lstm) check_golden(c0.grad(), g["grad"]["c0"], "dL/dc0", 1e-5f);
  for (const nn::NamedParameter& p : net.named_parameters()) check_golden(p.tensor.grad(), g["grad"][p.name], "dL/d" + p.name, 1e-5f);
}

}  // namespace

TEST_CASE("a 2-layer bidirectional LSTM matches PyTorch: outputs, final states, gradients") {
  const nlohmann::json g = read_golden("lstm.json");
  nn::LSTM lstm(g["sizes"]["I"], g["sizes"]["H"], {.num_layers = 2, .bidirectional = true});
  check_module(lstm, g);
}

TEST_CASE("a 2-layer bidirectional GRU, PyTorch's variant, matches PyTorch: outputs, final states, gradients") {
  const nlohmann::json g = read_golden("gru.json");
  nn::GRU gru(g["sizes"]["I"], g["sizes"]["H"], {.num_layers = 2, .bidirectional = true}, GRUVariant::pytorch);
  check_module(gru, g);
}
