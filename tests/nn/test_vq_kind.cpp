// Transformer-VQ as an attention kind (nn/attention/vq_attention.h): attend equals the dense
// vq_attention_naive over the same prepared queries, codes and position terms (values and
// gradients) for every setting, causal and both ways; the normalisation and the sinusoid against
// hand computations; the position bias through its parameters; the stopped gradient reaching the op;
// a gradient check that reaches the cache and the position parameters; padding (hidden from every
// query, left out of the commitment loss and the EMA); the codebook and the positions through a
// checkpoint; the EMA step once per after_optimizer_step in training and never in eval; a forward that
// returns its weights records too; the commitment loss reaches the key projection (and only it); the
// errors. The interface's other promises (implied matrix, stepping, causality, gradient check, large
// inputs): tests/nn/test_attention_kinds.cpp.
#include "helpers.h"

#include <cmath>
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
using ladder::testing::check_close;
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

// The settings a test varies: the paper's (normalise, position bias, exact gradient) by default.
struct Variant {
  bool normalise = true, bias = true, stopped = false;
};

std::string describe(const Variant& v) {
  return std::string(v.normalise ? "normalised" : "raw") + (v.bias ? ", bias" : "") + (v.stopped ? ", stopped" : "");
}

std::shared_ptr<VQAttention> vq_kind(int64_t H, int64_t D, int64_t block, int64_t codes, uint64_t seed = 1,
                                     const Variant& variant = {}) {
  Generator gen(seed);
  AttentionSettings settings{.kind = VQAttention::Settings{.block = block,
                                                            .codes = codes,
                                                            .normalise = variant.normalise,
                                                            .position_bias = variant.bias,
                                                            .cache_gradient = variant.stopped ? VQAttention::kStopped
                                                                                              : VQAttention::kExact},
                             .heads = H,
                             .head_dim = D};
  return std::make_shared<VQAttention>(settings, gen);
}

// Gives the position parameters values away from their start (u and v start at 0).
void move_positions(VQAttention& kind, uint64_t seed) {
  if (!kind.positions) return;
  Generator gen(seed);
  kind.positions->content_bias.copy_(randn(kind.positions->content_bias.shape(), gen));
  kind.positions->position_bias.copy_(randn(kind.positions->position_bias.shape(), gen));
}

std::vector<Variant> every_variant() {
  std::vector<Variant> all;
  for (const bool normalise : {false, true})
    for (const bool bias : {false, true})
      for (const bool stopped : {false, true}) all.push_back({normalise, bias, stopped});
  return all;
}

}  // namespace

TEST_CASE("attend equals the dense vq_attention_naive over what it prepared, for every setting, both ways") {
  const int64_t H = 2, D = 5, T = 37, L = 6;  // 6 full blocks and a short one: most queries read the cache
  for (const Variant& variant : every_variant())
    for (const bool causal : {true, false}) {
      CAPTURE(describe(variant));
      CAPTURE(causal);
      const auto kind = vq_kind(H, D, L, 7, 1, variant);
      move_positions(*kind, 3);
      const Heads h = random_heads(2, H, T, D, 2);
      const auto attend = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
        return kind->attend(q, k, v, {.causal = causal});
      };
      const auto naive = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
        const VQAttention::Prepared in = kind->prepare(q, k, causal);
        const QuantizedKeys keys = kind->quantizer->assign(in.keys);
        return vq_attention_naive(in.queries, keys.keys, keys.indices, kind->quantizer->codes, v, kind->options(causal),
                                  in.bias);
      };
      check_runs_agree(run_attention(attend, h.q, h.k, h.v, h.gout), run_attention(naive, h.q, h.k, h.v, h.gout));
      // And the keys attend really did round: the output differs from softmax attention over the raw keys.
      const Tensor raw = scaled_dot_product_attention(h.q, h.k, h.v, {.causal = causal});
      CHECK(max_abs(attend(h.q, h.k, h.v) - raw) > 0.01f);
    }
}

