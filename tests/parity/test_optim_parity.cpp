// Adam and AdamW against PyTorch: the same gradients, the parameters after every step.
// Golden values: tests/parity/golden/optim.json, written by bench/pytorch/golden_optim.py.
#include "helpers.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "optim/adam.h"

using namespace ladder;
using namespace ladder::optim;

TEST_CASE("Adam, Adam with L2 decay and AdamW follow PyTorch step for step") {
  std::ifstream file(std::string(LADDER_SOURCE_DIR) + "/tests/parity/golden/optim.json");
  REQUIRE(file.good());
  const nlohmann::json golden = nlohmann::json::parse(file);
  for (const std::string which : {"adam", "adam_l2", "adamw"}) {
    CAPTURE(which);
    const nlohmann::json& c = golden["cases"][which];
    std::map<std::string, Tensor> params;
    std::vector<nn::NamedParameter> named;
    for (const std::string name : {"weight", "bias"}) {
      params[name] = tensor(golden["initial"][name].get<std::vector<float>>(), golden["shapes"][name].get<Shape>());
      params[name].requires_grad_();
      named.push_back({name, params[name], nn::ParamKind::weight});
    }
    const nlohmann::json& o = c["options"];
    const AdamOptions options{.lr = o["lr"].get<float>(), .beta1 = o["betas"][0].get<float>(), .beta2 = o["betas"][1].get<float>(),
                              .eps = o["eps"].get<float>(), .weight_decay = o["weight_decay"].get<float>()};
    std::unique_ptr<Optimizer> opt = which == "adamw" ? std::unique_ptr<Optimizer>(new AdamW(named, options))
                                                      : std::unique_ptr<Optimizer>(new Adam(named, options));
    for (size_t step = 0; step < c["params"].size(); ++step) {
      for (auto& [name, p] : params) p.set_grad(tensor(golden["grads"][step][name].get<std::vector<float>>(), p.shape()));
      opt->step();
      for (auto& [name, p] : params) {
        const std::vector<float> expected = c["params"][step][name].get<std::vector<float>>();
        for (size_t i = 0; i < expected.size(); ++i)
          CHECK_MESSAGE(std::fabs(p.data()[i] - expected[i]) <= 1e-6f * std::max(1.0f, std::fabs(expected[i])),
                        which, " step ", step, " ", name, "[", i, "]: ", p.data()[i], " vs PyTorch ", expected[i]);
      }
    }
  }
}
