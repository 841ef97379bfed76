// The four scoring functions and their modules (nn/attention/scoring.h, scoring_modules.h): values by
// hand and as loops, the fused additive scores against their naive twin (also threaded), padded keys
// changing nothing, gradient checks with masks and an empty query, heads, dropout and the errors.
#include "helpers.h"
#include "attention_block_checks.h"

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "core/gradcheck.h"
#include "nn/attention/nadaraya_watson.h"
#include "nn/attention/scoring.h"
#include "nn/attention/scoring_modules.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::all_finite;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::check_tensor;
using ladder::testing::check_weights_respect;
using ladder::testing::Inputs;
using ladder::testing::leaf;
using ladder::testing::require_threaded;
using ladder::testing::TwoThreads;

namespace {

// The four scoring functions under one signature, with their parameters as inputs 3 and up (so
// that a gradient check covers them): q (B,Q,3), k (B,S,4) (dot products: 3), v (B,S,2).
struct Scoring {
  const char* name;
  int64_t key_size;
  std::vector<Shape> parameters;
  std::function<AttentionOutput(Inputs, const AttentionOptions&)> run;
};

std::vector<Scoring> scorings() {
  return {
      {"dot", 3, {}, [](Inputs x, const AttentionOptions& o) { return dot_attention(x[0], x[1], x[2], o); }},
      {"scaled_dot", 3, {}, [](Inputs x, const AttentionOptions& o) { return scaled_dot_attention(x[0], x[1], x[2], o); }},
      {"additive", 4, {{5, 3}, {5, 4}, {1, 5}},
       [](Inputs x, const AttentionOptions& o) { return additive_attention(x[0], x[1], x[2], x[3], x[4], x[5], o); }},
      {"general", 4, {{3, 4}}, [](Inputs x, const AttentionOptions& o) { return general_attention(x[0], x[1], x[2], x[3], o); }},
  };
}

// Queries, keys, values and the scoring's parameters, all leaves that require grad.
std::vector<Tensor> scoring_inputs(const Scoring& s, int64_t batch, int64_t queries, int64_t keys, Generator& gen) {
  std::vector<Tensor> in = {leaf(randn({batch, queries, 3}, gen)), leaf(randn({batch, keys, s.key_size}, gen)),
                            leaf(randn({batch, keys, 2}, gen))};
  for (const Shape& shape : s.parameters) in.push_back(leaf(uniform(shape, -0.8f, 0.8f, gen)));
  return in;
}

// The fused additive scores and their naive twin on q (..,Q,H), k (..,S,H): the same scores, and the
// same gradients for q, k and w_v under an output gradient with zeros in it (masked keys send none).
void check_additive_fused_matches_naive(const Shape& q_shape, const Shape& k_shape, Generator& gen) {
  const int64_t H = q_shape.back();
  const Tensor q = randn(q_shape, gen), k = randn(k_shape, gen), w_v = randn({1, H}, gen);
  const std::vector<Tensor> a = {leaf(q), leaf(k), leaf(w_v)}, b = {leaf(q), leaf(k), leaf(w_v)};
  const Tensor fused = additive_scores_projected(a[0], a[1], a[2]), naive = additive_scores_projected_naive(b[0], b[1], b[2]);
  check_close(fused, naive, 1e-5f, 1e-5f);
  const Tensor g = randn(fused.shape(), gen) * randint(0, 2, fused.shape(), gen);
  fused.backward(g);
  naive.backward(g);
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    check_close(a[i].grad(), b[i].grad(), 1e-4f, 1e-4f);
  }
}

}  // namespace

// ---- scoring functions ----

TEST_CASE("dot and scaled dot scores and their context, by hand") {
  const Tensor q = tensor({1, 2}, {1, 1, 2}), k = tensor({3, 4, 1, 0}, {1, 2, 2}), v = tensor({10, 20}, {1, 2, 1});
  check_tensor(dot_scores(q, k), {1, 1, 2}, {11, 1});
  check_tensor(scaled_dot_scores(q, k), {1, 1, 2}, {11 / std::sqrt(2.0f), 1 / std::sqrt(2.0f)});
  // softmax([11, 1] / sqrt 2): weights [1, e^(-10/sqrt 2)] / (1 + e^(-10/sqrt 2))
  const float small = std::exp(-10 / std::sqrt(2.0f)) / (1 + std::exp(-10 / std::sqrt(2.0f)));
  const AttentionOutput out = scaled_dot_attention(q, k, v);
  check_tensor(out.weights, {1, 1, 2}, {1 - small, small});
  check_tensor(out.context, {1, 1, 1}, {10 * (1 - small) + 20 * small});
  // Masking the first key leaves all the weight on the second.
  check_tensor(dot_attention(q, k, v, {.mask = {.valid_lengths = tensor({1})}}).context, {1, 1, 1}, {10});
}

