// Core ops against PyTorch, forward and backward: softmax, log_softmax, cross_entropy, layer_norm,
// rms_norm, masked attention, gelu and the reductions, and the gradients that must not be NaN.
// Golden values: tests/parity/golden/core.json, written by bench/pytorch/golden_core.py. Each case
// there has inputs, PyTorch's output, an upstream gradient g and PyTorch's gradients of
// sum(output * g); the case of the same name here computes the output with ladder's ops.
#include "helpers.h"
#include "parity/golden.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>

using namespace ladder;
using namespace ladder::testing;

namespace {

using Inputs = std::map<std::string, Tensor>;
using Run = std::function<Tensor(const Inputs&)>;
using Cases = std::map<std::string, Run>;

// |ours - torch| <= 1e-6 * max(1, |torch|) for every output and gradient element (see check_golden).
constexpr float kTolerance = 1e-6f;

const nlohmann::json& golden() {
  static const nlohmann::json g = read_golden("core.json");
  return g;
}

Tensor golden_tensor(const nlohmann::json& t) { return tensor(golden_values(t["values"]), t["shape"].get<Shape>()); }

// An input the case may leave out (cross_entropy's class weights): undefined when absent.
Tensor optional(const Inputs& in, const std::string& name) { return in.count(name) ? in.at(name) : Tensor(); }

// Runs the case on PyTorch's inputs, checks the output, then backpropagates PyTorch's upstream
// gradient and checks the gradient of every input PyTorch differentiated. Returns the inputs, gradients set.
Inputs check_case(const std::string& name, const Run& run) {
  CAPTURE(name);
  REQUIRE_MESSAGE(golden()["cases"].contains(name), name, " is not in core.json; run bench/pytorch/golden_core.py");
  const nlohmann::json& c = golden()["cases"][name];
  Inputs in;
  for (const auto& [input, t] : c["inputs"].items()) in[input] = golden_tensor(t);
  for (const auto& [input, _] : c["grads"].items()) in.at(input).requires_grad_();
  const Tensor out = run(in);
  CHECK(out.shape() == c["output"]["shape"].get<Shape>());
  check_golden(out, c["output"]["values"], name + " output", kTolerance);
  sum(out * tensor(golden_values(c["upstream"]), out.shape())).backward();
  for (const auto& [input, grad] : c["grads"].items()) {
    REQUIRE_MESSAGE(in.at(input).grad().defined(), name, ": no gradient reached ", input);
    check_golden(in.at(input).grad(), grad, name + " d/d" + input, kTolerance);
  }
  return in;
}

// Masked and ignored positions take no gradient: where PyTorch's is 0 ours must be exactly 0,
// selected away rather than computed as a product with 0.
void check_exact_zeros(const std::string& name, const Run& run) {
  const Inputs in = check_case(name, run);
  for (const auto& [input, grad] : golden()["cases"][name]["grads"].items()) {
    const std::vector<float> expected = golden_values(grad);
    int64_t nonzero = 0;
    for (size_t i = 0; i < expected.size(); ++i) nonzero += expected[i] == 0 && in.at(input).grad().data()[i] != 0;
    CHECK_MESSAGE(nonzero == 0, name, " d/d", input, ": ", nonzero, " positions PyTorch leaves at 0 are not exactly 0");
  }
}

const Cases kSoftmax = {
    {"softmax_last", [](const Inputs& in) { return softmax(in.at("x"), -1); }},
    {"softmax_dim0", [](const Inputs& in) { return softmax(in.at("x"), 0); }},
    {"softmax_dim1", [](const Inputs& in) { return softmax(in.at("x"), 1); }},
    {"log_softmax_last", [](const Inputs& in) { return log_softmax(in.at("x"), -1); }},
    {"log_softmax_dim0", [](const Inputs& in) { return log_softmax(in.at("x"), 0); }},
    {"log_softmax_dim1", [](const Inputs& in) { return log_softmax(in.at("x"), 1); }},
};

Run ce(int64_t ignore_index = -100, Reduction reduction = Reduction::mean) {
  return [=](const Inputs& in) {
    return cross_entropy(in.at("logits"), in.at("targets"),
                         {.weight = optional(in, "weight"), .ignore_index = ignore_index, .reduction = reduction});
  };
}

// ladder has no label smoothing, so there are no cases for it.
const Cases kCrossEntropy = {
    {"cross_entropy_mean", ce()},
    {"cross_entropy_weight", ce()},
    {"cross_entropy_ignore", ce()},
    {"cross_entropy_weight_ignore", ce()},
    {"cross_entropy_ignore_index_3", ce(3)},
    {"cross_entropy_sum", ce(-100, Reduction::sum)},
    {"cross_entropy_none", ce(-100, Reduction::none)},
    {"cross_entropy_btv", ce()},  // logits (B,T,V), targets (B,T)
};

const Cases kLayerNorm = {
    {"layer_norm_last", [](const Inputs& in) { return layer_norm(in.at("x"), {7}); }},
    {"layer_norm_last_affine", [](const Inputs& in) { return layer_norm(in.at("x"), {7}, in.at("weight"), in.at("bias")); }},
    {"layer_norm_last2", [](const Inputs& in) { return layer_norm(in.at("x"), {5, 7}); }},
    {"layer_norm_last2_affine",
     [](const Inputs& in) { return layer_norm(in.at("x"), {5, 7}, in.at("weight"), in.at("bias")); }},
};

// PyTorch 1.13 has no rms_norm: the golden values come from its formula,
// y = x / sqrt(mean(x^2) + 1e-6) * weight with the mean over the normalised dims.
const Cases kRmsNorm = {
    {"rms_norm_last", [](const Inputs& in) { return rms_norm(in.at("x"), {7}, in.at("weight")); }},
    {"rms_norm_last2", [](const Inputs& in) { return rms_norm(in.at("x"), {5, 7}, in.at("weight")); }},
};

// softmax(masked_fill(q k^T / sqrt(d), mask, -inf)) v; with `valid`, the rows it marks 0 are set to 0.
// q, k, v: (B,heads,T,d); mask broadcasts to (B,heads,T,T); valid: (B,1,T,1).
Tensor attention(const Inputs& in) {
  const Tensor& q = in.at("q");
  const Tensor scores = matmul(q, in.at("k"), {.transpose_b = true}) / std::sqrt(static_cast<float>(q.size(-1)));
  Tensor p = softmax(masked_fill(scores, in.at("mask"), -INFINITY), -1);
  if (in.count("valid")) p = where(in.at("valid"), p, scalar(0));
  return matmul(p, in.at("v"));
}

const Cases kGelu = {
    {"gelu", [](const Inputs& in) { return gelu(in.at("x")); }},
    {"gelu_tanh", [](const Inputs& in) { return gelu(in.at("x"), GeluApprox::tanh); }},
};

Cases reductions() {
  using Reduce = Tensor (*)(const Tensor&, const Dims&, bool);
  const std::map<std::string, Reduce> ops = {
      {"sum", [](const Tensor& x, const Dims& d, bool k) { return sum(x, d, k); }},
      {"mean", [](const Tensor& x, const Dims& d, bool k) { return mean(x, d, k); }},
      {"amax", [](const Tensor& x, const Dims& d, bool k) { return amax(x, d, k); }},
      {"logsumexp", [](const Tensor& x, const Dims& d, bool k) { return logsumexp(x, d, k); }},
      {"var", [](const Tensor& x, const Dims& d, bool k) { return var(x, d, k); }},
  };
  const std::map<std::string, Dims> over = {{"last", {-1}}, {"dim0", {0}}, {"all", {}}};
  Cases cases;
  for (const auto& [op, reduce] : ops)
    for (const auto& [where, dims] : over)
      cases[op + "_" + where] = [reduce, dims](const Inputs& in) { return reduce(in.at("x"), dims, false); };
  return cases;
}

// Cases that once gave NaN gradients: PyTorch's gradients here are finite, and 0 at the masked positions.
const Cases kNotNaN = {
    {"where_log_masked_fill",
     [](const Inputs& in) { return where(in.at("mask"), scalar(0), log(masked_fill(in.at("x"), in.at("mask"), 0))); }},
    {"attention_padded", attention},
    {"cross_entropy_all_ignored", ce()},  // the mean loss is NaN, as in PyTorch; the gradient is 0
    {"cross_entropy_all_ignored_sum", ce(-100, Reduction::sum)},
};

void check_all(const Cases& cases) {
  for (const auto& [name, run] : cases) check_case(name, run);
}

}  // namespace

