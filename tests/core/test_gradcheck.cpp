// Every differentiable op against central differences, from one table: a new op gets its check
// by adding an entry. The last test fails when an op declared in core/ops.h has no entry.
#include "helpers.h"

#include <fstream>
#include <functional>
#include <set>
#include <span>

#include "core/autograd.h"
#include "core/gradcheck.h"

using namespace ladder;

namespace {

using Inputs = const std::vector<Tensor>&;

struct InputSpec {
  Shape shape;
  float low = -2, high = 2;
  bool grad = true;
  std::vector<float> kinks;       // values are moved at least 0.05 away from these
  bool integral = false;          // whole numbers in [low, high): indices, targets, masks
};

struct GradCase {
  std::string name;  // "<function in ops.h>" or "<function>/<variant>"
  std::vector<InputSpec> inputs;
  std::function<Tensor(Inputs)> f;
  GradcheckOptions tolerance = {};
};

InputSpec positive(Shape shape) { return {std::move(shape), 0.5f, 2.5f}; }
InputSpec off_zero(Shape shape) { return {std::move(shape), -2, 2, true, {0}}; }
// n code indices that visit the S codes in a fixed, uneven order (vq_attention's code_index).
std::vector<int64_t> cycling_codes(int64_t n, int64_t S) {
  std::vector<int64_t> codes;
  for (int64_t i = 0; i < n; ++i) codes.push_back(i * 5 % 7 % S);
  return codes;
}

// Whole numbers in [0, n) as a constant input (indices, targets).
InputSpec indices(Shape shape, int n) { return {std::move(shape), 0, static_cast<float>(n), false, {}, true}; }

Tensor make_input(const InputSpec& spec, Generator& gen) {
  Tensor t = spec.integral ? randint(static_cast<int64_t>(spec.low), static_cast<int64_t>(spec.high), spec.shape, gen)
                      : uniform(spec.shape, spec.low, spec.high, gen);
  for (float& v : std::span(t.data(), t.numel()))
    for (float kink : spec.kinks)
      if (std::fabs(v - kink) < 0.05f) v = kink + (v < kink ? -0.05f : 0.05f) * 2;
  if (spec.grad) t.requires_grad_();
  return t;
}

const std::vector<GradCase>& cases() {
  static const std::vector<GradCase> table = {
      // ---- elementwise ----
      {"neg", {{{2, 3}}}, [](Inputs x) { return neg(x[0]); }},
      {"exp", {{{2, 3}}}, [](Inputs x) { return exp(x[0]); }},
      {"log", {positive({2, 3})}, [](Inputs x) { return log(x[0]); }},
      {"sqrt", {positive({3, 1})}, [](Inputs x) { return sqrt(x[0]); }},
      {"abs", {off_zero({2, 4})}, [](Inputs x) { return abs(x[0]); }},
      {"sin", {{{5}}}, [](Inputs x) { return sin(x[0]); }},
      {"cos", {{{5}}}, [](Inputs x) { return cos(x[0]); }},
      {"tanh", {{{2, 1, 3}}}, [](Inputs x) { return tanh(x[0]); }},
      {"sigmoid", {{{4}, -4, 4}}, [](Inputs x) { return sigmoid(x[0]); }},
      {"relu", {off_zero({3, 3})}, [](Inputs x) { return relu(x[0]); }},
      {"gelu", {{{6}, -3, 3}}, [](Inputs x) { return gelu(x[0]); }},
      {"gelu/tanh", {{{6}, -3, 3}}, [](Inputs x) { return gelu(x[0], GeluApprox::tanh); }},
      {"elu", {off_zero({6})}, [](Inputs x) { return elu(x[0], 1.5f); }},
      {"silu", {{{6}, -4, 4}}, [](Inputs x) { return silu(x[0]); }},
      {"softplus", {{{6}, -4, 4}}, [](Inputs x) { return softplus(x[0], 2.0f); }},
      {"pow", {positive({4})}, [](Inputs x) { return pow(x[0], 2.5f); }},
      {"pow/integer", {{{4}}}, [](Inputs x) { return pow(x[0], 3.0f); }},
      {"clamp", {{{8}, -2, 2, true, {-1, 0.5f}}}, [](Inputs x) { return clamp(x[0], -1, 0.5f); }},
      {"clone", {{{2, 2}}}, [](Inputs x) { return clone(x[0]); }},
      // The straight-through estimator (vector quantisation). A rounding has no derivative to check;
      // with quantised = x (a code that holds the key exactly) the forward is x itself, and finite
      // differences see the identity it passes back.
      {"straight_through", {{{2, 3, 4}}}, [](Inputs x) { return straight_through(x[0], x[0]); }},
      // ---- with a scalar ----
      {"add/scalar", {{{3}}}, [](Inputs x) { return x[0] + 2.0f; }},
      {"mul/scalar", {{{3}}}, [](Inputs x) { return x[0] * -3.0f; }},
      {"div/scalar", {{{3}}}, [](Inputs x) { return x[0] / 4.0f; }},
      {"rsub", {{{3}}}, [](Inputs x) { return 1.0f - x[0]; }},
      {"rdiv", {positive({3})}, [](Inputs x) { return 2.0f / x[0]; }},
      // ---- binary, broadcasting, size-1 dims ----
      {"add", {{{3, 1, 4}}, {{4}}}, [](Inputs x) { return x[0] + x[1]; }},
      {"add/both_broadcast", {{{2, 1, 3}}, {{4, 1}}}, [](Inputs x) { return add(x[0], x[1]); }},
      {"sub", {{{2, 3}}, {{1, 3}}}, [](Inputs x) { return x[0] - x[1]; }},
      {"mul", {{{2, 1, 3}}, {{4, 1}}}, [](Inputs x) { return x[0] * x[1]; }},
      {"mul/same_input", {{{3}}}, [](Inputs x) { return x[0] * x[0]; }},
      {"div", {{{2, 3}}, positive({3})}, [](Inputs x) { return x[0] / x[1]; }},
      {"div/scalar_tensor", {positive({}), {{2, 2}}}, [](Inputs x) { return div(x[1], x[0]); }},
      {"maximum", {{{3, 4}}, {{4}}}, [](Inputs x) { return maximum(x[0], x[1]); }},
      {"minimum", {{{3, 1}}, {{1, 5}}}, [](Inputs x) { return minimum(x[0], x[1]); }},
      // ---- reductions ----
      {"sum", {{{2, 3, 4}}}, [](Inputs x) { return sum(x[0]); }},
      {"sum/dims_keepdim", {{{2, 3, 4}}}, [](Inputs x) { return sum(x[0], {0, 2}, true); }},
      {"mean", {{{2, 3, 1}}}, [](Inputs x) { return mean(x[0], {1}); }},
      {"var", {{{3, 5}}}, [](Inputs x) { return var(x[0], {1}); }},
      {"var/population_all", {{{2, 3}}}, [](Inputs x) { return var(x[0], {}, false, 0); }},
      {"logsumexp", {{{3, 4}, -5, 5}}, [](Inputs x) { return logsumexp(x[0], {-1}); }},
      {"logsumexp/dim0", {{{5, 3}, -5, 5}}, [](Inputs x) { return logsumexp(x[0], {0}); }},
      {"logsumexp/dims_0_2_keepdim", {{{3, 2, 4}, -5, 5}}, [](Inputs x) { return logsumexp(x[0], {0, 2}, true); }},
      {"amax", {{{3, 4, 2}}}, [](Inputs x) { return amax(x[0], {0, 2}); }},
      {"amax/last_dim", {{{3, 5}}}, [](Inputs x) { return amax(x[0], {-1}); }},
      {"amin", {{{3, 4}}}, [](Inputs x) { return amin(x[0], {1}, true); }},
      {"max", {{{3, 4}}}, [](Inputs x) { return max(x[0], 1).values; }},
      {"min", {{{2, 3, 2}}}, [](Inputs x) { return min(x[0], 0, true).values; }},
      {"sum_to", {{{2, 3, 4}}}, [](Inputs x) { return sum_to(x[0], {3, 1}); }},
      // ---- matmul ----
      {"matmul", {{{3, 4}}, {{4, 2}}}, [](Inputs x) { return matmul(x[0], x[1]); }},
      {"matmul/transposes", {{{4, 3}}, {{2, 4}}}, [](Inputs x) { return matmul(x[0], x[1], {true, true}); }},
      {"matmul/folded_batch", {{{2, 3, 4}}, {{5, 4}}}, [](Inputs x) { return matmul(x[0], x[1], {.transpose_b = true}); }},
      {"linear", {{{2, 3, 4}}, {{5, 4}}, {{5}}}, [](Inputs x) { return linear(x[0], x[1], x[2]); }},
      {"linear/vector", {{{4}}, {{5, 4}}, {{5}}}, [](Inputs x) { return linear(x[0], x[1], x[2]); }},
      {"matmul/broadcast_batch", {{{2, 1, 3, 4}}, {{3, 4, 2}}}, [](Inputs x) { return matmul(x[0], x[1]); }},
      {"matmul/batched_transpose_a", {{{2, 4, 3}}, {{2, 4, 2}}}, [](Inputs x) { return matmul(x[0], x[1], {.transpose_a = true}); }},
      {"matmul/vectors", {{{4}}, {{4, 3}}, {{3}}}, [](Inputs x) { return matmul(matmul(x[0], x[1]), x[2]); }},
      // ---- shape ----
      {"reshape", {{{2, 6}}}, [](Inputs x) { return reshape(x[0], {3, -1}) * tensor({1, 2, 3, 4}); }},
      {"flatten", {{{2, 3, 2}}}, [](Inputs x) { return flatten(x[0], 1); }},
      {"transpose", {{{2, 3}}}, [](Inputs x) { return transpose(x[0], 0, 1); }},
      {"permute", {{{2, 3, 4}}}, [](Inputs x) { return permute(x[0], {2, 0, 1}); }},
      {"narrow", {{{4, 3}}}, [](Inputs x) { return narrow(x[0], 0, 1, 2); }},
      {"slice", {{{7, 2}}}, [](Inputs x) { return slice(x[0], 0, 1, 7, 2); }},
      {"concat", {{{2, 1}}, {{2, 3}}, {{2, 2}}}, [](Inputs x) { return concat({x[0], x[1], x[2]}, 1); }},
      {"stack", {{{3}}, {{3}}}, [](Inputs x) { return stack({x[0], x[1]}, 1); }},
      {"split", {{{5, 2}}}, [](Inputs x) { auto p = split(x[0], 2); return p[0] * p[1] + sum(p[2]); }},
      {"chunk", {{{6}}}, [](Inputs x) { auto p = chunk(x[0], 3); return p[0] * p[2] - p[1]; }},
      {"squeeze", {{{3, 1}}}, [](Inputs x) { return squeeze(x[0], 1) * tensor({1, 2, 3}); }},
      {"unsqueeze", {{{3}}}, [](Inputs x) { return unsqueeze(x[0], 0) * ones({2, 1}); }},
      {"expand", {{{3, 1}}}, [](Inputs x) { return expand(x[0], {2, 3, 4}); }},
      // ---- indexing ----
      {"index_select", {{{4, 3}}}, [](Inputs x) { return index_select(x[0], 0, tensor({3, 0, 3, 3})); }},
      {"index_select/dim1", {{{2, 4}}}, [](Inputs x) { return index_select(x[0], 1, tensor({1, 1, 2})); }},
      {"embedding", {{{5, 3}}, indices({2, 4}, 5)}, [](Inputs x) { return embedding(x[0], x[1]); }},
      {"gather", {{{3, 4}}}, [](Inputs x) { return gather(x[0], 1, tensor({0, 0, 3, 2, 1, 1}, {3, 2})); }},
      {"masked_fill", {{{3, 4}}, indices({4}, 2)}, [](Inputs x) { return masked_fill(x[0], x[1], -9); }},
      {"where", {indices({2, 3}, 2), {{2, 3}}, {{3}}}, [](Inputs x) { return where(x[0], x[1], x[2]); }},
      {"where/all_three_broadcast", {indices({2, 1, 3}, 2), {{4, 1}}, {{}}}, [](Inputs x) { return where(x[0], x[1], x[2]); }},
      // ---- neural-network math ----
      {"softmax", {{{3, 5}}}, [](Inputs x) { return softmax(x[0]); }},
      {"softmax/dim0", {{{3, 2, 2}}}, [](Inputs x) { return softmax(x[0], 0); }},
      {"log_softmax", {{{2, 6}}}, [](Inputs x) { return log_softmax(x[0], -1); }},
      {"log_softmax/middle_dim", {{{2, 3, 4}}}, [](Inputs x) { return log_softmax(x[0], 1); }},
      {"cross_entropy", {{{6, 4}}, indices({6}, 4)}, [](Inputs x) { return cross_entropy(x[0], x[1]); }},
      {"cross_entropy/weights_ignore_3d", {{{2, 3, 4}}, indices({2, 3}, 4)},
       [](Inputs x) {
         return cross_entropy(x[0], x[1], {.weight = tensor({1, 2, 0.5f, 1}), .ignore_index = 2});
       }},
      {"cross_entropy/none", {{{3, 5}}, indices({3}, 5)},
       [](Inputs x) { return cross_entropy(x[0], x[1], {.reduction = Reduction::none}); }},
      {"mse_loss", {{{2, 3}}, {{2, 3}}}, [](Inputs x) { return mse_loss(x[0], x[1]); }},
      {"binary_cross_entropy_with_logits", {{{5}, -4, 4}, {{5}, 0, 1}},
       [](Inputs x) { return binary_cross_entropy_with_logits(x[0], x[1], Reduction::sum); }},
      {"layer_norm", {{{3, 6}}, {{6}}, {{6}}}, [](Inputs x) { return layer_norm(x[0], {6}, x[1], x[2]); }},
      {"layer_norm/plain_two_dims", {{{2, 2, 3}}}, [](Inputs x) { return layer_norm(x[0], {2, 3}); }},
      {"rms_norm", {{{3, 6}}, {{6}}}, [](Inputs x) { return rms_norm(x[0], {6}, x[1]); }},
      {"rms_norm/plain_two_dims", {{{2, 2, 3}}}, [](Inputs x) { return rms_norm(x[0], {2, 3}); }},
      {"dropout", {{{4, 5}}},
       [](Inputs x) {
         Generator gen(3);  // the same mask on every call
         return dropout(x[0], 0.4f, true, gen);
       }},
      {"cumsum", {{{4, 3}}}, [](Inputs x) { return cumsum(x[0], 0); }},
      {"cumsum/last_dim", {{{2, 5}}}, [](Inputs x) { return cumsum(x[0], -1); }},
      // ---- attention ----
      {"masked_softmax", {{{2, 3, 5}}, indices({2, 1, 5}, 2)}, [](Inputs x) { return masked_softmax(x[0], x[1]); }},
      {"masked_softmax/per_query_with_empty_row", {{{2, 2, 3}, -5, 5}},
       [](Inputs x) { return masked_softmax(x[0], tensor({1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 1}, {2, 2, 3})); }},
      // ---- images ----
      {"conv2d", {{{2, 2, 5, 5}}, {{3, 2, 3, 3}}, {{3}}}, [](Inputs x) { return conv2d(x[0], x[1], x[2]); }},
      {"conv2d/stride_padding", {{{1, 2, 6, 5}}, {{2, 2, 3, 2}}},
       [](Inputs x) { return conv2d(x[0], x[1], {}, {.stride = 2, .padding = 1}); }},
      {"max_pool2d", {{{2, 2, 4, 4}}}, [](Inputs x) { return max_pool2d(x[0]); }},
      {"max_pool2d/overlapping_padded", {{{1, 1, 5, 5}}},
       [](Inputs x) { return max_pool2d(x[0], {.kernel = 3, .stride = 2, .padding = 1}); }},
      {"avg_pool2d", {{{1, 2, 5, 5}}}, [](Inputs x) { return avg_pool2d(x[0], {.kernel = 2, .stride = 2, .padding = 1}); }},
      {"batch_norm", {{{4, 3, 2, 2}}, {{3}}, {{3}}},
       [](Inputs x) {
         Tensor running_mean = zeros({3}), running_var = ones({3});
         return batch_norm(x[0], running_mean, running_var, x[1], x[2], true);
       }},
      {"batch_norm/eval_2d", {{{5, 3}}, {{3}}, {{3}}},
       [](Inputs x) { return batch_norm(x[0], full({3}, 0.5f), full({3}, 2), x[1], x[2], false); }},
      // ---- attention: q (B,H,T,D), k and v (B,H,S,D) ----
      {"scaled_dot_product_attention", {{{2, 2, 3, 4}}, {{2, 2, 5, 4}}, {{2, 2, 5, 4}}},
       [](Inputs x) { return scaled_dot_product_attention(x[0], x[1], x[2]); }},
      {"scaled_dot_product_attention/causal_offset_padding", {{{2, 1, 4, 3}}, {{2, 1, 5, 3}}, {{2, 1, 5, 3}}},
       [](Inputs x) {  // batch 1 pads keys 1 and 3; the offset -1 leaves row 0 with no key
         const Tensor padding = tensor({1, 1, 1, 1, 1, 1, 0, 1, 0, 1}, {2, 5});
         return scaled_dot_product_attention(x[0], x[1], x[2],
                                             {.causal = true, .causal_offset = -1, .key_padding_mask = padding});
       }},
      {"scaled_dot_product_attention/dropout", {{{1, 2, 3, 4}}, {{1, 2, 4, 4}}, {{1, 2, 4, 4}}},
       [](Inputs x) {
         Generator gen(3);  // the same mask on every call
         return scaled_dot_product_attention(x[0], x[1], x[2], {.scale = 0.8f, .dropout = 0.3f, .generator = &gen});
       }},
      {"scaled_dot_product_attention/block_sparse", {{{1, 2, 5, 3}}, {{1, 2, 5, 3}}, {{1, 2, 5, 3}}},
       [](Inputs x) {  // blocks of 2: query block 1 skips key block 0, block 2 (one position) sees 0 and 2
         const auto blocks =
             std::make_shared<BlockSparsity>(BlockSparsity{.block = 2, .key_blocks = {{0, 1}, {1, 2}, {0, 2}}});
         return scaled_dot_product_attention(x[0], x[1], x[2], {.causal = true, .block_sparsity = blocks});
       }},
      {"scaled_dot_product_attention_naive", {{{1, 2, 3, 4}}, {{1, 2, 4, 4}}, {{1, 2, 4, 4}}},
       [](Inputs x) {
         return scaled_dot_product_attention_naive(x[0], x[1], x[2], {.causal = true, .causal_offset = 1,
                                                                    .key_padding_mask = tensor({1, 0, 1, 1}, {1, 4})});
       }},
      {"attention_weights", {{{2, 1, 3, 4}}, {{2, 1, 5, 4}}},
       [](Inputs x) {
         return attention_weights(x[0], x[1], {.causal = true, .causal_offset = 2,
                                               .key_padding_mask = tensor({1, 1, 0, 1, 1, 0, 0, 0, 0, 0}, {2, 5})});
       }},
      // ---- the delta rule: q, k (B,H,T,M), v (B,H,T,E), beta (B,H,T) in (0, 1), log alpha (B,H,T) <= 0 ----
      {"delta_rule", {{{2, 1, 5, 3}, -0.6f, 0.6f}, {{2, 1, 5, 3}, -0.6f, 0.6f}, {{2, 1, 5, 2}}, {{2, 1, 5}, 0.1f, 0.9f}},
       [](Inputs x) { return delta_rule(x[0], x[1], x[2], x[3], Tensor(), /*chunk=*/2); }},  // 5 = 2 + 2 + 1
      {"delta_rule/gated",
       {{{1, 2, 5, 3}, -0.6f, 0.6f}, {{1, 2, 5, 3}, -0.6f, 0.6f}, {{1, 2, 5, 2}}, {{1, 2, 5}, 0.1f, 0.9f}, {{1, 2, 5}, -1.0f, -0.05f}},
       [](Inputs x) { return delta_rule(x[0], x[1], x[2], x[3], x[4], /*chunk=*/3); }},
      {"delta_rule_naive",
       {{{1, 2, 4, 3}, -0.6f, 0.6f}, {{1, 2, 4, 3}, -0.6f, 0.6f}, {{1, 2, 4, 2}}, {{1, 2, 4}, 0.1f, 0.9f}, {{1, 2, 4}, -1.0f, -0.05f}},
       [](Inputs x) { return delta_rule_naive(x[0], x[1], x[2], x[3], x[4]); }},
      // ---- linear attention: feature-mapped (positive) q (B,H,T,M), k (B,H,S,M), v (B,H,S,D) ----
      {"causal_linear_product", {{{2, 1, 5, 3}}, {{2, 1, 5, 3}}, {{2, 1, 5, 4}}},
       [](Inputs x) { return causal_linear_product(x[0], x[1], x[2], /*chunk=*/2); }},  // 5 = 2 + 2 + 1
      {"causal_linear_product_naive", {{{1, 2, 4, 3}}, {{1, 2, 4, 3}}, {{1, 2, 4, 2}}},
       [](Inputs x) { return causal_linear_product_naive(x[0], x[1], x[2]); }},
      {"linear_attention", {{{2, 1, 3, 4}, 0.1f, 1}, {{2, 1, 5, 4}, 0.1f, 1}, {{2, 1, 5, 3}}},
       [](Inputs x) {
         const Tensor padding = tensor({1, 1, 1, 1, 1, 1, 0, 1, 0, 1}, {2, 5});
         return linear_attention(x[0], x[1], x[2], {.key_padding_mask = padding});
       }},
      {"linear_attention/causal_chunked_padding", {{{2, 1, 5, 3}, 0.1f, 1}, {{2, 1, 5, 3}, 0.1f, 1}, {{2, 1, 5, 2}}},
       [](Inputs x) {
         const Tensor padding = tensor({1, 1, 1, 1, 1, 1, 0, 1, 0, 1}, {2, 5});
         return linear_attention(x[0], x[1], x[2], {.causal = true, .key_padding_mask = padding, .chunk = 2});
       }},
      {"linear_attention/causal_chunked", {{{2, 1, 5, 3}, 0.1f, 1}, {{2, 1, 5, 3}, 0.1f, 1}, {{2, 1, 5, 2}}},
       [](Inputs x) { return linear_attention(x[0], x[1], x[2], {.causal = true, .chunk = 2}); }},
      // raw q and k of either sign: elu + 1 applied inside the chunks
      {"linear_attention/causal_elu_inside", {{{2, 1, 5, 3}}, {{2, 1, 5, 3}}, {{2, 1, 5, 2}}},
       [](Inputs x) { return linear_attention(x[0], x[1], x[2], {.causal = true, .chunk = 2, .elu_features = true}); }},
      {"linear_attention_naive", {{{1, 2, 4, 3}, 0.1f, 1}, {{1, 2, 4, 3}, 0.1f, 1}, {{1, 2, 4, 2}}},
       [](Inputs x) { return linear_attention_naive(x[0], x[1], x[2], {.causal = true}); }},
      {"linear_attention_weights", {{{2, 1, 3, 4}, 0.1f, 1}, {{2, 1, 5, 4}, 0.1f, 1}},
       [](Inputs x) {
         const Tensor padding = tensor({1, 1, 0, 1, 1, 0, 1, 1, 1, 1}, {2, 5});
         return linear_attention_weights(x[0], x[1], {.key_padding_mask = padding});
       }},
      // ---- Transformer-VQ: q, khat, v (B,H,T,D), codebook (H,S,D); code indices (B,H,T) fixed ----
      // vq_attention reads every key as its code, so its khat is the codes (gathered here) and its
      // inputs are q and v; the twins read khat inside the window, where khat drawn apart from the
      // codes gives the numeric gradient of the window that vq_attention's khat gradient is held to.
      // T = 7 in blocks of 2: 2 + 2 + 2 + 1, so the last queries read the cache.
      {"vq_attention", {{{1, 2, 7, 3}}, {{2, 4, 3}, -2, 2, false}, {{1, 2, 7, 3}}},
       [](Inputs x) {
         const std::vector<int64_t> codes = cycling_codes(14, 4);
         return vq_attention(x[0], gather_codes(x[1], codes, {1, 2, 7}), codes, x[1], x[2], {.block = 2});
       }},
      {"vq_attention/one_head", {{{2, 1, 6, 2}}, {{1, 3, 2}, -2, 2, false}, {{2, 1, 6, 2}}},
       [](Inputs x) {
         const std::vector<int64_t> codes = cycling_codes(12, 3);
         return vq_attention(x[0], gather_codes(x[1], codes, {2, 1, 6}), codes, x[1], x[2],
                             {.block = 1, .scale = 0.7f});
       }},
      {"vq_attention_naive", {{{1, 2, 5, 3}}, {{1, 2, 5, 3}}, {{2, 4, 3}, -2, 2, false}, {{1, 2, 5, 3}}},
       [](Inputs x) { return vq_attention_naive(x[0], x[1], cycling_codes(10, 4), x[2], x[3], {.block = 2}); }},
      {"vq_attention_weights", {{{2, 1, 5, 3}}, {{2, 1, 5, 3}}, {{1, 3, 3}, -2, 2, false}},
       [](Inputs x) { return vq_attention_weights(x[0], x[1], cycling_codes(10, 3), x[2], {.block = 2}); }},
      // ---- additive scores: q (B,..,Q,H), k (B,..,S,H), w_v (1,H) ----
      {"additive_scores_projected", {{{2, 3, 4}}, {{2, 5, 4}}, {{1, 4}}},
       [](Inputs x) { return additive_scores_projected(x[0], x[1], x[2]); }},
      {"additive_scores_projected/heads_one_query", {{{2, 2, 1, 3}}, {{2, 2, 4, 3}}, {{1, 3}}},
       [](Inputs x) { return additive_scores_projected(x[0], x[1], x[2]); }},
      {"additive_scores_projected/one_key", {{{1, 3, 3}}, {{1, 1, 3}}, {{1, 3}}},
       [](Inputs x) { return additive_scores_projected(x[0], x[1], x[2]); }},
      {"additive_scores_projected_naive", {{{2, 3, 4}}, {{2, 5, 4}}, {{1, 4}}},
       [](Inputs x) { return additive_scores_projected_naive(x[0], x[1], x[2]); }},
      // ---- recurrent layers: x (T,B,I), h0 (B,H), w_ih (G*H,I), w_hh (G*H,H), b_ih, b_hh ----
      {"rnn_layer", {{{3, 2, 3}}, {{2, 4}}, {{4, 3}, -0.7f, 0.7f}, {{4, 4}, -0.7f, 0.7f}, {{4}}, {{4}}},
       [](Inputs x) { return rnn_layer(x[0], x[1], x[2], x[3], x[4], x[5]); }},
      {"rnn_layer/relu_reverse", {{{4, 2, 2}}, {{2, 3}}, {{3, 2}}, {{3, 3}, -0.5f, 0.5f}, {{3}}, {{3}}},
       [](Inputs x) { return rnn_layer(x[0], x[1], x[2], x[3], x[4], x[5], /*relu=*/true, /*reverse=*/true); },
       {.atol = 3e-3f, .rtol = 2e-2f}},
      {"lstm_layer", {{{3, 2, 3}}, {{2, 2}}, {{2, 2}}, {{8, 3}, -0.8f, 0.8f}, {{8, 2}, -0.8f, 0.8f}, {{8}}, {{8}}},
       [](Inputs x) { return lstm_layer(x[0], x[1], x[2], x[3], x[4], x[5], x[6]); }},
      {"lstm_layer/reverse", {{{4, 1, 2}}, {{1, 3}}, {{1, 3}}, {{12, 2}, -0.8f, 0.8f}, {{12, 3}, -0.8f, 0.8f}, {{12}}, {{12}}},
       [](Inputs x) { return lstm_layer(x[0], x[1], x[2], x[3], x[4], x[5], x[6], /*reverse=*/true); }},
      {"gru_layer", {{{3, 2, 3}}, {{2, 2}}, {{6, 3}, -0.8f, 0.8f}, {{6, 2}, -0.8f, 0.8f}, {{6}}, {{6}}},
       [](Inputs x) { return gru_layer(x[0], x[1], x[2], x[3], x[4], x[5]); }},
      {"gru_layer/pytorch_reverse", {{{4, 2, 2}}, {{2, 3}}, {{9, 2}, -0.8f, 0.8f}, {{9, 3}, -0.8f, 0.8f}, {{9}}, {{9}}},
       [](Inputs x) { return gru_layer(x[0], x[1], x[2], x[3], x[4], x[5], GRUVariant::pytorch, /*reverse=*/true); }},
  };
  return table;
}

// The differentiable functions declared in core/ops.h (every one not marked "no grad").
std::set<std::string> declared_ops() {
  std::ifstream header(std::string(LADDER_SOURCE_DIR) + "/core/ops.h");
  REQUIRE(header.good());
  std::set<std::string> names;
  std::string line;
  while (std::getline(header, line)) {
    if (line.find("no grad") != std::string::npos) continue;
    for (const std::string type : {"Tensor ", "ValuesIndices ", "std::vector<Tensor> "}) {
      if (!line.starts_with(type)) continue;
      const std::string rest = line.substr(type.size());
      const size_t paren = rest.find('(');
      const std::string name = rest.substr(0, paren);
      if (paren != std::string::npos && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") == std::string::npos)
        names.insert(name);  // "operator+" and friends are left out: they call the named ops
    }
  }
  return names;
}

}  // namespace

TEST_CASE("every differentiable op passes its gradient check") {
  for (const GradCase& c : cases()) {
    SUBCASE(c.name.c_str()) {
      Generator gen(std::hash<std::string>{}(c.name));
      std::vector<Tensor> inputs;
      for (const InputSpec& spec : c.inputs)
        inputs.push_back(make_input(spec, gen));
      const GradcheckResult result = gradcheck(c.f, inputs, c.tolerance);
      CHECK_MESSAGE(result.ok, c.name, ": ", result.worst);
      for (size_t k = 0; k < inputs.size(); ++k)
        if (inputs[k].requires_grad()) CHECK(result.analytic[k].shape() == inputs[k].shape());
    }
  }
}

TEST_CASE("gradcheck catches a wrong backward") {
  // exp with the derivative of sin: a bug gradcheck must see.
  auto wrong = [](Inputs x) {
    Tensor y = exp(x[0].detach());
    return record("wrong_exp", y, {x[0]}, [x = x[0].detach()](const Tensor& gy, NeedsGrad) -> Grads {
      return {gy * cos(x)};
    });
  };
  Tensor x = tensor({0.5f, 1.0f});
  x.requires_grad_();
  const GradcheckResult result = gradcheck(wrong, {x});
  CHECK(!result.ok);
  CHECK(result.worst.find("input 0") != std::string::npos);
}

TEST_CASE("every differentiable op in core/ops.h has an entry in the table") {
  std::set<std::string> covered;
  for (const GradCase& c : cases()) covered.insert(c.name.substr(0, c.name.find('/')));
  const std::set<std::string> declared = declared_ops();
  CHECK(declared.size() > 50);
  for (const std::string& name : declared) CHECK_MESSAGE(covered.count(name), "no gradient check for ", name);
  for (const std::string& name : covered) CHECK_MESSAGE(declared.count(name), name, " is not declared in core/ops.h");
}

namespace {

// A random shape of rank 0-3 with sizes 1-4 (size 1 is drawn often).
Shape random_shape(Generator& gen) {
  Shape shape(gen.randint(0, 4));
  for (int64_t& size : shape) size = gen.randint(0, 3) == 0 ? 1 : gen.randint(1, 5);
  return shape;
}

// A shape that broadcasts with `shape`: some dims set to 1, some leading dims dropped.
Shape broadcast_partner(const Shape& shape, Generator& gen) {
  Shape partner(shape.begin() + gen.randint(0, static_cast<int64_t>(shape.size()) + 1), shape.end());
  for (int64_t& size : partner)
    if (gen.randint(0, 2) == 0) size = 1;
  return partner;
}

}  // namespace

TEST_CASE("elementwise, broadcasting and reduction ops on random shapes") {
  Generator gen(99);
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&, const Tensor&)>>> binary = {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return b - a; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return a / (b * b + 1.0f); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"where", [](const Tensor& a, const Tensor& b) { return where(tensor({1, 0}, {2, 1, 1, 1}), a, b); }},
  };
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> unary = {
      {"tanh", [](const Tensor& x) { return tanh(x); }},
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"sum", [](const Tensor& x) { return sum(x, {}, true); }},
      {"mean_last", [](const Tensor& x) { return x.dim() ? mean(x, {-1}) : x * 1.0f; }},
      {"logsumexp_first", [](const Tensor& x) { return x.dim() ? logsumexp(x, {0}, true) : x * 1.0f; }},
      {"softmax", [](const Tensor& x) { return x.dim() ? softmax(x, 0) : x * 1.0f; }},
  };
  for (int trial = 0; trial < 12; ++trial) {
    const Shape a_shape = random_shape(gen);
    const Shape b_shape = trial % 2 ? broadcast_partner(a_shape, gen) : a_shape;
    Tensor a = uniform(a_shape, -2, 2, gen), b = uniform(b_shape, -2, 2, gen);
    a.requires_grad_();
    b.requires_grad_();
    for (const auto& [name, f] : binary) {
      INFO("op ", std::string(name));
      CAPTURE(shape_str(a_shape) + " with " + shape_str(b_shape));
      const GradcheckResult ab = gradcheck([&](Inputs x) { return f(x[0], x[1]); }, {a, b});
      CHECK_MESSAGE(ab.ok, ab.worst);
      const GradcheckResult ba = gradcheck([&](Inputs x) { return f(x[1], x[0]); }, {a, b});
      CHECK_MESSAGE(ba.ok, ba.worst);
    }
    for (const auto& [name, f] : unary) {
      INFO("op ", std::string(name));
      CAPTURE(shape_str(a_shape));
      const GradcheckResult r = gradcheck([&](Inputs x) { return f(x[0]); }, {a});
      CHECK_MESSAGE(r.ok, r.worst);
    }
  }
}