TEST_CASE("additive and general scores equal their formulas written as loops") {
  Generator gen(7);
  const int64_t B = 2, Q = 3, S = 4, Dq = 3, Dk = 5, H = 6;
  const Tensor q = randn({B, Q, Dq}, gen), k = randn({B, S, Dk}, gen);
  const Tensor W_q = randn({H, Dq}, gen), W_k = randn({H, Dk}, gen), w_v = randn({1, H}, gen), W = randn({Dq, Dk}, gen);
  const Tensor additive = additive_scores(q, k, W_q, W_k, w_v), general = general_scores(q, k, W);
  REQUIRE(additive.shape() == Shape{B, Q, S});
  REQUIRE(general.shape() == Shape{B, Q, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Q; ++i)
      for (int64_t j = 0; j < S; ++j) {
        double a = 0, g = 0;
        for (int64_t h = 0; h < H; ++h) {  // w_v . tanh(W_q q + W_k k)
          double pre = 0;
          for (int64_t d = 0; d < Dq; ++d) pre += W_q.at({h, d}) * q.at({b, i, d});
          for (int64_t d = 0; d < Dk; ++d) pre += W_k.at({h, d}) * k.at({b, j, d});
          a += w_v.at({0, h}) * std::tanh(pre);
        }
        for (int64_t c = 0; c < Dq; ++c)  // q^T W k
          for (int64_t d = 0; d < Dk; ++d) g += q.at({b, i, c}) * W.at({c, d}) * k.at({b, j, d});
        CHECK(additive.at({b, i, j}) == doctest::Approx(a).epsilon(1e-5));
        CHECK(general.at({b, i, j}) == doctest::Approx(g).epsilon(1e-5));
      }
}

TEST_CASE("additive_scores_projected: the fused op equals its naive twin, values and gradients, on one and two threads") {
  Generator gen(14);
  check_additive_fused_matches_naive({2, 3, 5}, {2, 4, 5}, gen);
  check_additive_fused_matches_naive({2, 1, 5}, {2, 1, 5}, gen);           // one query, one key
  check_additive_fused_matches_naive({2, 3, 4, 6}, {2, 3, 7, 6}, gen);     // heads between B and Q
  const Shape q_shape{2, 2, 5, 64}, k_shape{2, 2, 33, 64};                // odd sizes: the split falls inside rows
  const Tensor q = randn(q_shape, gen), k = randn(k_shape, gen), w_v = randn({1, 64}, gen);
  const Tensor one_thread = additive_scores_projected(q, k, w_v);
  TwoThreads two;
  require_threaded(2 * 2 * 5, 33 * 64);   // forward: the query rows
  require_threaded(2 * 2, 5 * 33 * 64);   // backward: the batch
  check_additive_fused_matches_naive(q_shape, k_shape, gen);
  // Every row is summed by one thread whatever the split: two threads give the one-thread scores exactly.
  CHECK(additive_scores_projected(q, k, w_v).to_vector() == one_thread.to_vector());
}

TEST_CASE("every scoring function: padded keys change nothing, in values or gradients") {
  Generator gen(8);
  const int64_t B = 2, Q = 3, S = 5;
  for (const Scoring& s : scorings()) {
    CAPTURE(s.name);
    for (const KeyMask& mask : {KeyMask{.valid_lengths = tensor({3, 5})},
                                KeyMask{.key_padding = tensor({1, 0, 1, 1, 0, 1, 1, 1, 1, 0}, {B, S})}}) {
      const std::vector<Tensor> in = scoring_inputs(s, B, Q, S, gen);
      // The same inputs with the keys and values of padded positions replaced by large random numbers.
      std::vector<Tensor> changed;
      for (const Tensor& t : in) changed.push_back(leaf(t));
      const Tensor visible = mask.visible({B, Q, S});  // (B,1,S)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < S; ++j)
          if (visible.at({b, 0, j}) == 0)
            for (size_t t : {1u, 2u})
              for (int64_t d = 0; d < changed[t].size(2); ++d)
                changed[t].data()[(b * S + j) * changed[t].size(2) + d] = 1000 * gen.normal();
      const AttentionOutput a = s.run(in, {.mask = mask}), c = s.run(changed, {.mask = mask});
      CHECK(a.context.to_vector() == c.context.to_vector());
      CHECK(a.weights.to_vector() == c.weights.to_vector());
      check_weights_respect(a.weights, expand(visible, {B, Q, S}));
      const Tensor g = randn({B, Q, 2}, gen);
      a.context.backward(g);
      c.context.backward(g);
      for (size_t t = 0; t < in.size(); ++t) {
        CAPTURE(t);
        if (t == 1 || t == 2)  // keys and values: the padded rows differ, and get no gradient at all
          for (int64_t b = 0; b < B; ++b)
            for (int64_t j = 0; j < S; ++j)
              for (int64_t d = 0; d < in[t].size(2); ++d) {
                const int64_t i = (b * S + j) * in[t].size(2) + d;
                if (visible.at({b, 0, j}) == 0) {
                  CHECK(in[t].grad().data()[i] == 0.0f);
                  CHECK(changed[t].grad().data()[i] == 0.0f);
                } else {
                  CHECK(in[t].grad().data()[i] == changed[t].grad().data()[i]);
                }
              }
        else
          CHECK(in[t].grad().to_vector() == changed[t].grad().to_vector());
      }
    }
  }
}

TEST_CASE("every scoring function passes the gradient check, with masks and an empty query") {
  Generator gen(9);
  for (const Scoring& s : scorings()) {
    CAPTURE(s.name);
    for (const KeyMask& mask : {KeyMask{}, KeyMask{.valid_lengths = tensor({0, 3, 2, 4}, {2, 2})},
                                KeyMask{.key_padding = tensor({1, 1, 0, 1, 0, 1, 1, 1}, {2, 4})}}) {
      const std::vector<Tensor> in = scoring_inputs(s, 2, 2, 4, gen);
      const GradcheckResult r = gradcheck(
          [&](Inputs x) {
            const AttentionOutput out = s.run(x, {.mask = mask});
            return concat({flatten(out.context), flatten(out.weights)});
          },
          in);
      CHECK_MESSAGE(r.ok, r.worst);
    }
  }
}

TEST_CASE("scoring functions take heads between B and Q, with the same masks") {
  // q, k, v (B,H,T,D): each head equals the attention of its own (B,T,D) slice under the same mask.
  Generator gen(10);
  const Tensor q = randn({2, 3, 4, 5}, gen), k = randn({2, 3, 6, 5}, gen), v = randn({2, 3, 6, 2}, gen);
  const KeyMask mask{.valid_lengths = tensor({0, 4, 6, 2, 5, 1, 3, 3}, {2, 4})};
  const AttentionOutput all = scaled_dot_attention(q, k, v, {.mask = mask});
  REQUIRE(all.context.shape() == Shape{2, 3, 4, 2});
  for (int64_t h = 0; h < 3; ++h) {
    auto head = [h](const Tensor& t) { return squeeze(narrow(t, 1, h, 1), 1); };
    const AttentionOutput one = scaled_dot_attention(head(q), head(k), head(v), {.mask = mask});
    CHECK(head(all.context).to_vector() == one.context.to_vector());
    CHECK(head(all.weights).to_vector() == one.weights.to_vector());
  }
}

TEST_CASE("scoring functions refuse shapes that do not fit, saying why") {
  const Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4}), v = zeros({2, 5, 2});
  check_error([&] { dot_scores(q, zeros({2, 5, 3})); }, {"dot_scores", "(2,3,4)", "(2,5,3)", "size D", "4 vs 3"});
  check_error([&] { scaled_dot_attention(q, zeros({3, 5, 4}), v); }, {"scaled_dot_scores", "same B"});
  check_error([&] { dot_scores(zeros({3, 4}), zeros({5, 4})); }, {"dot_scores", "(B,Q,Dq)"});
  check_error([&] { dot_attention(q, k, zeros({2, 6, 2})); }, {"attend", "values (2,6,2)", "one value per key"});
  check_error([&] { attend(zeros({2, 3, 5}), v, {.dropout = 1}); }, {"attend", "dropout", "[0, 1)"});
  check_error([&] { additive_scores(q, k, zeros({6, 3}), zeros({6, 4}), zeros({1, 6})); },
              {"additive_scores", "W_q (6,3)", "(H,Dq) = (6,4)"});
  check_error([&] { additive_scores(q, k, zeros({6, 4}), zeros({6, 4}), zeros({6})); },
              {"additive_scores", "w_v (6)", "(1,H)"});
  check_error([&] { general_scores(q, k, zeros({4, 3})); }, {"general_scores", "W (4,3)", "(Dq,Dk) = (4,4)"});
  check_error([&] { additive_scores_projected(zeros({2, 3, 6}), zeros({2, 5, 4}), zeros({1, 6})); },
              {"additive_scores_projected", "(2,3,6)", "(2,5,4)", "must both end in H = 6", "W_k (H,Dk)"});
  check_error([&] { additive_scores_projected(zeros({2, 3, 6}), zeros({3, 5, 6}), zeros({1, 6})); },
              {"additive_scores_projected", "(3,5,6)", "the same B"});
  check_error([&] { additive_scores_projected(zeros({2, 3, 6}), zeros({2, 5, 6}), zeros({6})); },
              {"additive_scores_projected", "w_v (6)", "(1,H)"});
  check_error([&] { additive_scores_projected_naive(zeros({3, 6}), zeros({5, 6}), zeros({1, 6})); },
              {"additive_scores_projected_naive", "(B,Q,H)"});
  check_error([&] { AdditiveAttention(4, 4, 8, 1.5f); }, {"AdditiveAttention", "dropout", "1.5"});
  check_error([&] { GeneralAttention(0, 4); }, {"GeneralAttention", "query=0"});
}

