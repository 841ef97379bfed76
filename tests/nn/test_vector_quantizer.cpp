// VectorQuantizer: assignments on a hand-made codebook, the straight-through estimator, one EMA
// step against its closed form (once per after_optimizer_step, from training-mode forwards only,
// added up over several forwards), the revival of dead codes, the commitment loss (value, gradient,
// recorded as the auxiliary loss), usage statistics, the checkpoint round trip of the buffers, and
// the error messages.
#include "helpers.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "core/gradcheck.h"
#include "io/checkpoint.h"
#include "nn/vector_quantizer.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::check_tensor;

namespace {

// The codebook holds exactly `codes` (H,S,d), each with count 1.
void set_codebook(VectorQuantizer& vq, const Tensor& codes) {
  vq.sums.copy_(codes);
  vq.counts.fill_(1);
  vq.codes.copy_(codes);
}

// One head, three codes in the plane: (0,0), (4,0), (0,4).
Tensor three_codes() { return tensor({0, 0, 4, 0, 0, 4}, {1, 3, 2}); }

// Four keys (B=2, H=1, T=2): two near (0,0), two near (4,0), none near (0,4).
Tensor four_keys() { return tensor({1, 0, 0, 1, 3, 1, 5, -1}, {2, 1, 2, 2}); }

Tensor leaf(const Tensor& x) {
  Tensor y = x.clone();
  y.requires_grad_();
  return y;
}

}  // namespace

TEST_CASE("quantize gives each key the nearest code of its head, exactly, and the distance to it") {
  VectorQuantizer vq(3, 2, {.heads = 2, .revive_below = 0});
  // Head 0: the three codes above; head 1: (1,1), (-1,-1) and (1,1) again (a tie: the lower index).
  set_codebook(vq, tensor({0, 0, 4, 0, 0, 4, 1, 1, -1, -1, 1, 1}, {2, 3, 2}));
  const QuantizedKeys q = vq.quantize(tensor({0.5f, 3, 3.5f, 0.5f, 0.5f, 0.5f, -3, 0}, {1, 2, 2, 2}));
  // Head 0: (0.5,3) -> (0,4) at 1.25, (3.5,0.5) -> (4,0) at 0.5. Head 1: (0.5,0.5) -> (1,1) at 0.5,
  // (-3,0) -> (-1,-1) at 5.
  CHECK(q.indices == std::vector<int64_t>{2, 1, 0, 1});
  check_tensor(q.keys, {1, 2, 2, 2}, {0, 4, 4, 0, 1, 1, -1, -1}, 0);
  check_tensor(q.distances, {1, 2, 2}, {1.25f, 0.5f, 0.5f, 5.0f}, 1e-6f);
}

TEST_CASE("the straight-through estimator: forward the code exactly, the key gets the gradient unchanged") {
  Generator gen(3);
  VectorQuantizer vq(5, 3, {.heads = 2}, gen);
  const Tensor keys = leaf(randn({2, 2, 4, 3}, gen));
  const QuantizedKeys q = vq.quantize(keys);
  CHECK(q.keys.to_vector() == gather_codes(vq.codes, q.indices, {2, 2, 4}).to_vector());
  const Tensor w = randn(keys.shape(), gen);
  sum(q.keys * w).backward();
  CHECK(keys.grad().to_vector() == w.to_vector());
  // The codebook is state, not a parameter: no gradient reaches it and the optimiser never sees it.
  CHECK(vq.parameters().empty());
  CHECK_FALSE(vq.codes.requires_grad());
  CHECK_FALSE(vq.codes.grad().defined());
}

