// Shared parameters (weight tying): one tensor registered in two places is one parameter to list,
// count, step and save, as in PyTorch.
#include <filesystem>

#include "helpers.h"

#include "core/autograd.h"
#include "io/checkpoint.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/sequential.h"
#include "optim/adam.h"
#include "optim/sgd.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_error;
using ladder::testing::check_tensor;

namespace {

// An embedding whose table is also the output layer: logits = embed(ids) W_embed^T.
class TiedLM : public Module {
 public:
  explicit TiedLM(Generator& gen) : Module("TiedLM") {
    embed = register_module("embed", std::make_shared<Embedding>(5, 3, 1.0f, gen));
    head = register_module("head", std::make_shared<Linear>(3, 5, LinearOptions{.bias = false}, gen));
    head->weight = head->share_parameter("weight", embed->weight);
  }
  Tensor forward(const Tensor& ids) override { return (*head)((*embed)(ids)); }
  std::shared_ptr<Embedding> embed;
  std::shared_ptr<Linear> head;
};

}  // namespace

TEST_CASE("the same Linear twice in a Sequential is one parameter, stepped once") {
  auto lin = std::make_shared<Linear>(1, 1, LinearOptions{.bias = false});
  lin->weight.fill_(0.5f);
  Sequential twice({lin, lin});
  const auto params = twice.named_parameters();
  REQUIRE(params.size() == 1);
  CHECK(params[0].name == "0.weight");
  CHECK(twice.num_parameters() == 1);
  CHECK(twice.state_dict().size() == 1);

  // y = w (w x) with w = 0.5, x = 2: dy/dw = 2 w x = 2. One SGD step of lr 0.1 moves w by 0.2 to
  // 0.3 (PyTorch's value); stepping the tensor once per name would move it twice, to 0.1.
  optim::SGD sgd(twice.named_parameters(), {.lr = 0.1f});
  sum(twice(full({1, 1}, 2.0f))).backward();
  check_tensor(lin->weight.grad(), {1, 1}, {2.0f});
  sgd.step();
  check_tensor(lin->weight, {1, 1}, {0.3f});
}

TEST_CASE("a tied embedding and output layer: one parameter, its gradient the sum of both uses") {
  Generator gen(7);
  TiedLM model(gen);
  CHECK(model.head->weight.is_same(model.embed->weight));
  const auto params = model.named_parameters();
  REQUIRE(params.size() == 1);
  CHECK(params[0].name == "embed.weight");
  CHECK(params[0].kind == ParamKind::embedding);  // the first registration's kind
  CHECK(model.num_parameters() == 15);
  const std::string summary = model.summary();
  CHECK(summary.find("weight (5,3) tied to embed.weight") != std::string::npos);
  CHECK(summary.find("total parameters: 15") != std::string::npos);
  CHECK(model.outline().find("[weight tied to embed.weight]") != std::string::npos);  // what the head holds

  // The same model untied, from the same values: the tied gradient is the sum of the two.
  const Tensor ids = tensor({0, 3, 3, 1});
  const Tensor targets = tensor({1, 2, 0, 4});
  Tensor e = model.embed->weight.clone().detach(), h = model.embed->weight.clone().detach();
  e.requires_grad_();
  h.requires_grad_();
  cross_entropy(matmul(embedding(e, ids), h, {.transpose_b = true}), targets).backward();
  cross_entropy(model(ids), targets).backward();
  ladder::testing::check_close(model.embed->weight.grad(), e.grad() + h.grad(), 1e-6f);

  // One Adam step moves the shared table once: by lr * sign(g) on the first step (Adam's first
  // step is lr * g / (|g| + eps)), wherever the gradient is not tiny.
  const Tensor before = model.embed->weight.clone();
  optim::Adam adam(model.named_parameters(), {.lr = 0.01f});
  adam.step();
  const Tensor moved = model.embed->weight - before, g = model.embed->weight.grad();
  for (int64_t i = 0; i < g.numel(); ++i)
    if (std::fabs(g.data()[i]) > 1e-4f) CHECK(std::fabs(moved.data()[i]) == doctest::Approx(0.01f).epsilon(1e-3));
}

TEST_CASE("a tied parameter is saved once and loads into both places") {
  Generator gen(3), other(4);
  TiedLM model(gen), fresh(other);
  const std::string path = (std::filesystem::temp_directory_path() / "ladder_test_tying.safetensors").string();
  io::save_module(path, model);
  const io::TensorFile file = io::load_safetensors(path);
  CHECK(file.tensors.size() == 1);
  CHECK(file.tensors.count("embed.weight") == 1);
  io::load_module(path, fresh);
  check_tensor(fresh.embed->weight, {5, 3}, model.embed->weight.to_vector(), 0);
  CHECK(fresh.head->weight.is_same(fresh.embed->weight));
  std::filesystem::remove(path);
}

TEST_CASE("share_parameter errors") {
  Linear a(3, 5), b(4, 5);
  check_error([&] { a.share_parameter("weights", b.weight); }, {"share_parameter", "no parameter named 'weights'"});
  check_error([&] { a.share_parameter("weight", b.weight); }, {"share_parameter", "(5,3)", "(5,4)"});
  check_error([&] { a.share_parameter("weight", ones({5, 3})); }, {"share_parameter", "only be tied to a parameter"});
}