TEST_CASE("normalised queries and keys: an RMS norm without gain, times D^-1/4, and scale 1 in the op") {
  const auto kind = vq_kind(1, 4, 2, 3, 1, {.normalise = true, .bias = false});
  Tensor q = zeros({1, 1, 1, 4}), k = zeros({1, 1, 1, 4});
  const float qv[] = {3, 4, 0, 0}, kv[] = {1, -1, 1, -1};
  std::copy_n(qv, 4, q.data());
  std::copy_n(kv, 4, k.data());
  const VQAttention::Prepared in = kind->prepare(q, k, true);
  // q: rms = sqrt(25 / 4) = 2.5, so q / 2.5 * 4^-1/4 = (1.2, 1.6, 0, 0) / sqrt(2); k: rms 1.
  const float root = 1.0f / std::sqrt(2.0f);
  const float q_expected[] = {1.2f * root, 1.6f * root, 0, 0}, k_expected[] = {root, -root, root, -root};
  for (int64_t d = 0; d < 4; ++d) {
    CHECK(in.queries.data()[d] == doctest::Approx(q_expected[d]).epsilon(1e-6));
    CHECK(in.keys.data()[d] == doctest::Approx(k_expected[d]).epsilon(1e-6));
  }
  CHECK(kind->options(true).scale == 1.0f);
  CHECK_FALSE(vq_kind(1, 4, 2, 3, 1, {.normalise = false})->options(true).scale.has_value());  // the op's 1/sqrt(D)
  // Any length of q and k: the same scores (up to the norm's eps of 1e-6 beside the mean square).
  const VQAttention::Prepared scaled = kind->prepare(q * 7.0f, k * 0.1f, true);
  check_close(scaled.queries, in.queries, 1e-6f);
  check_close(scaled.keys, in.keys, 1e-4f);
}

TEST_CASE("the sinusoid of the offsets, by hand: sines then cosines, wavelengths from 1 to 1e5") {
  const Tensor table = sinusoid_of_offsets(-1, 3, 4);  // offsets -1, -2, -3; frequencies 1 and 1e5^(-1/2)
  const double w1 = std::pow(1e5, -0.5);
  double expected[3][4];
  for (int64_t o = 0; o < 3; ++o) {
    const double offset = -1.0 - o;
    const double row[4] = {std::sin(offset), std::sin(offset * w1), std::cos(offset), std::cos(offset * w1)};
    std::copy_n(row, 4, expected[o]);
  }
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t c = 0; c < 4; ++c) CHECK(table.data()[o * 4 + c] == doctest::Approx(expected[o][c]).epsilon(1e-6));
  check_error([] { sinusoid_of_offsets(0, 2, 3); }, {"sinusoid_of_offsets", "even", "got 3"});
}

TEST_CASE("the position bias: its terms by hand, zero beyond the band, and learned through u, v and the projection") {
  const int64_t D = 3, L = 2;
  const auto kind = vq_kind(1, D, L, 4, 5, {.normalise = false, .bias = true});
  move_positions(*kind, 6);
  const Heads h = random_heads(1, 1, 7, D, 7);
  const VQAttention::Prepared in = kind->prepare(h.q, h.k, true);
  // queries = q + u, bias.queries = q + v, offsets = offset_proj(sinusoid of 0..L) (no D^-1/4: not normalised).
  const Tensor u = reshape(kind->positions->content_bias, {1, 1, 1, D});
  const Tensor v = reshape(kind->positions->position_bias, {1, 1, 1, D});
  check_close(in.queries, h.q + u, 1e-6f);
  check_close(in.bias.queries, h.q + v, 1e-6f);
  const Tensor r = kind->positions->offset_proj->forward(sinusoid_of_offsets(L, L + 1, 4));  // offsets L..0 (L+1, D)
  check_close(in.bias.offsets, reshape(r, {1, L + 1, D}), 1e-6f);
  CHECK(kind->prepare(h.q, h.k, false).bias.offsets.shape() == Shape{1, 2 * L + 1, D});
  // The bias changes the output; with u = v = 0 and a zero projection it is gone.
  const auto plain = vq_kind(1, D, L, 4, 5, {.normalise = false, .bias = false});
  CHECK(max_abs(kind->attend(h.q, h.k, h.v, {.causal = true}) - plain->attend(h.q, h.k, h.v, {.causal = true})) > 1e-3f);
  kind->positions->content_bias.copy_(zeros({D}));
  kind->positions->position_bias.copy_(zeros({D}));
  kind->positions->offset_proj->weight.copy_(zeros(kind->positions->offset_proj->weight.shape()));
  check_close(kind->attend(h.q, h.k, h.v, {.causal = true}), plain->attend(h.q, h.k, h.v, {.causal = true}), 1e-6f);
  // Every position parameter learns.
  const auto learning = vq_kind(1, D, L, 4, 5, {.normalise = true, .bias = true});
  sum(learning->attend(h.q, h.k, h.v, {.causal = false}) * h.gout).backward();
  for (const auto& [name, parameter, kind_of] : learning->named_parameters()) {
    CAPTURE(name);
    CHECK(max_abs(parameter.grad()) > 0);
  }
}