TEST_CASE("one EMA step equals its closed form, and eval mode leaves the codebook alone") {
  VectorQuantizer vq(3, 2, {.gamma = 0.9f, .revive_below = 0});
  set_codebook(vq, three_codes());
  const Tensor keys = four_keys();
  {
    EvalModeGuard eval(vq);
    REQUIRE(vq.quantize(keys).indices == std::vector<int64_t>{0, 0, 1, 1});
    vq.after_optimizer_step();
    check_tensor(vq.codes, {1, 3, 2}, three_codes().to_vector(), 0);
    check_tensor(vq.counts, {1, 3}, {1, 1, 1}, 0);
  }
  vq.assign(keys);  // records nothing in training mode either
  vq.after_optimizer_step();
  check_tensor(vq.codes, {1, 3, 2}, three_codes().to_vector(), 0);
  check_tensor(vq.counts, {1, 3}, {1, 1, 1}, 0);
  vq.quantize(keys);
  vq.after_optimizer_step();
  // count = 0.9 * 1 + 0.1 * n: n = 2, 2, 0. sum = 0.9 * code + 0.1 * (its keys):
  // (0,0) + 0.1 (1,1); 0.9 (4,0) + 0.1 (8,0); 0.9 (0,4). code = sum / count.
  check_tensor(vq.counts, {1, 3}, {1.1f, 1.1f, 0.9f});
  check_tensor(vq.sums, {1, 3, 2}, {0.1f, 0.1f, 4.4f, 0, 0, 3.6f});
  check_tensor(vq.codes, {1, 3, 2}, {0.1f / 1.1f, 0.1f / 1.1f, 4, 0, 0, 4});
  // Exactly once: a second step with no forward in between changes nothing.
  const std::vector<float> after_one = vq.counts.to_vector();
  vq.after_optimizer_step();
  CHECK(vq.counts.to_vector() == after_one);
}

TEST_CASE("two forwards before one step (accumulation) add their statistics and their losses") {
  VectorQuantizer split(3, 2, {.beta = 0.5f, .gamma = 0.9f, .revive_below = 0});
  VectorQuantizer whole(3, 2, {.beta = 0.5f, .gamma = 0.9f, .revive_below = 0});
  set_codebook(split, three_codes());
  set_codebook(whole, three_codes());
  const Tensor keys = four_keys();  // (2,1,2,2): its two sequences go through `split` one at a time
  const Tensor first = split.quantize(narrow(keys, 0, 0, 1)).commitment;
  const Tensor second = split.quantize(narrow(keys, 0, 1, 1)).commitment;
  CHECK(split.auxiliary_loss().item() == doctest::Approx(first.item() + second.item()));
  whole.quantize(keys);
  split.after_optimizer_step();
  whole.after_optimizer_step();
  check_close(split.counts, whole.counts, 1e-6f, 1e-6f);
  check_close(split.sums, whole.sums, 1e-6f, 1e-6f);
  check_close(split.codes, whole.codes, 1e-6f, 1e-6f);
  CHECK_FALSE(split.auxiliary_loss().defined());  // the step forgot the recorded losses
}

TEST_CASE("the commitment loss is recorded in training mode only, as the auxiliary loss") {
  VectorQuantizer vq(3, 2, {.beta = 0.25f});
  set_codebook(vq, three_codes());
  {
    EvalModeGuard eval(vq);
    vq.quantize(four_keys());
    CHECK_FALSE(vq.auxiliary_loss().defined());
  }
  const Tensor keys = leaf(four_keys());
  const QuantizedKeys q = vq.quantize(keys);
  CHECK(vq.auxiliary_loss().item() == q.commitment.item());
  vq.auxiliary_loss().backward();  // the recorded loss keeps its graph back to the keys
  check_tensor(keys.grad(), {2, 1, 2, 2}, {0.125f, 0, 0, 0.125f, -0.125f, 0.125f, 0.125f, -0.125f});
}

