// Transformer-VQ as an attention kind (nn/attention/vq_attention.h): attend equals the quadratic
// vq_attention_naive over the same codes (values and gradients), a gradient check that reaches the
// cache, padding after the real keys (left out of the commitment loss and the EMA), the codebook
// goes through a checkpoint, the EMA step happens once per after_optimizer_step in training and
// never in eval, a forward that returns its weights records too, the commitment loss reaches the key
// projection (and only it) through auxiliary_loss, and the errors. The interface's other promises
// (implied matrix, stepping, causality, gradient check, large inputs): tests/nn/test_attention_kinds.cpp.
#include "helpers.h"

#include <filesystem>
#include <string>
#include <unistd.h>

#include "core/gradcheck.h"
#include "io/checkpoint.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/multihead_attention.h"
#include "nn/attention/vq_attention.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::check_agree;
using ladder::testing::check_error;
using ladder::testing::check_runs_agree;
using ladder::testing::max_abs;
using ladder::testing::run_attention;

namespace {

struct Heads {
  Tensor q, k, v, gout;
};

Heads random_heads(int64_t B, int64_t H, int64_t T, int64_t D, uint64_t seed) {
  Generator gen(seed);
  return {randn({B, H, T, D}, gen), randn({B, H, T, D}, gen), randn({B, H, T, D}, gen), randn({B, H, T, D}, gen)};
}

std::shared_ptr<VQAttention> vq_kind(int64_t H, int64_t D, int64_t block, int64_t codes, uint64_t seed = 1) {
  Generator gen(seed);
  AttentionSettings settings = vq_attention_settings(block, codes);
  settings.heads = H, settings.head_dim = D;
  return std::make_shared<VQAttention>(settings, gen);
}

}  // namespace

TEST_CASE("attend equals vq_attention_naive over the same codes, values and gradients") {
  const int64_t H = 2, D = 5, T = 37, L = 6;  // 6 full blocks and a short one: most queries read the cache
  const auto kind = vq_kind(H, D, L, 7);
  const Heads h = random_heads(2, H, T, D, 2);
  const auto attend = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    return kind->attend(q, k, v, {.causal = true});
  };
  const auto naive = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    const QuantizedKeys keys = kind->quantizer->assign(k);
    return vq_attention_naive(q, keys.keys, keys.indices, kind->quantizer->codes, v, {.block = L});
  };
  check_runs_agree(run_attention(attend, h.q, h.k, h.v, h.gout), run_attention(naive, h.q, h.k, h.v, h.gout));
  // And the keys attend really did round: every one sits on a code, so the output differs from
  // softmax attention over the raw keys.
  const Tensor raw = scaled_dot_product_attention(h.q, h.k, h.v, {.causal = true});
  CHECK(max_abs(attend(h.q, h.k, h.v) - raw) > 0.01f);
}

TEST_CASE("a gradient check through the kind, with queries that read the cache and suffix padding") {
  // T = 7 in blocks of 2: from position 4 on, queries read older keys through their codes. The keys
  // stay constant: they round to codes, so their numeric gradient is 0 where the estimator passes one.
  const auto kind = vq_kind(2, 3, 2, 4);
  Generator gen(12);
  std::vector<Tensor> inputs{randn({2, 2, 7, 3}, gen), randn({2, 2, 7, 3}, gen)};
  for (Tensor& x : inputs) x.requires_grad_();
  const Tensor k = randn({2, 2, 7, 3}, gen);
  Tensor mask = ones({2, 7});
  mask.data()[7 + 6] = 0;
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& x) {
        return kind->attend(x[0], k, x[1], {.causal = true, .key_padding_mask = mask});
      },
      inputs);
  CHECK_MESSAGE(r.ok, r.worst);
}

