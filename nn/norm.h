// Normalisation layers: LayerNorm and RMSNorm (per example) and BatchNorm (per channel, over the batch).
#pragma once

#include "nn/module.h"

namespace ladder::nn {

class LayerNorm : public Module {
 public:
  explicit LayerNorm(Shape normalized_shape, float eps = 1e-5f, bool affine = true);
  Tensor forward(const Tensor& x) override;

  Tensor weight, bias;  // normalized_shape, or undefined without affine

 protected:
  std::string describe() const override;

 private:
  Shape normalized_shape_;
  float eps_;
};

// RMSNorm over the last dim, of size dim: x / sqrt(mean(x^2) + eps) * weight (rms_norm in
// core/ops.h). As torch.nn.RMSNorm: one parameter, `weight` (dim), starting at ones.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, float eps = 1e-6f);
  Tensor forward(const Tensor& x) override;

  Tensor weight;  // (dim)

 protected:
  std::string describe() const override;

 private:
  float eps_;
};

// BatchNorm over channel dim 1: (N,C) for BatchNorm1d, (N,C,H,W) for BatchNorm2d. Training
// normalises with the batch statistics and updates the running ones; eval uses the running ones.
class BatchNorm : public Module {
 public:
  BatchNorm(const char* type_name, int64_t channels, int64_t input_dims, float eps, float momentum);
  Tensor forward(const Tensor& x) override;

  Tensor weight, bias;                 // (C)
  Tensor running_mean, running_var;    // (C), buffers

 protected:
  std::string describe() const override;

 private:
  int64_t input_dims_;
  float eps_, momentum_;
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t channels, float eps = 1e-5f, float momentum = 0.1f)
      : BatchNorm("BatchNorm1d", channels, 2, eps, momentum) {}
};

class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t channels, float eps = 1e-5f, float momentum = 0.1f)
      : BatchNorm("BatchNorm2d", channels, 4, eps, momentum) {}
};

}  // namespace ladder::nn
