// Module: registration, dotted names, train/eval, zero_grad, the training hooks (auxiliary_loss,
// after_optimizer_step), state dicts and the printed summary.
#include "helpers.h"

#include "nn/activation.h"
#include "nn/conv.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/norm.h"
#include "nn/sequential.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_error;

namespace {

// A small model with a nested child, a buffer (through BatchNorm) and every parameter kind.
class TinyNet : public Module {
 public:
  TinyNet() : Module("TinyNet") {
    embed = register_module("embed", std::make_shared<Embedding>(5, 4));
    body = register_module("body", std::make_shared<Sequential>(
                                       std::initializer_list<std::shared_ptr<Module>>{std::make_shared<Linear>(4, 3),
                                                                                      std::make_shared<BatchNorm1d>(3)}));
    scale = register_parameter("scale", ones({1}));
  }
  Tensor forward(const Tensor& ids) override { return (*body)(sum((*embed)(ids), {1})) * scale; }
  std::shared_ptr<Embedding> embed;
  std::shared_ptr<Sequential> body;
  Tensor scale;
};

// Records w * x as an auxiliary loss on each forward and counts its optimiser steps; `inner` is a
// child of the same kind, so that the hooks must walk the tree.
class Recorder : public Module {
 public:
  explicit Recorder(bool with_child) : Module("Recorder") {
    w = register_parameter("w", full({1}, 2.0f));
    if (with_child) inner = register_module("inner", std::make_shared<Recorder>(false));
  }
  Tensor forward(const Tensor& x) override {
    record_auxiliary_loss(sum(w * x));
    return inner ? inner->forward(x) : x;
  }
  void record(const Tensor& x) { record_auxiliary_loss(x); }
  std::shared_ptr<Recorder> inner;
  Tensor w;
  int steps = 0;

 protected:
  void apply_optimizer_step() override { ++steps; }
};

}  // namespace

TEST_CASE("auxiliary_loss sums what training-mode forwards recorded over the tree, until the step") {
  Recorder outer(true);
  CHECK_FALSE(outer.auxiliary_loss().defined());
  const Tensor loss = full({}, 1.0f);
  CHECK(with_auxiliary_loss(outer, loss).item() == 1.0f);  // nothing recorded: the loss alone
  outer.forward(full({}, 3.0f));  // outer and inner each record 2 * 3
  outer.forward(full({}, 1.0f));  // and 2 * 1 more: accumulation adds up
  CHECK(outer.auxiliary_loss().item() == 16.0f);
  CHECK(outer.inner->auxiliary_loss().item() == 8.0f);
  {
    EvalModeGuard eval(outer);
    outer.forward(full({}, 5.0f));
    CHECK(outer.auxiliary_loss().item() == 16.0f);  // eval records nothing
  }
  const Tensor total = with_auxiliary_loss(outer, loss);  // takes what was recorded
  CHECK(total.item() == 17.0f);
  CHECK_FALSE(outer.auxiliary_loss().defined());
  total.backward();  // the recorded losses kept their graphs: d/dw = 3 + 1
  CHECK(outer.w.grad().item() == 4.0f);
  CHECK(outer.inner->w.grad().item() == 4.0f);
  outer.forward(full({}, 2.0f));
  outer.after_optimizer_step();  // forgets a loss nobody took
  CHECK_FALSE(outer.auxiliary_loss().defined());
}

TEST_CASE("gradient accumulation: a backward per forward, then one step") {
  Recorder outer(true);
  for (const float x : {3.0f, 1.0f}) {
    outer.forward(full({}, x));
    // Each backward goes through its own forward's graph only (the previous one is freed).
    with_auxiliary_loss(outer, full({}, 0.0f)).backward();
  }
  CHECK(outer.w.grad().item() == 4.0f);  // d/dw of 3w and of 1w, accumulated
  CHECK(outer.inner->w.grad().item() == 4.0f);
  outer.after_optimizer_step();
  CHECK(outer.steps == 1);
}

