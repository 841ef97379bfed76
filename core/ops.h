// Every op on tensors. Each one is differentiable unless its comment says "no grad".
// Definitions live in core/ops/*.cpp, one file per family, forward and backward side by side.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/kernels/vq_attention.h"
#include "core/random.h"
#include "core/tensor.h"

namespace ladder {

// ---- elementwise (core/ops/unary.cpp) ----
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
enum class GeluApprox { none, tanh };
Tensor gelu(const Tensor& x, GeluApprox approximate = GeluApprox::none);
Tensor elu(const Tensor& x, float alpha = 1);
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x, float beta = 1, float threshold = 20);
Tensor pow(const Tensor& x, float exponent);
Tensor clamp(const Tensor& x, float low, float high);
Tensor clone(const Tensor& x);

// ---- binary, with NumPy broadcasting (core/ops/binary.cpp) ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);  // ties share the gradient equally
Tensor minimum(const Tensor& a, const Tensor& b);
// With a scalar (core/ops/unary.cpp): x + s, x * s, x / s, s - x, s / x.
Tensor add(const Tensor& x, float s);
Tensor mul(const Tensor& x, float s);
Tensor div(const Tensor& x, float s);
Tensor rsub(const Tensor& x, float s);
Tensor rdiv(const Tensor& x, float s);

Tensor operator-(const Tensor& x);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& x, float s);
Tensor operator-(const Tensor& x, float s);
Tensor operator*(const Tensor& x, float s);
Tensor operator/(const Tensor& x, float s);
Tensor operator+(float s, const Tensor& x);
Tensor operator-(float s, const Tensor& x);
Tensor operator*(float s, const Tensor& x);
Tensor operator/(float s, const Tensor& x);

// ---- reductions (core/ops/reduce.cpp); dims = {} means every dim ----
Tensor sum(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
// correction = 1: unbiased (divide by n - 1) as in PyTorch; 0: the population variance.
Tensor var(const Tensor& x, const Dims& dims = {}, bool keepdim = false, int correction = 1);
Tensor logsumexp(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor amax(const Tensor& x, const Dims& dims = {}, bool keepdim = false);  // ties share the gradient
Tensor amin(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
struct ValuesIndices {
  Tensor values;
  Tensor indices;  // no grad; positions along the reduced dim, as floats
};
// Along one dim; the gradient goes to the first position that holds the extreme value.
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);  // no grad
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);  // no grad
// Sums a broadcast gradient back down to `shape` (the reverse of broadcasting).
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- matmul (core/ops/matmul.cpp) ----
struct MatmulFlags {
  bool transpose_a = false;  // use a's last two dims swapped, without copying
  bool transpose_b = false;
};
// (...,M,K) @ (...,K,N) -> (...,M,N); batch dims broadcast; a 1-d operand acts as a row/column.
Tensor matmul(const Tensor& a, const Tensor& b, MatmulFlags flags = {});
// x (...,in) @ weight (out,in)^T + bias (out) -> (...,out), as matmul then add, in one pass fewer:
// the output starts as the bias rows and the GEMM adds into it. bias may be undefined.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

// ---- shape (core/ops/shape.cpp) ----
Tensor reshape(const Tensor& x, const Shape& shape);  // one size may be -1; shares the values
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& x, const Dims& order);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
// Python's x[start:end:step] along dim; negative start/end count from the end, out of range clips.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor concat(const std::vector<Tensor>& xs, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor expand(const Tensor& x, const Shape& shape);  // broadcast to shape (copies)

