#include "nn/attention/scoring.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"

namespace ladder::nn {

namespace {

Shape batch_dims(const Tensor& x) { return Shape(x.shape().begin(), x.shape().end() - 2); }

// queries (B,..,Q,Dq) and keys (B,..,S,Dk) agree on their batch dims.
void check_queries_keys(const char* op, const Tensor& queries, const Tensor& keys) {
  if (queries.dim() < 3 || keys.dim() != queries.dim() || batch_dims(queries) != batch_dims(keys))
    fail(op, "queries ", shape_str(queries.shape()), " and keys ", shape_str(keys.shape()),
         " must be (B,Q,Dq) and (B,S,Dk) with the same B (and the same dims between B and Q, if any)");
}

void check_same_size(const char* op, const char* a_name, const Tensor& a, int64_t a_dim, const char* b_name,
                     const Tensor& b, int64_t b_dim, const char* what) {
  if (a.size(a_dim) != b.size(b_dim))
    fail(op, a_name, " ", shape_str(a.shape()), " and ", b_name, " ", shape_str(b.shape()), " must agree on ", what,
         ": ", a.size(a_dim), " vs ", b.size(b_dim));
}

// Dot-product scores also need queries and keys of one size D.
void check_dot(const char* op, const Tensor& queries, const Tensor& keys) {
  check_queries_keys(op, queries, keys);
  check_same_size(op, "queries", queries, -1, "keys", keys, -1, "their size D (the last dim)");
}

void check_weight(const char* op, const char* name, const Tensor& w, const Shape& expected, const char* layout) {
  if (w.shape() != expected)
    fail(op, name, " ", shape_str(w.shape()), " must be ", layout, " = ", shape_str(expected));
}

}  // namespace

AttentionOutput attend(const Tensor& scores, const Tensor& values, const AttentionOptions& options) {
  if (values.dim() != scores.dim() || batch_dims(values) != batch_dims(scores) || values.size(-2) != scores.size(-1))
    fail("attend", "values ", shape_str(values.shape()), " must be (B,S,Dv) for scores ", shape_str(scores.shape()),
         " (B,Q,S): the same B and one value per key");
  if (!(options.dropout >= 0 && options.dropout < 1))
    fail("attend", "dropout must be in [0, 1), got ", options.dropout);
  const Tensor weights = masked_softmax(scores, options.mask);  // (B,Q,S)
  const Tensor used = options.dropout > 0
                          ? dropout(weights, options.dropout, true, options.generator ? *options.generator : default_generator())
                          : weights;
  return {matmul(used, values), weights};  // (B,Q,S) @ (B,S,Dv) -> (B,Q,Dv)
}

Tensor dot_scores(const Tensor& queries, const Tensor& keys) {
  check_dot("dot_scores", queries, keys);
  return matmul(queries, keys, {.transpose_b = true});  // (B,Q,D) @ (B,S,D)^T -> (B,Q,S)
}

Tensor scaled_dot_scores(const Tensor& queries, const Tensor& keys) {
  check_dot("scaled_dot_scores", queries, keys);
  return matmul(queries, keys, {.transpose_b = true}) / std::sqrt(static_cast<float>(queries.size(-1)));
}

Tensor additive_scores(const Tensor& queries, const Tensor& keys, const Tensor& W_q, const Tensor& W_k,
                       const Tensor& w_v) {
  const char* op = "additive_scores";
  check_queries_keys(op, queries, keys);
  if (w_v.dim() != 2 || w_v.size(0) != 1)
    fail(op, "w_v ", shape_str(w_v.shape()), " must be (1,H), the weight of a Linear(H, 1)");
  const int64_t hidden = w_v.size(1);
  check_weight(op, "W_q", W_q, {hidden, queries.size(-1)}, "(H,Dq)");
  check_weight(op, "W_k", W_k, {hidden, keys.size(-1)}, "(H,Dk)");
  // Project first, then score every pair: tanh(q + k) over (B,Q,S,H), times w_v (core/ops.h).
  return additive_scores_projected(matmul(queries, W_q, {.transpose_b = true}),  // (B,Q,H)
                                   matmul(keys, W_k, {.transpose_b = true}),     // (B,S,H)
                                   w_v);
}

Tensor general_scores(const Tensor& queries, const Tensor& keys, const Tensor& W) {
  check_queries_keys("general_scores", queries, keys);
  check_weight("general_scores", "W", W, {queries.size(-1), keys.size(-1)}, "(Dq,Dk)");
  // (q^T W) k: the queries are projected, since a decoder step has fewer queries than keys.
  return matmul(matmul(queries, W), keys, {.transpose_b = true});  // (B,Q,Dk) @ (B,S,Dk)^T -> (B,Q,S)
}

AttentionOutput dot_attention(const Tensor& queries, const Tensor& keys, const Tensor& values,
                              const AttentionOptions& options) {
  return attend(dot_scores(queries, keys), values, options);
}

AttentionOutput scaled_dot_attention(const Tensor& queries, const Tensor& keys, const Tensor& values,
                                     const AttentionOptions& options) {
  return attend(scaled_dot_scores(queries, keys), values, options);
}

AttentionOutput additive_attention(const Tensor& queries, const Tensor& keys, const Tensor& values, const Tensor& W_q,
                                   const Tensor& W_k, const Tensor& w_v, const AttentionOptions& options) {
  return attend(additive_scores(queries, keys, W_q, W_k, w_v), values, options);
}

AttentionOutput general_attention(const Tensor& queries, const Tensor& keys, const Tensor& values, const Tensor& W,
                                  const AttentionOptions& options) {
  return attend(general_scores(queries, keys, W), values, options);
}

}  // namespace ladder::nn