TEST_CASE("after_optimizer_step walks the tree once per call") {
  Recorder outer(true);
  outer.after_optimizer_step();
  outer.after_optimizer_step();
  CHECK(outer.steps == 2);
  CHECK(outer.inner->steps == 2);
}

TEST_CASE("an auxiliary loss must be one number") {
  Recorder r(false);
  check_error([&] { r.record(ones({2, 3})); }, {"Recorder", "an auxiliary loss must be one number", "(2,3)"});
}

TEST_CASE("named_parameters walks the tree with dotted names and kinds") {
  TinyNet net;
  std::vector<std::string> names;
  std::vector<ParamKind> kinds;
  for (const NamedParameter& p : net.named_parameters()) {
    names.push_back(p.name);
    kinds.push_back(p.kind);
    CHECK(p.tensor.requires_grad());
    CHECK(p.tensor.is_leaf());
  }
  CHECK(names == std::vector<std::string>{"scale", "embed.weight", "body.0.weight", "body.0.bias", "body.1.weight", "body.1.bias"});
  CHECK(kinds == std::vector<ParamKind>{ParamKind::weight, ParamKind::embedding, ParamKind::weight, ParamKind::bias,
                                        ParamKind::norm, ParamKind::norm});
  CHECK(net.num_parameters() == 1 + 20 + 12 + 3 + 3 + 3);
  CHECK(net.parameters().size() == 6);
  const auto buffers = net.named_buffers();
  REQUIRE(buffers.size() == 2);
  CHECK(buffers[0].first == "body.1.running_mean");
  CHECK(buffers[1].first == "body.1.running_var");
  CHECK(net.state_dict().size() == 8);
}

TEST_CASE("a registered parameter and the member handle are the same tensor") {
  Linear layer(2, 2);
  layer.named_parameters()[0].tensor.data()[0] = 42;
  CHECK(layer.weight.data()[0] == 42);
}

TEST_CASE("train and eval recurse; zero_grad clears every gradient") {
  TinyNet net;
  CHECK(net.is_training());
  net.eval();
  CHECK(!net.body->is_training());
  CHECK(!(*net.body)[1].is_training());
  net.train();
  CHECK((*net.body)[1].is_training());

  const Tensor loss = sum(net(tensor({0, 1, 2, 3, 4, 0}, {3, 2})));
  loss.backward();
  for (const Tensor& p : net.parameters()) CHECK(p.grad().defined());
  net.zero_grad();
  for (const Tensor& p : net.parameters()) CHECK(!p.grad().defined());
}

TEST_CASE("state_dict round trip, and strict loading names what is wrong") {
  manual_seed(1);
  TinyNet a;
  manual_seed(2);
  TinyNet b;
  CHECK(a.embed->weight.to_vector() != b.embed->weight.to_vector());
  b.load_state_dict(a.state_dict());
  for (const auto& [name, t] : a.state_dict()) CHECK(b.state_dict().at(name).to_vector() == t.to_vector());

  auto state = a.state_dict();
  state.erase("body.0.bias");
  state["extra"] = ones({1});
  check_error([&] { b.load_state_dict(state); }, {"load_state_dict", "missing body.0.bias", "unexpected extra"});
  auto wrong = a.state_dict();
  wrong["scale"] = ones({2});
  check_error([&] { b.load_state_dict(wrong); }, {"'scale' has shape (2) in the checkpoint but (1) in the model"});
}

TEST_CASE("registration errors") {
  struct Twice : Module {
    Twice() : Module("Twice") {
      register_parameter("w", ones({1}));
      register_buffer("w", ones({1}));
    }
  };
  check_error([] { Twice t; }, {"register", "Twice", "'w' is already registered"});
  struct Dotted : Module {
    Dotted() : Module("Dotted") { register_parameter("a.b", ones({1})); }
  };
  check_error([] { Dotted d; }, {"register", "'a.b'", "no '.'"});
  check_error([] { Sequential s{std::make_shared<Linear>(2, 2)}; s.push_back(nullptr); }, {"Sequential", "null"});
}