// ---- indexing (core/ops/index.cpp); index tensors hold whole numbers as floats ----
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);  // index: 1-d
// weight (V,D), ids (...) -> (...,D); repeated ids accumulate their gradients.
Tensor embedding(const Tensor& weight, const Tensor& ids);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);  // out[i][j] = x[index[i][j]][j] (dim 0)
// Both send exactly 0 (selected, never multiplied by 0) to the positions they did not take, so
// an inf or NaN computed from a filled value cannot leak into the gradient.
Tensor masked_fill(const Tensor& x, const Tensor& mask, float value);  // where mask != 0; mask broadcasts
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);  // a where condition != 0
Tensor one_hot(const Tensor& index, int64_t num_classes);  // no grad; (...) -> (...,C)
Tensor tril_mask(int64_t rows, int64_t cols, int64_t diagonal = 0);  // no grad; 1 on and below
Tensor triu_mask(int64_t rows, int64_t cols, int64_t diagonal = 0);  // no grad; 1 on and above

// ---- neural-network math (core/ops/nn.cpp) ----
// A row that is entirely -inf gives NaN, as in PyTorch (nothing to normalise by); attention that
// may mask every key of a row uses masked_softmax, which gives zeros there.
Tensor softmax(const Tensor& x, int64_t dim = -1);
Tensor log_softmax(const Tensor& x, int64_t dim = -1);
enum class Reduction { mean, sum, none };
struct CrossEntropyOptions {
  Tensor weight;             // (C): per-class weights; mean then divides by the summed weights
  int64_t ignore_index = -100;  // targets equal to it add nothing
  Reduction reduction = Reduction::mean;
};
// logits (...,C) with the class dim last, targets (...) class indices -> the mean (or sum, or (...)).
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& options = {});
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::mean);
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets,
                                        Reduction reduction = Reduction::mean);
// Normalises over the trailing dims given by normalized_shape (as in PyTorch); weight and bias
// (optional) have that shape.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, float eps = 1e-5f);
// RMS norm over the same trailing dims: y = x / sqrt(mean(x^2) + eps) * weight (no centring, no
// bias); weight (optional) has shape normalized_shape.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {}, float eps = 1e-6f);
Tensor dropout(const Tensor& x, float p, bool training, Generator& gen = default_generator());
Tensor cumsum(const Tensor& x, int64_t dim);

// ---- masked softmax (core/ops/masked_softmax.cpp) ----
// Softmax over the last dim of x (..., S) taken over the visible keys only: visible (..., S) holds
// 1 (visible) or 0 (masked) and its leading dims broadcast to x's (scores (B,Q,S) with a key padding
// mask (B,1,S)). Masked keys get exactly 0 and no gradient, whatever x holds there; a row with no
// visible key is all 0 and passes no gradient (a plain softmax over -inf would give NaN).
Tensor masked_softmax(const Tensor& x, const Tensor& visible);

// ---- additive attention scores (core/ops/additive_scores.cpp) ----
// Bahdanau's score of every query against every key, from their projections q = W_q queries
// (B,Q,H) and k = W_k keys (B,S,H), and w_v (1,H) -> (B,Q,S): score = w_v . tanh(q + k). Dims between
// B and Q (heads) are allowed when q and k agree on them. Fused: one pass over the (B,Q,S,H) pairs
// forward and one backward.
Tensor additive_scores_projected(const Tensor& q, const Tensor& k, const Tensor& w_v);
// The same from plain ops (add, tanh, matmul): the version to read, and the fused op's reference.
Tensor additive_scores_projected_naive(const Tensor& q, const Tensor& k, const Tensor& w_v);

// ---- images (core/ops/conv.cpp); layout (N,C,H,W) ----
struct Conv2dOptions {
  int64_t stride = 1;
  int64_t padding = 0;
};
// x (N,C,H,W), weight (O,C,KH,KW), bias (O) or undefined -> (N,O,OH,OW)
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, Conv2dOptions options = {});
struct Pool2dOptions {
  int64_t kernel = 2;
  int64_t stride = 0;  // 0: the same as kernel
  int64_t padding = 0;
};
Tensor max_pool2d(const Tensor& x, Pool2dOptions options = {});
Tensor avg_pool2d(const Tensor& x, Pool2dOptions options = {});  // padding counts as zeros
// x (N,C) or (N,C,H,W). Training: normalise with the batch statistics and update the running ones
// in place (running_var gets the unbiased variance); eval: normalise with the running ones.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, float momentum = 0.1f,
                  float eps = 1e-5f);