TEST_CASE("cache_gradient stopped: the kind's keys and values learn from their own block's queries only") {
  const int64_t T = 24, L = 4, D = 3;
  for (const bool causal : {true, false}) {
    CAPTURE(causal);
    const auto exact = vq_kind(1, D, L, 5, 8), stopped = vq_kind(1, D, L, 5, 8, {.stopped = true});
    Heads h = random_heads(1, 1, T, D, 9);
    h.gout = h.gout * reshape(concat({zeros({16}), ones({4}), zeros({4})}, 0), {1, 1, T, 1});  // block 4's queries only
    const auto run = [&](VQAttention& kind) {
      return run_attention([&](const Tensor& q, const Tensor& k, const Tensor& v) {
        return kind.attend(q, k, v, {.causal = causal});
      }, h.q, h.k, h.v, h.gout);
    };
    const auto e = run(*exact), s = run(*stopped);
    check_close(s.out, e.out, 0);
    check_close(s.dq, e.dq, 0);
    CHECK(max_abs(narrow(s.dv, 2, 0, 16)) == 0);
    CHECK(max_abs(narrow(s.dk, 2, 0, 16)) == 0);
    CHECK(max_abs(narrow(e.dv, 2, 0, 16)) > 1e-3f);
    check_agree(narrow(s.dv, 2, 16, 4), narrow(e.dv, 2, 16, 4), "own block's values");
  }
}

TEST_CASE("a gradient check through the kind, with queries that read the cache, padding and the positions") {
  // T = 7 in blocks of 2: queries read other keys through their codes. The keys stay constant: they
  // round to codes, so their numeric gradient is 0 where the estimator passes one.
  for (const bool causal : {true, false}) {
    CAPTURE(causal);
    const auto kind = vq_kind(2, 3, 2, 4);
    move_positions(*kind, 11);
    Generator gen(12);
    std::vector<Tensor> inputs{randn({2, 2, 7, 3}, gen), randn({2, 2, 7, 3}, gen)};
    for (Tensor& x : inputs) x.requires_grad_();
    const Tensor k = randn({2, 2, 7, 3}, gen);
    Tensor mask = ones({2, 7});
    mask.data()[7 + 6] = 0;
    mask.data()[7 + 2] = 0;
    const GradcheckResult r = gradcheck(
        [&](const std::vector<Tensor>& x) {
          return kind->attend(x[0], k, x[1], {.causal = causal, .key_padding_mask = mask});
        },
        inputs);
    CHECK_MESSAGE(r.ok, r.worst);
    // The position parameters too.
    Tensor u = kind->positions->content_bias, v = kind->positions->position_bias, w = kind->positions->offset_proj->weight;
    const GradcheckResult p = gradcheck(
        [&](const std::vector<Tensor>& x) {
          kind->positions->content_bias = x[0], kind->positions->position_bias = x[1];
          kind->positions->offset_proj->weight = x[2];
          const Tensor out = kind->attend(inputs[0].detach(), k, inputs[1].detach(), {.causal = causal});
          kind->positions->content_bias = u, kind->positions->position_bias = v, kind->positions->offset_proj->weight = w;
          return out;
        },
        {u.detach().clone().requires_grad_(), v.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()});
    CHECK_MESSAGE(p.ok, p.worst);
  }
}

