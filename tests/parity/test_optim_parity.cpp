// Adam and AdamW against PyTorch: the same gradients, the parameters after every step.
// Golden values: tests/parity/golden/optim.json, written by bench/pytorch/golden_optim.py.
#include "helpers.h"
#include "parity/golden.h"

#include "optim/adam.h"

using namespace ladder;
using namespace ladder::optim;
using namespace ladder::testing;

TEST_CASE("Adam, Adam with L2 decay and AdamW follow PyTorch step for step") {
  const nlohmann::json golden = read_golden("optim.json");
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
      for (auto& [name, p] : params)
        check_golden(p, c["params"][step][name], which + " step " + std::to_string(step) + " " + name, 1e-6f);
    }
  }
}
