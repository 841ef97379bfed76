// Optimizers: the first two updates against hand computation, state save/restore, clipping,
// parameter groups and schedules.
#include "helpers.h"

#include <cmath>

#include "nn/linear.h"
#include "optim/adam.h"
#include "optim/schedule.h"
#include "optim/sgd.h"

using namespace ladder;
using namespace ladder::optim;
using ladder::testing::check_error;
using ladder::testing::check_tensor;

namespace {

// One parameter "p" = [1, -2] whose gradient we set by hand.
struct OneParam {
  Tensor p = tensor({1, -2});
  std::vector<nn::NamedParameter> params() {
    p.requires_grad_();
    return {{"p", p, nn::ParamKind::weight}};
  }
  void set_grad(std::vector<float> g) { p.set_grad(tensor(g)); }
};

}  // namespace

TEST_CASE("SGD: plain, weight decay, momentum with dampening, Nesterov") {
  {
    INFO("plain SGD: the parameter after a step");
    OneParam x;
    SGD opt(x.params(), {.lr = 0.1f});
    x.set_grad({0.5f, 1});
    opt.step();
    check_tensor(x.p, {2}, {1 - 0.05f, -2 - 0.1f});
  }
  {
    INFO("SGD with weight decay 0.1: the parameter after a step");
    OneParam x;  // g' = g + 0.1 p
    SGD opt(x.params(), {.lr = 0.1f, .weight_decay = 0.1f});
    x.set_grad({0.5f, 1});
    opt.step();
    check_tensor(x.p, {2}, {1 - 0.1f * 0.6f, -2 - 0.1f * 0.8f});
  }
  {
    INFO("SGD with momentum 0.9 and dampening 0.5: the parameter after each step");
    OneParam x;  // b1 = g1; b2 = 0.9 b1 + 0.5 g2
    SGD opt(x.params(), {.lr = 0.1f, .momentum = 0.9f, .dampening = 0.5f});
    x.set_grad({1, 2});
    opt.step();
    check_tensor(x.p, {2}, {1 - 0.1f, -2 - 0.2f});
    x.set_grad({1, 0});
    opt.step();
    const float b0 = 0.9f * 1 + 0.5f * 1, b1 = 0.9f * 2 + 0;
    check_tensor(x.p, {2}, {0.9f - 0.1f * b0, -2.2f - 0.1f * b1});
  }
  {
    INFO("SGD with Nesterov momentum 0.9: the parameter after each step");
    OneParam x;  // Nesterov: step with g + 0.9 b
    SGD opt(x.params(), {.lr = 0.1f, .momentum = 0.9f, .nesterov = true});
    x.set_grad({1, 0});
    opt.step();
    check_tensor(x.p, {2}, {1 - 0.1f * 1.9f, -2});
    x.set_grad({1, 0});
    opt.step();
    const float b = 0.9f * 1 + 1;
    check_tensor(x.p, {2}, {1 - 0.19f - 0.1f * (1 + 0.9f * b), -2});
  }
}

TEST_CASE("Adam and AdamW: the first two steps by hand") {
  auto expected = [](float p, float g1, float g2, float wd, bool decoupled) {
    const float lr = 0.1f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    float m = 0, v = 0;
    for (int t = 1; t <= 2; ++t) {
      float g = t == 1 ? g1 : g2;
      if (decoupled) p *= 1 - lr * wd;
      else g += wd * p;
      m = b1 * m + (1 - b1) * g;
      v = b2 * v + (1 - b2) * g * g;
      const float mhat = m / (1 - std::pow(b1, static_cast<float>(t)));
      const float vhat = v / (1 - std::pow(b2, static_cast<float>(t)));
      p -= lr * mhat / (std::sqrt(vhat) + eps);
    }
    return p;
  };
  for (const bool decoupled : {false, true}) {
    INFO((decoupled ? "AdamW" : "Adam with L2"), " (decay 0.2): the parameter after two steps");
    OneParam x;
    const AdamOptions options{.lr = 0.1f, .weight_decay = 0.2f};
    std::unique_ptr<Optimizer> opt =
        decoupled ? std::unique_ptr<Optimizer>(new AdamW(x.params(), options)) : std::make_unique<Adam>(x.params(), options);
    x.set_grad({0.5f, -3});
    opt->step();
    x.set_grad({-1, 4});
    opt->step();
    check_tensor(x.p, {2}, {expected(1, 0.5f, -1, 0.2f, decoupled), expected(-2, -3, 4, 0.2f, decoupled)}, 1e-6f);
  }
  // The first Adam step moves every coordinate by about lr, whatever the gradient's size.
  OneParam x;
  Adam adam(x.params(), {.lr = 0.01f});
  x.set_grad({1e-4f, 1e4f});
  adam.step();
  check_tensor(x.p, {2}, {1 - 0.01f, -2 - 0.01f}, 1e-5f);
}

TEST_CASE("Adam counts steps per parameter: one that joins late gets a full first step") {
  OneParam x, y;
  const auto px = x.params();
  auto py = y.params();
  py[0].name = "q";
  Adam opt({{{px[0], py[0]}}}, {.lr = 0.1f});
  x.set_grad({1, 1});
  opt.step();  // only p has a gradient
  x.set_grad({1, 1});
  y.set_grad({1, 1});
  opt.step();
  // q's first update is its own step 1: after bias correction it moves by lr, like p's first did.
  check_tensor(y.p, {2}, {1 - 0.1f, -2 - 0.1f}, 1e-5f);
  CHECK(opt.state_dict().at("q.step").item() == 1);
  CHECK(opt.state_dict().at("p.step").item() == 2);
}