TEST_CASE("padding: the real rows, the commitment loss and the EMA step are the unpadded sequence's, both ways") {
  for (const bool causal : {true, false}) {
    CAPTURE(causal);
    const auto padded = vq_kind(1, 4, 3, 5), alone = vq_kind(1, 4, 3, 5);  // one seed: the same codebook
    move_positions(*padded, 4);
    move_positions(*alone, 4);
    const Heads h = random_heads(1, 1, 10, 4, 3);
    Tensor mask = ones({1, 10});
    for (int64_t j = 6; j < 10; ++j) mask.data()[j] = 0;  // 6 real keys, then padding
    const auto real = [](const Tensor& x) { return narrow(x, 2, 0, 6); };
    const Tensor out = padded->attend(h.q, h.k, h.v, {.causal = causal, .key_padding_mask = mask});
    check_agree(real(out), alone->attend(real(h.q), real(h.k), real(h.v), {.causal = causal}), "real rows");
    CHECK(padded->auxiliary_loss().item() == doctest::Approx(alone->auxiliary_loss().item()).epsilon(1e-6));
    padded->after_optimizer_step();
    alone->after_optimizer_step();
    check_agree(padded->quantizer->counts, alone->quantizer->counts, "counts");
    check_agree(padded->quantizer->sums, alone->quantizer->sums, "sums");
  }
}

TEST_CASE("the encoder form: padding anywhere is hidden from every query") {
  const auto kind = vq_kind(2, 4, 3, 5);
  const Heads h = random_heads(2, 2, 14, 4, 13);
  Tensor mask = ones({2, 14});
  for (const int64_t t : {1, 5, 6, 12}) mask.data()[14 + t] = 0;
  Heads moved = h;
  moved.k = h.k.clone(), moved.v = h.v.clone();
  for (int64_t head = 0; head < 2; ++head)
    for (const int64_t t : {1, 5, 6, 12})
      for (int64_t d = 0; d < 4; ++d) {
        moved.k.data()[((2 + head) * 14 + t) * 4 + d] += 5;
        moved.v.data()[((2 + head) * 14 + t) * 4 + d] -= 3;
      }
  const AttendMasks masks{.key_padding_mask = mask};
  check_close(kind->attend(moved.q, moved.k, moved.v, masks), kind->attend(h.q, h.k, h.v, masks), 0);
}

TEST_CASE("the codebook and the positions go through a checkpoint with the layer") {
  const auto trained = vq_kind(2, 3, 4, 6, 1);
  move_positions(*trained, 2);
  const Heads h = random_heads(1, 2, 20, 3, 4);
  for (int step = 0; step < 3; ++step) {  // move the codes away from their initial draw
    trained->attend(h.q, h.k, h.v, {.causal = true});
    trained->after_optimizer_step();
  }
  std::vector<std::string> names;
  for (const auto& [name, buffer] : trained->named_buffers()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"quantizer.sums", "quantizer.counts", "quantizer.codes"});
  names.clear();
  for (const auto& [name, parameter, kind_of] : trained->named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"positions.content_bias", "positions.position_bias",
                                          "positions.offset_proj.weight"});
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ladder_vq_kind_" + std::to_string(getpid()) + ".safetensors"))
          .string();
  io::save_module(path, *trained);
  const auto loaded = vq_kind(2, 3, 4, 6, 99);  // other initial codes and projection ...
  CHECK(loaded->quantizer->codes.to_vector() != trained->quantizer->codes.to_vector());
  io::load_module(path, *loaded);  // ... replaced by the saved ones
  std::filesystem::remove(path);
  CHECK(loaded->quantizer->codes.to_vector() == trained->quantizer->codes.to_vector());
  CHECK(loaded->quantizer->counts.to_vector() == trained->quantizer->counts.to_vector());
  CHECK(loaded->positions->offset_proj->weight.to_vector() == trained->positions->offset_proj->weight.to_vector());
  CHECK(max_abs(loaded->attend(h.q, h.k, h.v, {.causal = true}) - trained->attend(h.q, h.k, h.v, {.causal = true})) ==
        0);
}