TEST_CASE("padding after the real keys: the real rows, the commitment loss and the EMA step are the unpadded sequence's") {
  const auto padded = vq_kind(1, 4, 3, 5), alone = vq_kind(1, 4, 3, 5);  // one seed: the same codebook
  const Heads h = random_heads(1, 1, 10, 4, 3);
  Tensor mask = ones({1, 10});
  for (int64_t j = 6; j < 10; ++j) mask.data()[j] = 0;  // 6 real keys, then padding
  const auto real = [](const Tensor& x) { return narrow(x, 2, 0, 6); };
  const Tensor out = padded->attend(h.q, h.k, h.v, {.causal = true, .key_padding_mask = mask});
  check_agree(real(out), alone->attend(real(h.q), real(h.k), real(h.v), {.causal = true}), "real rows");
  CHECK(padded->auxiliary_loss().item() == doctest::Approx(alone->auxiliary_loss().item()).epsilon(1e-6));
  padded->after_optimizer_step();
  alone->after_optimizer_step();
  check_agree(padded->quantizer->counts, alone->quantizer->counts, "counts");
  check_agree(padded->quantizer->sums, alone->quantizer->sums, "sums");
}

TEST_CASE("the codebook goes through a checkpoint with the layer") {
  const auto trained = vq_kind(2, 3, 4, 6, 1);
  const Heads h = random_heads(1, 2, 20, 3, 4);
  for (int step = 0; step < 3; ++step) {  // move the codes away from their initial draw
    trained->attend(h.q, h.k, h.v, {.causal = true});
    trained->after_optimizer_step();
  }
  std::vector<std::string> names;
  for (const auto& [name, buffer] : trained->named_buffers()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"quantizer.sums", "quantizer.counts", "quantizer.codes"});
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ladder_vq_kind_" + std::to_string(getpid()) + ".safetensors"))
          .string();
  io::save_module(path, *trained);
  const auto loaded = vq_kind(2, 3, 4, 6, 99);  // other initial codes ...
  CHECK(loaded->quantizer->codes.to_vector() != trained->quantizer->codes.to_vector());
  io::load_module(path, *loaded);  // ... replaced by the saved ones
  std::filesystem::remove(path);
  CHECK(loaded->quantizer->codes.to_vector() == trained->quantizer->codes.to_vector());
  CHECK(loaded->quantizer->counts.to_vector() == trained->quantizer->counts.to_vector());
  CHECK(max_abs(loaded->attend(h.q, h.k, h.v, {.causal = true}) - trained->attend(h.q, h.k, h.v, {.causal = true})) ==
        0);
}

TEST_CASE("the EMA step happens once per after_optimizer_step in training, never in eval") {
  const auto kind = vq_kind(2, 4, 4, 6);
  const Heads h = random_heads(2, 2, 16, 4, 5);
  const auto counts = [&] { return kind->quantizer->counts.to_vector(); };
  const std::vector<float> initial = counts();
  kind->after_optimizer_step();  // no forward yet: nothing to apply
  CHECK(counts() == initial);
  {
    EvalModeGuard eval(*kind);
    kind->attend(h.q, h.k, h.v, {.causal = true});
    kind->implied_weights(h.q, h.k, {.causal = true});
    kind->after_optimizer_step();
    CHECK(counts() == initial);
    CHECK_FALSE(kind->auxiliary_loss().defined());
  }
  // step is for generation: it records nothing, in training mode too.
  kind->step(h.q, h.k, h.v, *kind->start());
  kind->after_optimizer_step();
  CHECK(counts() == initial);
  kind->attend(h.q, h.k, h.v, {.causal = true});
  CHECK(kind->auxiliary_loss().defined());
  kind->after_optimizer_step();
  const std::vector<float> once = counts();
  CHECK(once != initial);
  // gamma 0.99: each count moved 1% of the way to this step's share, and the 64 keys of each head
  // all count: the counts of a head sum to 0.99 * 6 + 0.01 * 32 (16 positions, 2 sequences).
  for (int64_t head = 0; head < 2; ++head) {
    float total = 0;
    for (int64_t s = 0; s < 6; ++s) total += once[static_cast<size_t>(head * 6 + s)];
    CHECK(total == doctest::Approx(0.99 * 6 + 0.01 * 32).epsilon(1e-5));
  }
  kind->after_optimizer_step();
  CHECK(counts() == once);
}

TEST_CASE("a training forward that returns its weights records as attend does") {
  const auto attended = vq_kind(2, 4, 4, 6), weighed = vq_kind(2, 4, 4, 6);
  const Heads h = random_heads(2, 2, 16, 4, 5);
  attended->attend(h.q, h.k, h.v, {.causal = true});
  weighed->implied_weights(h.q, h.k, {.causal = true});  // MultiheadAttention's path with weights
  CHECK(weighed->auxiliary_loss().item() == attended->auxiliary_loss().item());
  attended->after_optimizer_step();
  weighed->after_optimizer_step();
  CHECK(weighed->quantizer->counts.to_vector() == attended->quantizer->counts.to_vector());
  CHECK(weighed->quantizer->counts.to_vector() != vq_kind(2, 4, 4, 6)->quantizer->counts.to_vector());
}

