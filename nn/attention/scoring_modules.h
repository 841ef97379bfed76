// The scoring functions of scoring.h as modules: they own their parameters (under the names of
// d2l's PyTorch modules) and apply dropout to the weights in training mode only.
// forward: queries (B,Q,Dq), keys (B,S,Dk), values (B,S,Dv), mask -> context (B,Q,Dv), weights (B,Q,S).
#pragma once

#include <memory>

#include "nn/attention/scoring.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace ladder::nn {

// What the scoring modules share: dropout on the weights, drawn from a generator of their own (as
// the Dropout layer does), and only in training mode.
class ScoringModule : public Module {
 protected:
  ScoringModule(std::string type_name, float dropout, Generator& gen);
  AttentionOptions options(const KeyMask& mask);  // the mask, with dropout if training
  std::string describe_dropout() const;

 private:
  float dropout_;
  Generator gen_;
};

// Dot product, scaled by 1/sqrt(D) unless `scaled` is false. No parameters.
class DotProductAttention : public ScoringModule {
 public:
  explicit DotProductAttention(bool scaled = true, float dropout = 0, Generator& gen = default_generator());
  AttentionOutput forward(const Tensor& queries, const Tensor& keys, const Tensor& values, const KeyMask& mask = {});

 protected:
  std::string describe() const override;

 private:
  bool scaled_;
};

// Bahdanau's additive attention: score = w_v . tanh(W_q q + W_k k), H = hidden_size.
class AdditiveAttention : public ScoringModule {
 public:
  AdditiveAttention(int64_t query_size, int64_t key_size, int64_t hidden_size, float dropout = 0,
                    Generator& gen = default_generator());
  AttentionOutput forward(const Tensor& queries, const Tensor& keys, const Tensor& values, const KeyMask& mask = {});

  // A decoder asks new queries of the same keys at every step: it projects them once, keys (B,S,Dk)
  // -> W_k k (B,S,H), and passes the projection to forward_projected, which gives what forward gives.
  Tensor project_keys(const Tensor& keys);
  AttentionOutput forward_projected(const Tensor& queries, const Tensor& projected_keys, const Tensor& values,
                                    const KeyMask& mask = {});

  // Linear layers without bias, named as in d2l: W_q.weight (H,Dq), W_k.weight (H,Dk), w_v.weight (1,H).
  std::shared_ptr<Linear> W_q, W_k, w_v;

 protected:
  std::string describe() const override;
};

// Luong's general (bilinear) attention: score = q^T W k.
class GeneralAttention : public ScoringModule {
 public:
  GeneralAttention(int64_t query_size, int64_t key_size, float dropout = 0, Generator& gen = default_generator());
  AttentionOutput forward(const Tensor& queries, const Tensor& keys, const Tensor& values, const KeyMask& mask = {});

  Tensor weight;  // (Dq,Dk), drawn as PyTorch draws a Linear(Dk, Dq): U(-1/sqrt(Dk), 1/sqrt(Dk))

 protected:
  std::string describe() const override;
};

}  // namespace ladder::nn
