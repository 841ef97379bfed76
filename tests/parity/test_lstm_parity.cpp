// nn::LSTM (2 layers, bidirectional) against torch.nn.LSTM with the same weights: outputs, final
// states and gradients. Golden values: tests/parity/golden/lstm.json (bench/pytorch/golden_lstm.py).
#include "helpers.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "nn/recurrent.h"

using namespace ladder;

namespace {

void check_against(const Tensor& t, const nlohmann::json& expected, const std::string& what, float tol) {
  const std::vector<float> e = expected.get<std::vector<float>>();
  REQUIRE(static_cast<size_t>(t.numel()) == e.size());
  float worst = 0;
  for (size_t i = 0; i < e.size(); ++i) worst = std::max(worst, std::fabs(t.data()[i] - e[i]) / std::max(1.0f, std::fabs(e[i])));
  CHECK_MESSAGE(worst <= tol, what, ": largest difference ", worst);
}

}  // namespace

TEST_CASE("a 2-layer bidirectional LSTM matches PyTorch: outputs, final states, gradients") {
  std::ifstream file(std::string(LADDER_SOURCE_DIR) + "/tests/parity/golden/lstm.json");
  REQUIRE(file.good());
  const nlohmann::json g = nlohmann::json::parse(file);
  const int64_t T = g["sizes"]["T"], B = g["sizes"]["B"], I = g["sizes"]["I"], H = g["sizes"]["H"];
  nn::LSTM lstm(I, H, {.num_layers = 2, .bidirectional = true});
  std::map<std::string, Tensor> weights;
  for (const nn::NamedParameter& p : lstm.named_parameters())
    weights[p.name] = tensor(g["weights"][p.name].get<std::vector<float>>(), p.tensor.shape());
  lstm.load_state_dict(weights);  // PyTorch's names: weight_ih_l0, ..., bias_hh_l1_reverse

  Tensor x = tensor(g["x"].get<std::vector<float>>(), {T, B, I});
  Tensor h0 = tensor(g["h0"].get<std::vector<float>>(), {4, B, H}), c0 = tensor(g["c0"].get<std::vector<float>>(), {4, B, H});
  for (Tensor* t : {&x, &h0, &c0}) t->requires_grad_();
  const nn::RecurrentOutput out = lstm.forward(x, h0, c0);
  check_against(out.output, g["output"], "output", 1e-5f);
  check_against(out.h_n, g["h_n"], "h_n", 1e-5f);
  check_against(out.c_n, g["c_n"], "c_n", 1e-5f);

  const Tensor loss = sum(out.output * tensor(g["w_out"].get<std::vector<float>>(), out.output.shape())) +
                      sum(out.h_n * tensor(g["w_h"].get<std::vector<float>>(), out.h_n.shape())) +
                      sum(out.c_n * tensor(g["w_c"].get<std::vector<float>>(), out.c_n.shape()));
  loss.backward();
  check_against(x.grad(), g["grad"]["x"], "dL/dx", 1e-5f);
  check_against(h0.grad(), g["grad"]["h0"], "dL/dh0", 1e-5f);
  check_against(c0.grad(), g["grad"]["c0"], "dL/dc0", 1e-5f);
  for (const nn::NamedParameter& p : lstm.named_parameters()) check_against(p.tensor.grad(), g["grad"][p.name], "dL/d" + p.name, 1e-5f);
}