TEST_CASE("the EMA step of several heads and sequences: counts and sums through one-hot products") {
  Generator gen(8);
  const int64_t B = 3, H = 2, T = 5, S = 4, d = 3;
  const float gamma = 0.8f;
  VectorQuantizer vq(S, d, {.heads = H, .gamma = gamma, .revive_below = 0}, gen);
  const Tensor keys = randn({B, H, T, d}, gen);
  const Tensor counts_before = vq.counts.clone(), sums_before = vq.sums.clone();
  const QuantizedKeys q = vq.quantize(keys);
  vq.after_optimizer_step();
  // one_hot (B,H,T,S): n = its sum over B and T; key sums = one_hot^T keys per (b,h), summed over b.
  std::vector<float> index_values(q.indices.begin(), q.indices.end());
  const Tensor chosen = one_hot(tensor(index_values, {B, H, T}), S);
  const Tensor n = sum(chosen, {0, 2});
  const Tensor key_sums = sum(matmul(chosen, keys, {.transpose_a = true}), {0});
  check_close(vq.counts, gamma * counts_before + (1 - gamma) * n, 1e-6f, 1e-6f);
  check_close(vq.sums, gamma * sums_before + (1 - gamma) * key_sums, 1e-6f, 1e-6f);
  check_close(vq.codes, vq.sums / reshape(maximum(vq.counts, full({1}, 0.01f)), {H, S, 1}), 1e-6f, 1e-6f);
}

TEST_CASE("a dead code is revived onto a key of the update, the same one for the same seed") {
  const auto revived_codes = [](uint64_t seed) {
    Generator gen(seed);
    VectorQuantizer vq(3, 2, {.gamma = 0.5f, .revive_below = 0.5f}, gen);
    // Every key is nearest (0,0): codes 1 and 2 get nothing and fall to count 0.5, below half the
    // mean count (0.5 + 0.5 * 4 + 0.5 + 0.5) / 3 = 7/6.
    set_codebook(vq, tensor({0, 0, 10, 10, -10, -10}, {1, 3, 2}));
    const Tensor keys = tensor({0.5f, 0.25f, -1, 0.5f, -0.5f, -1, 0.25f, 2}, {1, 1, 4, 2});
    const QuantizedKeys q = vq.quantize(keys);
    REQUIRE(q.indices == std::vector<int64_t>{0, 0, 0, 0});
    vq.after_optimizer_step();
    check_tensor(vq.counts, {1, 3}, {2.5f, 7.0f / 6, 7.0f / 6});
    CHECK(vq.usage().alive == std::vector<int64_t>{3});
    // Codes 1 and 2 now sit on two different keys (each nearer code 0 than to any other key), so
    // that exactly those two keys take them.
    const QuantizedKeys again = vq.quantize(keys);
    int64_t on_revived = 0;
    for (int64_t t = 0; t < 4; ++t)
      if (again.indices[static_cast<size_t>(t)] != 0) {
        ++on_revived;
        CHECK(again.distances.data()[t] <= 1e-6f);
      }
    CHECK(on_revived == 2);
    // Code 0 took all four keys: 0.5 (0,0) + 0.5 (-0.75,1.75) over count 2.5.
    check_tensor(narrow(vq.codes, 1, 0, 1), {1, 1, 2}, {-0.15f, 0.35f}, 1e-6f);
    return vq.codes.to_vector();
  };
  CHECK(revived_codes(1) == revived_codes(1));
}

TEST_CASE("usage counts the live codes, their perplexity and a histogram of counts") {
  VectorQuantizer vq(4, 2, {.heads = 2, .revive_below = 0.1f});
  vq.counts.copy_(tensor({2, 2, 0, 0, 1, 1, 1, 0.05f}, {2, 4}));
  const CodebookUsage u = vq.usage(4);
  // Head 0: mean 1, codes 2 and 3 below 0.1; two codes used equally: perplexity 2. Head 1: mean
  // 0.7625, code 3 below 0.07625; perplexity exp(entropy of 1,1,1,0.05 / 3.05).
  CHECK(u.alive == std::vector<int64_t>{2, 3});
  CHECK(u.perplexity[0] == doctest::Approx(2.0));
  const double p = 1 / 3.05, r = 0.05 / 3.05;
  CHECK(u.perplexity[1] == doctest::Approx(std::exp(-3 * p * std::log(p) - r * std::log(r))));
  CHECK(u.bin_edges == std::vector<double>{0, 0.5, 1, 1.5, 2});
  CHECK(u.histogram == std::vector<int64_t>{3, 0, 3, 2});  // [0,0.5): 0, 0, 0.05; [1,1.5): 1, 1, 1; the top bin: 2, 2
}