TEST_CASE("parameters without a gradient are left alone") {
  OneParam x;
  Adam opt(x.params(), {});
  opt.step();
  check_tensor(x.p, {2}, {1, -2});
}

TEST_CASE("optimizer state saves and restores: training continues exactly") {
  auto run = [](bool interrupt) {
    manual_seed(5);
    nn::Linear layer(3, 2);
    auto opt = std::make_unique<AdamW>(layer.named_parameters(), AdamOptions{.lr = 0.05f, .weight_decay = 0.1f});
    const Tensor x = randn({8, 3});
    for (int step = 0; step < 6; ++step) {
      if (interrupt && step == 3) {  // a new optimizer, given the saved state
        const auto state = opt->state_dict();
        opt = std::make_unique<AdamW>(layer.named_parameters(), AdamOptions{.lr = 0.05f, .weight_decay = 0.1f});
        opt->load_state_dict(state);
      }
      opt->zero_grad();
      sum(layer(x) * layer(x)).backward();
      opt->step();
    }
    return std::pair{layer.weight.to_vector(), opt->steps()};
  };
  const auto straight = run(false), resumed = run(true);
  CHECK(straight.first == resumed.first);
  CHECK(resumed.second == 6);
}

TEST_CASE("optimizer state errors") {
  OneParam x;
  Adam opt(x.params(), {});
  x.set_grad({1, 1});
  opt.step();
  auto state = opt.state_dict();
  CHECK(state.count("p.exp_avg"));
  CHECK(state.count("p.exp_avg_sq"));
  CHECK(state.at("step").item() == 1);
  state["q.exp_avg"] = zeros({2});
  check_error([&] { opt.load_state_dict(state); }, {"load_state_dict", "Adam", "'q.exp_avg' belongs to no parameter"});
  state.erase("q.exp_avg");
  state["p.exp_avg"] = zeros({3});
  check_error([&] { opt.load_state_dict(state); }, {"'p.exp_avg' has shape (3) but (2) is expected for parameter 'p'"});
  state["p.exp_avg"] = zeros({2});
  state["p.momentum_buffer"] = zeros({2});
  check_error([&] { opt.load_state_dict(state); }, {"'p.momentum_buffer' is not something Adam keeps", "exp_avg, exp_avg_sq, step",
                                                    "another optimizer"});
  state.erase("p.momentum_buffer");
  state.erase("p.exp_avg_sq");
  check_error([&] { opt.load_state_dict(state); }, {"parameter 'p' has 2 of the 3 state slots", "incomplete"});
  state["p.exp_avg_sq"] = zeros({2});
  state["step"] = scalar(1.5f);
  check_error([&] { opt.load_state_dict(state); }, {"'step' must be a whole number", "1.5"});
  state["step"] = scalar(NAN);
  check_error([&] { opt.load_state_dict(state); }, {"'step' must be a whole number"});
  check_error([&] { opt.set_lr(-1); }, {"Adam", "learning rate", "-1"});
  check_error([] { Adam bad(std::vector<nn::NamedParameter>{}, {}); }, {"Adam", "no parameters"});
  OneParam y;
  const auto params = y.params();
  const std::vector<nn::NamedParameter> same_name = {{"p", ones({1}), nn::ParamKind::weight},
                                                     {"p", ones({1}), nn::ParamKind::weight}};
  check_error([&] { SGD bad(same_name, {}); }, {"SGD", "two different parameters are both named 'p'"});
  check_error([&] { Adam bad(params, {.beta1 = 1}); }, {"Adam", "betas"});
}

TEST_CASE("decay_groups leaves biases, norms and embeddings out of weight decay") {
  const std::vector<nn::NamedParameter> params = {{"w", ones({1}), nn::ParamKind::weight},
                                                  {"b", ones({1}), nn::ParamKind::bias},
                                                  {"ln", ones({1}), nn::ParamKind::norm},
                                                  {"emb", ones({1}), nn::ParamKind::embedding}};
  const auto groups = decay_groups(params, 0.1f);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].weight_decay == 0.1f);
  REQUIRE(groups[0].params.size() == 1);
  CHECK(groups[0].params[0].name == "w");
  CHECK(groups[1].weight_decay == 0);
  CHECK(groups[1].params.size() == 3);
}

TEST_CASE("clip_grad_norm returns the total norm and scales down only when it is too large") {
  Tensor a = tensor({3}), b = tensor({4});
  a.set_grad(tensor({3}));
  b.set_grad(tensor({4}));
  CHECK(clip_grad_norm({a, b}, 10) == doctest::Approx(5));
  {
    INFO("a's gradient clipped to norm 10: the norm, 5, is below, so it stays 3");
    check_tensor(a.grad(), {1}, {3});
  }
  CHECK(clip_grad_norm({a, b}, 1) == doctest::Approx(5));
  INFO("the gradients clipped to norm 1: each scaled by 1/5");
  check_tensor(a.grad(), {1}, {3.0f / 5}, 1e-5f);
  check_tensor(b.grad(), {1}, {4.0f / 5}, 1e-5f);
}

TEST_CASE("learning-rate schedules") {
  CHECK(constant_lr(0.5f)(1000) == 0.5f);
  const Schedule cosine = cosine_lr(1, 10, 110, 0.1f);
  CHECK(cosine(0) == doctest::Approx(0.1));
  CHECK(cosine(9) == doctest::Approx(1));
  CHECK(cosine(10) == doctest::Approx(1));
  CHECK(cosine(60) == doctest::Approx(0.55));
  CHECK(cosine(110) == doctest::Approx(0.1));
  CHECK(cosine(500) == doctest::Approx(0.1));
  check_error([] { cosine_lr(1, 10, 10); }, {"cosine_lr", "warmup < total_steps"});
}