TEST_CASE("the summary prints the tree with shapes and counts") {
  const auto net = mlp({2, 8, 3}, {.activation = ActivationKind::tanh});
  const std::string s = net->summary();
  CHECK(s == "Sequential()\n"
             "  (0): Linear(in=2, out=8, bias=true)  [weight (8,2), bias (8): 24]\n"
             "  (1): Tanh()\n"
             "  (2): Linear(in=8, out=3, bias=true)  [weight (3,8), bias (3): 27]\n"
             "total parameters: 51\n");
  CHECK(with_commas(1234567) == "1,234,567");
  CHECK(with_commas(-1234) == "-1,234");
  CHECK(with_commas(12) == "12");
}

namespace {

// A block of two parts, as a GPT's or a Transformer's layer is: a container without settings.
struct TwoPartBlock : Module {
  explicit TwoPartBlock(int64_t width) : Module("TwoPartBlock") {
    register_module("inner", std::make_shared<Linear>(width, width));
    register_module("act", std::make_shared<Tanh>());
  }
};

// A model with settings: an input layer, a Sequential of blocks, and an output layer.
struct BlockModel : Module {
  BlockModel() : Module("BlockModel") {
    register_module("input", std::make_shared<Linear>(2, 4));
    auto body = std::make_shared<Sequential>();
    for (int i = 0; i < 3; ++i) body->push_back(std::make_shared<TwoPartBlock>(4));
    body->push_back(std::make_shared<TwoPartBlock>(4));
    body->push_back(std::make_shared<Tanh>());
    register_module("body", body);
    register_module("output", std::make_shared<Linear>(4, 1));
  }
  std::string describe() const override { return "blocks=4"; }
};

}  // namespace

TEST_CASE("the outline: a line per block, identical neighbours folded, each with the parameters it holds") {
  const BlockModel model;
  CHECK(model.outline() == "BlockModel(blocks=4)\n"
                           "  (input): Linear(in=2, out=4, bias=true)  [12]\n"
                           "  (body): Sequential()\n"
                           "    (0)-(3): 4 x TwoPartBlock() of inner, act  [20 each]\n"
                           "    (4): Tanh()\n"
                           "  (output): Linear(in=4, out=1, bias=true)  [5]\n"
                           "total parameters: 97\n");
  // A Sequential at the top: its layers, a line each, as the summary has them but without shapes.
  CHECK(mlp({2, 8, 3}, {.activation = ActivationKind::tanh})->outline() ==
        "Sequential()\n"
        "  (0): Linear(in=2, out=8, bias=true)  [24]\n"
        "  (1): Tanh()\n"
        "  (2): Linear(in=8, out=3, bias=true)  [27]\n"
        "total parameters: 51\n");
  // Every module is in the summary; the outline is shorter.
  CHECK(model.summary().find("(inner): Linear") != std::string::npos);
  CHECK(model.outline().find("(inner)") == std::string::npos);
}

TEST_CASE("generators(): each module's own, then its children's, so that a checkpoint can keep them all") {
  Generator init(5);
  nn::Sequential plain{std::make_shared<Linear>(2, 2, LinearOptions{}, init)};
  CHECK(plain.generators().empty());
  auto first = std::make_shared<nn::Dropout>(0.5f, init), second = std::make_shared<nn::Dropout>(0.5f, init);
  nn::Sequential model{first, std::make_shared<Linear>(2, 2, LinearOptions{}, init), second};
  const std::vector<Generator*> gens = model.generators();
  REQUIRE(gens.size() == 2);
  // The first is the first dropout layer's: putting back its state gives back its mask.
  const std::string state = gens[0]->state();
  const Tensor x = ones({4, 8});
  const Tensor mask = first->forward(x);
  gens[0]->set_state(state);
  CHECK(ladder::testing::max_abs(first->forward(x) - mask) == 0);
}