// ---- scoring modules ----

TEST_CASE("scoring modules: PyTorch-style parameter names, and each equals its function") {
  Generator gen(11);
  AdditiveAttention additive(3, 4, 5, 0, gen);
  GeneralAttention general(3, 4, 0, gen);
  DotProductAttention scaled, plain(false);
  const auto names = [](const Module& m) {
    std::vector<std::string> out;
    for (const NamedParameter& p : m.named_parameters()) out.push_back(p.name + shape_str(p.tensor.shape()));
    return out;
  };
  CHECK(names(additive) == std::vector<std::string>{"W_q.weight(5,3)", "W_k.weight(5,4)", "w_v.weight(1,5)"});
  CHECK(names(general) == std::vector<std::string>{"weight(3,4)"});
  CHECK(scaled.num_parameters() == 0);
  CHECK(additive.repr() == "AdditiveAttention(query=3, key=4, hidden=5, dropout=0)");
  CHECK(plain.repr() == "DotProductAttention(scaled=false, dropout=0)");

  const Tensor q = randn({2, 2, 3}, gen), k = randn({2, 4, 4}, gen), k3 = randn({2, 4, 3}, gen), v = randn({2, 4, 2}, gen);
  const KeyMask mask{.valid_lengths = tensor({2, 4})};
  const AttentionOptions options{.mask = mask};
  CHECK(additive.forward(q, k, v, mask).context.to_vector() ==
        additive_attention(q, k, v, additive.W_q->weight, additive.W_k->weight, additive.w_v->weight, options).context.to_vector());
  CHECK(general.forward(q, k, v, mask).context.to_vector() == general_attention(q, k, v, general.weight, options).context.to_vector());
  CHECK(scaled.forward(q, k3, v, mask).context.to_vector() == scaled_dot_attention(q, k3, v, options).context.to_vector());
  CHECK(plain.forward(q, k3, v, mask).context.to_vector() == dot_attention(q, k3, v, options).context.to_vector());
}