TEST_CASE("generation follows the projection's weights: offsets kept between steps, renewed when they change") {
  const auto kind = vq_kind(1, 3, 4, 5);
  const Heads h = random_heads(1, 1, 12, 3, 14);
  EvalModeGuard eval(*kind);
  const auto generated = [&] { return kind->step(h.q, h.k, h.v, *kind->start()); };
  const Tensor before = generated();
  check_close(generated(), before, 0);
  kind->positions->offset_proj->weight.copy_(kind->positions->offset_proj->weight * 2.0f);
  const Tensor after = generated();
  CHECK(max_abs(after - before) > 1e-4f);
  check_agree(after, kind->attend(h.q, h.k, h.v, {.causal = true}), "steps after the change against the whole sequence");
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
  for (const auto& [name, parameter, kind_of] : mha.named_parameters())
    if (name.find("positions") != std::string::npos) CHECK_FALSE(parameter.grad().defined());
}

TEST_CASE("VQAttention's errors name the setting, the values and the fix") {
  check_error([] { make_attention({.kind = VQAttention::Settings{}}); },
              {"VQAttention", "heads = 0 and head_dim = 0", "MultiheadAttention does"});
  check_error([] { make_attention({.kind = VQAttention::Settings{.block = 0}, .heads = 1, .head_dim = 2}); },
              {"vq attention", "block must be from 1 to 65536, got 0"});
  check_error([] { make_attention({.kind = VQAttention::Settings{.codes = 0}, .heads = 1, .head_dim = 2}); },
              {"vq attention", "codes must be from 1 to 4096, got 0"});
  check_error(
      [] { make_attention({.kind = VQAttention::Settings{.cache_gradient = "approximate"}, .heads = 1, .head_dim = 2}); },
      {"vq attention", "cache_gradient", "approximate", "exact", "stopped"});
  const auto kind = vq_kind(1, 3, 2, 4);
  const Heads h = random_heads(2, 1, 6, 3, 8);
  check_error([&] { kind->attend(narrow(h.q, 2, 0, 4), h.k, h.v, {.causal = true}); },
              {"VQAttention", "need T = S", "(2,1,4,3)", "(2,1,6,3)", "full attention for cross attention"});
  check_error([&] { kind->attend(h.q, h.k, h.v, {.causal = true, .causal_offset = 2}); },
              {"causal_offset 2 is not supported", "start() and step()"});
  check_error([&] { kind->attend(h.q, h.k, h.v, {.causal = true, .key_padding_mask = ones({2, 5})}); },
              {"key_padding_mask must be (B,S) = (2,6)", "(2,5)"});
  check_error([&] { kind->attend(h.q, h.k, narrow(h.v, 3, 0, 2), {.causal = true}); },
              {"vq_attention", "v must have q's shape"});
  check_error([&] { kind->attend(random_heads(1, 2, 6, 3, 9).q, random_heads(1, 2, 6, 3, 9).k, h.v, {.causal = true}); },
              {"VectorQuantizer.quantize", "H = 1 and d = 3", "(1,2,6,3)"});
  // States: of another kind, or of a VQ layer with another block or codebook.
  LinearAttention linear({.kind = LinearAttention::Settings{}});
  check_error([&] { kind->step(h.q, h.k, h.v, *linear.start()); },
              {"VQAttention::step", "started by another attention kind"});
  const auto other = vq_kind(1, 3, 3, 4);
  check_error([&] { kind->step(h.q, h.k, h.v, *other->start()); },
              {"VQAttention::step", "block 3 and 4 codes", "this layer has block 2 and 4 codes", "start() a state"});
}