TEST_CASE("the commitment loss reaches the key projection through auxiliary_loss, and nothing else") {
  Generator gen(7);
  MultiheadAttention mha(8, 2, {.attention = vq_attention_settings(2, 4)}, gen);
  const Tensor x = randn({2, 6, 8}, gen);
  mha.forward(x, x, x, {.causal = true});
  const Tensor aux = mha.auxiliary_loss();
  REQUIRE(aux.defined());
  CHECK(aux.item() > 0);
  aux.backward();
  // in_proj_weight rows: queries [0, 8), keys [8, 16), values [16, 24).
  const Tensor grad = mha.in_proj_weight.grad();
  CHECK(max_abs(narrow(grad, 0, 8, 8)) > 0);
  CHECK(max_abs(narrow(grad, 0, 0, 8)) == 0);
  CHECK(max_abs(narrow(grad, 0, 16, 8)) == 0);
  CHECK_FALSE(mha.out_proj->weight.grad().defined());
}

TEST_CASE("VQAttention's errors name the setting, the values and the fix") {
  check_error([] { make_attention({.kind = VQAttention::kName}); },
              {"VQAttention", "heads = 0 and head_dim = 0", "MultiheadAttention does"});
  check_error([] { make_attention({.kind = VQAttention::kName, .values = {{"block", 0}}, .heads = 1, .head_dim = 2}); },
              {"vq attention", "block must be >= 1, got 0"});
  check_error([] { make_attention({.kind = VQAttention::kName, .values = {{"codes", 0}}, .heads = 1, .head_dim = 2}); },
              {"vq attention", "codes must be >= 1, got 0"});
  const auto kind = vq_kind(1, 3, 2, 4);
  const Heads h = random_heads(2, 1, 6, 3, 8);
  check_error([&] { kind->attend(h.q, h.k, h.v, {}); },
              {"VQAttention", "causal only", "causal = true", "another attention kind"});
  check_error([&] { kind->implied_weights(h.q, h.k, {}); }, {"VQAttention", "causal only"});
  check_error([&] { kind->attend(narrow(h.q, 2, 0, 4), h.k, h.v, {.causal = true}); },
              {"VQAttention", "need T = S", "(2,1,4,3)", "(2,1,6,3)", "full attention for cross attention"});
  check_error([&] { kind->attend(h.q, h.k, h.v, {.causal = true, .causal_offset = 2}); },
              {"causal_offset 2 is not supported", "start() and step()"});
  Tensor holes = ones({2, 6});
  holes.data()[6 + 1] = 0;  // row 1: padding at 1, a real key at 2
  check_error([&] { kind->attend(h.q, h.k, h.v, {.causal = true, .key_padding_mask = holes}); },
              {"row 1 of key_padding_mask has a real key at position 2 after padding at 1", "pad at the end"});
  check_error([&] { kind->attend(h.q, h.k, h.v, {.causal = true, .key_padding_mask = ones({2, 5})}); },
              {"key_padding_mask must be (B,S) = (2,6)", "(2,5)"});
  check_error([&] { kind->attend(h.q, h.k, narrow(h.v, 3, 0, 2), {.causal = true}); },
              {"vq_attention", "v must have q's shape"});
  check_error([&] { kind->attend(random_heads(1, 2, 6, 3, 9).q, random_heads(1, 2, 6, 3, 9).k, h.v, {.causal = true}); },
              {"VectorQuantizer.quantize", "H = 1 and d = 3", "(1,2,6,3)"});
  // States: of another kind, or of a VQ layer with another block or codebook.
  LinearAttention linear({.kind = LinearAttention::kName});
  check_error([&] { kind->step(h.q, h.k, h.v, *linear.start()); },
              {"VQAttention::step", "started by another attention kind"});
  const auto other = vq_kind(1, 3, 3, 4);
  check_error([&] { kind->step(h.q, h.k, h.v, *other->start()); },
              {"VQAttention::step", "block 3 and 4 codes", "this layer has block 2 and 4 codes", "start() a state"});
}