// ---- attention (core/ops/attention.cpp); q (B,H,T,D), k and v (B,H,S,D) ----
// Block-sparse attention (BigBird's pattern: nn/attention/bigbird_pattern.h): queries and keys cut
// into blocks of `block` positions; query block t sees only the key blocks key_blocks[t].
struct BlockSparsity {
  int64_t block = 64;
  std::vector<std::vector<int64_t>> key_blocks;  // ceil(T/block) lists, each increasing, no repeats
};
struct SdpaOptions {
  std::optional<float> scale;  // multiplies q . k; unset: 1/sqrt(D)
  // Query i sees keys j <= i + causal_offset. The queries are the last T positions of a sequence
  // whose first S are the keys only when causal_offset = S - T (a KV cache holding S - T earlier
  // positions); the default 0 aligns query 0 with key 0, as PyTorch's is_causal does.
  bool causal = false;
  int64_t causal_offset = 0;
  Tensor key_padding_mask;  // (B,S): 1 for a real key, 0 for padding (the opposite of PyTorch's)
  float dropout = 0;        // drops weights (and scales the rest by 1/(1-p)) when training
  bool training = true;
  Generator* generator = nullptr;  // draws the dropout mask's seed; null: default_generator()
  // When set, the fused op visits only the listed key blocks: time and memory grow with the
  // blocks listed, not with T*S. The naive twin applies the same pattern as a dense mask.
  std::shared_ptr<const BlockSparsity> block_sparsity;
};
// softmax(scale * q k^T, hidden keys removed) v -> (B,H,T,D). A query that sees no key gets zeros
// and passes no gradient. Fused and tiled (FlashAttention): memory O(B*H*T*D), never (T,S).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const SdpaOptions& options = {});
// The same from plain ops (matmul, where, softmax, matmul), holding the (B,H,T,S) weights: the
// version to read, and the reference the fused op is tested against.
Tensor scaled_dot_product_attention_naive(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const SdpaOptions& options = {});
// The weights the naive version multiplies v by -> (B,H,T,S), for attention maps: rows sum to 1
// (0 for a query that sees no key), after dropout when it applies.
Tensor attention_weights(const Tensor& q, const Tensor& k, const SdpaOptions& options = {});

// ---- linear attention (core/ops/linear_attention.cpp) ----
// On queries and keys already through a feature map phi with non-negative values (nn/attention
// chooses phi), or raw with elu_features: q (B,H,T,M), k (B,H,S,M), v (B,H,S,D).
struct LinearAttentionOptions {
  bool causal = false;      // query i sees keys j <= i; needs T = S
  Tensor key_padding_mask;  // (B,S): 1 for a real key, 0 for padding
  float eps = 1e-6f;        // added to the normaliser: a query that meets no key gets 0, not NaN
  int64_t chunk = 64;       // causal: positions per chunk of the fused product
  // q and k are raw and phi = elu + 1 is applied here; causal without padding: inside the chunks,
  // so that the feature tensors are never stored
  bool elu_features = false;
};
// out_i = sum_j (q_i . k_j) v_j / (sum_j q_i . k_j + eps) over the keys query i sees -> (B,H,T,D).
// Non-causal: through S = sum_j k_j v_j^T and z = sum_j k_j, O(T M D). Causal: the fused chunked
// product, O(T C (M + D) + T M D) for chunks of C positions. Neither holds a (T,S) matrix.
Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const LinearAttentionOptions& options = {});
// The same through the (B,H,T,S) matrix it implies: the reference the fast one is tested against.
Tensor linear_attention_naive(const Tensor& q, const Tensor& k, const Tensor& v,
                              const LinearAttentionOptions& options = {});
