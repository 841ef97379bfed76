// models::GPT trained 10 steps with AdamW against the same model in PyTorch (nanoGPT's Block written
// out with torch.nn), from the same initial weights on the same batches: the 10 losses within 1e-5
// (they agree to about 5e-7; 1e-4 would not notice GELU's tanh approximation, which moves them by 4e-5).
// Golden values: tests/parity/golden/gpt.json (bench/pytorch/golden_gpt.py).
#include "helpers.h"
#include "parity/golden.h"

#include "models/gpt.h"
#include "optim/adam.h"

using namespace ladder;
using namespace ladder::testing;

TEST_CASE("GPT: 10 AdamW steps give PyTorch's losses") {
  const nlohmann::json g = read_golden("gpt.json");
  const nlohmann::json& c = g["config"];
  models::GPT model({.vocab_size = c["vocab_size"],
                     .block_size = c["block_size"],
                     .n_layer = c["n_layer"],
                     .n_head = c["n_head"],
                     .n_embd = c["n_embd"],
                     .dropout = c["dropout"],
                     .bias = c["bias"],
                     .tie_weights = c["tie_weights"]});
  std::map<std::string, Tensor> state;
  for (const auto& [name, value] : model.state_dict()) {
    REQUIRE_MESSAGE(g["state"].contains(name), "PyTorch has no ", name);
    state[name] = tensor(golden_values(g["state"][name]), value.shape());
  }
  CHECK(state.size() == g["state"].size());  // and PyTorch has nothing ladder lacks
  model.load_state_dict(state);

  const nlohmann::json& o = g["adamw"];
  const float weight_decay = o["weight_decay"];
  const std::vector<optim::ParamGroup> groups = optim::decay_groups(model.named_parameters(), weight_decay);
  std::vector<std::string> decayed;
  for (const optim::ParamGroup& group : groups)
    if (group.weight_decay > 0)
      for (const nn::NamedParameter& p : group.params) decayed.push_back(p.name);
  CHECK(decayed == g["decayed"].get<std::vector<std::string>>());
  optim::AdamW adamw(groups, {.lr = o["lr"], .beta1 = o["betas"][0], .beta2 = o["betas"][1], .eps = o["eps"]});

  const Shape batch_shape = g["batch_shape"].get<Shape>();
  const int64_t T = batch_shape[1] - 1;
  const std::vector<float> expected = golden_values(g["losses"]);
  REQUIRE(expected.size() == 10);
  for (size_t step = 0; step < expected.size(); ++step) {
    const Tensor batch = tensor(golden_values(g["batches"][step]), batch_shape);
    const Tensor loss = cross_entropy(model.forward(narrow(batch, 1, 0, T)), narrow(batch, 1, 1, T));
    adamw.zero_grad();
    loss.backward();
    adamw.step();
    CHECK_MESSAGE(std::fabs(loss.item() - expected[step]) <= 1e-5f, "step ", step, ": loss ", loss.item(),
                  ", PyTorch ", expected[step]);
  }
}