TEST_CASE("AdditiveAttention: keys projected once give what forward gives, values and gradients") {
  Generator gen(16);
  AdditiveAttention attention(3, 4, 5, 0, gen);
  const Tensor q = randn({2, 2, 3}, gen), k = randn({2, 6, 4}, gen), v = randn({2, 6, 2}, gen), g = randn({2, 2, 2}, gen);
  const KeyMask mask{.key_padding = tensor({1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1}, {2, 6})};
  auto run = [&](bool projected) {
    std::vector<Tensor> in = {leaf(q), leaf(k), leaf(v)};
    attention.zero_grad();
    const AttentionOutput out = projected ? attention.forward_projected(in[0], attention.project_keys(in[1]), in[2], mask)
                                          : attention.forward(in[0], in[1], in[2], mask);
    out.context.backward(g);
    std::vector<Tensor> results = {out.context.detach(), out.weights.detach()};
    for (const Tensor& t : in) results.push_back(t.grad());
    for (const Tensor& p : attention.parameters()) results.push_back(p.grad().clone());
    return results;
  };
  CHECK(attention.project_keys(k).shape() == Shape{2, 6, 5});
  const std::vector<Tensor> direct = run(false), projected = run(true);
  for (size_t i = 0; i < direct.size(); ++i) {
    CAPTURE(i);
    check_close(projected[i], direct[i], 1e-6f);
  }
}