// That matrix -> (B,H,T,S): q_i . k_j over the keys query i sees, each row divided by its sum + eps.
Tensor linear_attention_weights(const Tensor& q, const Tensor& k, const LinearAttentionOptions& options = {});
// out_i = sum_{j<=i} (q_i . k_j) v_j: q and k (B,H,T,M), v (B,H,T,E) -> (B,H,T,E), fused and chunked
// (core/kernels/linear_attention.h); its memory grows as T*(M+E), never T*T or T*M*E.
Tensor causal_linear_product(const Tensor& q, const Tensor& k, const Tensor& v, int64_t chunk = 64);
// The same as tril(q k^T) v with plain ops.
Tensor causal_linear_product_naive(const Tensor& q, const Tensor& k, const Tensor& v);

// ---- the delta rule (core/ops/delta_rule.cpp) ----
// Causal linear attention that overwrites its state (core/kernels/delta_rule.h): q and k (B,H,T,M),
// L2-normalised by the caller, v (B,H,T,E), the write strengths beta in (0, 1) and, gated, the
// decays log_alpha <= 0 (B,H,T; undefined: ungated) -> (B,H,T,E). Chunked, C positions at a
// time, forward and backward. Never a (T,M,E) tensor.
Tensor delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& log_alpha,
                  int64_t chunk = 64);
// The same one position at a time in double precision: the reference the fast one is tested against.
Tensor delta_rule_naive(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& log_alpha);

// ---- Transformer-VQ attention (core/ops/vq_attention.cpp); q, khat, v (B,H,T,D) ----
// khat holds the quantised keys, each row the code of its head's codebook (H,S,D) that code_index
// names: (B,H,T) row-major, as nearest_codes gives it (one codebook per head; one shared codebook
// is H = 1); -1 hides a key (padding): no query reads it. vq_attention reads every key as its code
// (a window score is then an entry of q's scores against the codebook, which the cache needs
// anyway) and checks that khat holds those codes; khat carries the gradient the window gives its
// keys. The naive twin and the weights read khat itself inside each query's window.
struct VQAttentionOptions {
  int64_t block = 512;         // L: positions per block; T need not be a multiple of it
  std::optional<float> scale;  // multiplies every score; unset: 1/sqrt(D)
  bool causal = true;          // false: the encoder form, every query reads every key
  // Keys and values learn from the queries of their own block only (the paper's grad_thru_cache = 0).
  bool stop_cache_gradient = false;
};
// Transformer-XL's relative position term inside the band |i - j| <= L: scale * qp_i . r_{i-j} added
// to the score of query i and key j. Both undefined: no position term.
struct VQPositionBias {
  Tensor queries;  // qp (B,H,T,D): the queries as they meet positions (the model's q + v)
  // r (H,P,D): row m for offset L - m (the key at i - L + m), P = L + 1 causal (offsets L..0), 2L + 1 both ways (L..-L)
  Tensor offsets;
};
// softmax(scale * (q khat^T + band) + mask) v -> (B,H,T,D), computed block by block in O(T (L + S) D):
// each block reads its window exactly (causal: itself and the block before; the encoder form: the
// block before, itself and the one after) and every other key it sees through a cache of per-code
// counts and value sums (core/kernels/vq_attention.h). Gradients: q, v, qp and r exactly as the
// quadratic formula gives them; khat only from the queries whose window holds it (the others read
// its code, as in the paper); with stop_cache_gradient, keys and values only from their own block's
// queries; codebook and code_index: none (the codebook learns by EMA).
Tensor vq_attention(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                    const Tensor& codebook, const Tensor& v, const VQAttentionOptions& options = {},
                    const VQPositionBias& bias = {});
// The same through the (B,H,T,T) weights, with plain ops: the dense reference vq_attention is tested against.
Tensor vq_attention_naive(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                          const Tensor& codebook, const Tensor& v, const VQAttentionOptions& options = {},
                          const VQPositionBias& bias = {});
// Those weights -> (B,H,T,T): the masked softmax of scale * (q . key + band), where the key is khat
// inside the query's window and, beyond it, the code that code_index names (a constant: no gradient).
Tensor vq_attention_weights(const Tensor& q, const Tensor& khat, const std::vector<int64_t>& code_index,
                            const Tensor& codebook, const VQAttentionOptions& options = {},
                            const VQPositionBias& bias = {});