TEST_CASE("the commitment loss: beta * mean |k - code|^2, its gradient reaching the keys only") {
  VectorQuantizer vq(3, 2, {.beta = 0.25f});
  set_codebook(vq, three_codes());
  const Tensor keys = leaf(four_keys());
  const QuantizedKeys q = vq.quantize(keys);
  // |k - code|^2: 1, 1, 2, 2; mean 1.5.
  CHECK(q.commitment.item() == doctest::Approx(0.25 * 1.5));
  q.commitment.backward();
  // d/dk = 2 beta (k - code) / (number of keys) = 0.125 (k - code).
  check_tensor(keys.grad(), {2, 1, 2, 2}, {0.125f, 0, 0, 0.125f, -0.125f, 0.125f, 0.125f, -0.125f});
  // Keys well inside their codes' cells, so that a finite-difference step never changes a code.
  Generator gen(4);
  const Tensor near = leaf(gather_codes(vq.codes, {0, 1, 2, 1, 0, 2}, {1, 1, 6}) + uniform({1, 1, 6, 2}, -1, 1, gen));
  const GradcheckResult r = gradcheck([&](const std::vector<Tensor>& v) { return vq.quantize(v[0]).commitment; }, {near});
  CHECK_MESSAGE(r.ok, r.worst);
}

TEST_CASE("the codebook's buffers go through a checkpoint and come back bit for bit") {
  Generator gen(6);
  VectorQuantizer trained(8, 4, {.heads = 2}, gen);
  const Tensor keys = randn({2, 2, 16, 4}, gen);
  for (int step = 0; step < 3; ++step) {
    trained.quantize(keys);
    trained.after_optimizer_step();
  }
  const auto buffers = trained.named_buffers();
  REQUIRE(buffers.size() == 3);
  CHECK(buffers[0].first == "sums");
  CHECK(buffers[1].first == "counts");
  CHECK(buffers[2].first == "codes");

  const std::string path =
      (std::filesystem::temp_directory_path() / ("ladder_vq_" + std::to_string(getpid()) + ".safetensors")).string();
  io::save_module(path, trained);
  Generator other(99);
  VectorQuantizer loaded(8, 4, {.heads = 2}, other);
  io::load_module(path, loaded);
  std::filesystem::remove(path);
  CHECK(loaded.codes.to_vector() == trained.codes.to_vector());
  CHECK(loaded.counts.to_vector() == trained.counts.to_vector());
  CHECK(loaded.sums.to_vector() == trained.sums.to_vector());
  CHECK(loaded.quantize(keys).indices == trained.quantize(keys).indices);
}

TEST_CASE("VectorQuantizer errors name the setting or the shapes and the fix") {
  check_error([] { VectorQuantizer(0, 4); }, {"VectorQuantizer", "at least one code", "S = 0"});
  check_error([] { VectorQuantizer(4, 0); }, {"width = 0"});
  check_error([] { VectorQuantizer(4, 2, {.heads = 0}); }, {"heads = 0"});
  for (const float gamma : {0.0f, 1.0f, 1.5f, NAN})
    check_error([&] { VectorQuantizer(4, 2, {.gamma = gamma}); }, {"gamma", "(0, 1)", "0.99"});
  check_error([] { VectorQuantizer(4, 2, {.beta = -1}); }, {"beta", ">= 0", "-1"});
  check_error([] { VectorQuantizer(4, 2, {.revive_below = 1}); }, {"revive_below", "[0, 1)"});

  VectorQuantizer vq(4, 2, {.heads = 2});
  check_error([&] { vq.quantize(zeros({1, 2, 3, 5})); },
              {"VectorQuantizer.quantize", "H = 2 and d = 2", "(1,2,3,5)"});
  check_error([&] { vq.quantize(zeros({1, 3, 3, 2})); }, {"(1,3,3,2)"});
  check_error([&] { vq.quantize(zeros({6, 2})); }, {"(B,H,T,d)", "(6,2)"});
  check_error([&] { vq.assign(zeros({1, 2, 3, 5})); }, {"VectorQuantizer.quantize", "(1,2,3,5)"});
  check_error([&] { vq.usage(0); }, {"usage", "bins must be >= 1"});
}