TEST_CASE("scoring modules pass the gradient check through forward, and their parameters get gradients") {
  Generator gen(12);
  AdditiveAttention additive(3, 4, 5, 0, gen);
  GeneralAttention general(3, 4, 0, gen);
  DotProductAttention scaled;
  NadarayaWatson kernel_regression(gen);
  const Tensor q = leaf(randn({2, 2, 3}, gen)), k = leaf(randn({2, 3, 4}, gen)), v = leaf(randn({2, 3, 2}, gen));
  const Tensor k3 = leaf(randn({2, 3, 3}, gen));
  const Tensor x_q = leaf(uniform({3}, 0, 2, gen)), x_k = leaf(uniform({4}, 0, 2, gen)), y_k = leaf(randn({4}, gen));
  const KeyMask mask{.valid_lengths = tensor({1, 3})};
  const std::vector<std::tuple<Module*, std::function<Tensor(Inputs)>, std::vector<Tensor>>> modules = {
      {&additive, [&](Inputs x) { return additive.forward(x[0], x[1], x[2], mask).context; }, {q, k, v}},
      {&general, [&](Inputs x) { return general.forward(x[0], x[1], x[2], mask).context; }, {q, k, v}},
      {&scaled, [&](Inputs x) { return scaled.forward(x[0], x[1], x[2], mask).context; }, {q, k3, v}},
      {&kernel_regression, [&](Inputs x) { return kernel_regression.forward(x[0], x[1], x[2]).context; }, {x_q, x_k, y_k}}};
  for (const auto& [module, forward, inputs] : modules) {
    CAPTURE(module->repr());
    const GradcheckResult r = gradcheck(forward, inputs);
    CHECK_MESSAGE(r.ok, r.worst);
    module->zero_grad();
    sum(forward(inputs)).backward();
    for (const Tensor& p : module->parameters()) {
      REQUIRE(p.grad().defined());
      CHECK(all_finite(p.grad()));
    }
  }
}

TEST_CASE("dropout on the weights: in training only; the weights returned are those before dropout") {
  Generator gen(13);
  AdditiveAttention attention(3, 3, 4, 0.5f, gen);  // its dropout generator is gen's first child
  const Tensor q = randn({2, 3, 3}, gen), k = randn({2, 6, 3}, gen), v = randn({2, 6, 2}, gen);
  const KeyMask mask{.valid_lengths = tensor({4, 6})};
  const AttentionOutput train = attention.forward(q, k, v, mask);
  attention.eval();
  const AttentionOutput eval = attention.forward(q, k, v, mask);
  CHECK(train.weights.to_vector() == eval.weights.to_vector());
  // Eval mode is the function without dropout.
  const AttentionOutput plain = additive_attention(q, k, v, attention.W_q->weight, attention.W_k->weight,
                                                   attention.w_v->weight, {.mask = mask});
  CHECK(eval.context.to_vector() == plain.context.to_vector());
  // Training: the context is made of the weights after dropout (each dropped or doubled, 1 / (1 - p)).
  Generator same_masks = Generator(13).child();
  const Tensor dropped = dropout(train.weights, 0.5f, true, same_masks);
  CHECK(matmul(dropped, v).to_vector() == train.context.to_vector());
  CHECK(dropped.to_vector() != train.weights.to_vector());
}