// Generation (causal): attends the next T positions (q, v (B,H,T,D), code_index (B,H,T): each key is
// the code its index names; qp (B,H,T,D)) to everything the cache holds and adds them to it, S dot
// products and O((2L + S) D) more work per position whatever the context; the rows equal
// vq_attention's for the same positions of the whole sequence with khat the codes. Start from an
// empty VQAttentionCache{} and keep B, H, D, S and the block for its lifetime.
Tensor vq_attention_step(VQAttentionCache& cache, const Tensor& q,  // no grad
                         const std::vector<int64_t>& code_index, const Tensor& codebook, const Tensor& v,
                         const VQAttentionOptions& options = {}, const VQPositionBias& bias = {});

// ---- recurrent layers (core/ops/recurrent.cpp) ----
// One layer over a whole sequence, fused: the input projection of every step in one GEMM, one
// GEMM per step for the hidden state, the gate nonlinearities in one loop, and a hand-written
// backward through time. x (T,B,I); states (B,H); PyTorch's weight layouts: w_ih (G*H, I),
// w_hh (G*H, H), biases (G*H), with G gates. `reverse` runs from the last step to the first
// (the backward half of a bidirectional layer); outputs stay indexed by input position.
// Returns every step's state: out[t] is the state after reading x[t].
//
// h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act = tanh (or relu).  -> (T,B,H)
Tensor rnn_layer(const Tensor& x, const Tensor& h0, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                 const Tensor& b_hh, bool relu = false, bool reverse = false);
// Gates i, f, g, o (rows of the weights in that order):
//   c_t = f * c_{t-1} + i * g,  h_t = o * tanh(c_t)  -> (T,B,2H): h_t in [..., :H], c_t in [..., H:]
Tensor lstm_layer(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_ih, const Tensor& w_hh,
                  const Tensor& b_ih, const Tensor& b_hh, bool reverse = false);
// Gates r, z, n:  h_t = z * h_{t-1} + (1 - z) * n  -> (T,B,H), with the candidate
//   GRUVariant::classic (Cho et al., d2l): n = tanh(x W_in^T + b_in + (r * h_{t-1}) W_hn^T + b_hn)
//   GRUVariant::pytorch (PyTorch, cuDNN):  n = tanh(x W_in^T + b_in + r * (h_{t-1} W_hn^T + b_hn))
enum class GRUVariant { classic, pytorch };
Tensor gru_layer(const Tensor& x, const Tensor& h0, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                 const Tensor& b_hh, GRUVariant variant = GRUVariant::classic, bool reverse = false);

// ---- vector quantisation (core/ops/vector_quantize.cpp); keys (B,H,T,d), codes (H,S,d) ----
// One codebook of S codes per head (one shared codebook is H = 1). nn::VectorQuantizer learns it.
struct CodeAssignment {
  std::vector<int64_t> indices;  // (B,H,T) row-major: the nearest code of the key's head, ties to the lowest
  Tensor distances;              // (B,H,T): |k - code|^2 for that code; no grad
};
// No grad. |k|^2 - 2 k.c + |c|^2 with k.c as one GEMM per block of keys (core/kernels/vector_quantize.h).
CodeAssignment nearest_codes(const Tensor& keys, const Tensor& codes);
// The same by direct loops over every key and code, in double: the reference for nearest_codes.
CodeAssignment nearest_codes_naive(const Tensor& keys, const Tensor& codes);
// codes (H,S,d), indices of shape index_shape (B,H,T) -> (B,H,T,d), each key's code.
Tensor gather_codes(const Tensor& codes, const std::vector<int64_t>& indices, const Shape& index_shape);  // no grad
// The straight-through estimator: the forward is `quantised` exactly; the backward passes the
// gradient to x unchanged (the rounding to a code counts as the identity) and none to `quantised`.
Tensor straight_through(const Tensor& x, const Tensor& quantised);

}  // namespace ladder