TEST_CASE("softmax and log_softmax over the last, the first and a middle dim match PyTorch") { check_all(kSoftmax); }

TEST_CASE("cross_entropy matches PyTorch: mean, class weights, ignore_index, sum, none, (B,T,V) logits") {
  check_all(kCrossEntropy);
}

TEST_CASE("layer_norm over one and two trailing dims, with and without weight and bias, matches PyTorch") {
  check_all(kLayerNorm);
}

TEST_CASE("rms_norm over one and two trailing dims matches PyTorch's x / sqrt(mean(x^2) + eps) * weight") {
  check_all(kRmsNorm);
}

TEST_CASE("causal attention, softmax(masked_fill(q k^T / sqrt(d), mask, -inf)) v, matches PyTorch") {
  check_case("attention_causal", attention);
}

TEST_CASE("gelu, exact and tanh-approximated, matches PyTorch") { check_all(kGelu); }

TEST_CASE("sum, mean, amax (ties), logsumexp (-inf entries) and var over the last dim, dim 0 and all dims match PyTorch") {
  check_all(reductions());
}

TEST_CASE("masked and all-ignored gradients are PyTorch's: finite, and exactly 0 where nothing flows") {
  for (const auto& [name, run] : kNotNaN) check_exact_zeros(name, run);
}

TEST_CASE("every case in core.json is tested here and every case here is in core.json") {
  std::set<std::string> here = {"attention_causal"};
  for (const Cases& cases : {kSoftmax, kCrossEntropy, kLayerNorm, kRmsNorm, kGelu, reductions(), kNotNaN})
    for (const auto& [name, _] : cases) here.insert(name);
  std::set<std::string> there;
  for (const auto& [name, _] : golden()["cases"].items()) there.insert(name);
  for (const std::string& name : there) CHECK_MESSAGE(here.count(name), name, " in core.json has no test");
  for (const std::string& name : here) CHECK_MESSAGE(there.count(name), name, " has no values in core.json");
}
