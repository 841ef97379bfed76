// Convolution and pooling layers on (N,C,H,W) images, and Flatten to hand them to Linear layers.
#pragma once

#include "core/ops.h"
#include "nn/module.h"

namespace ladder::nn {

class Conv2d : public Module {
 public:
  // Weights and bias start as PyTorch's: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in * k * k.
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, Conv2dOptions options = {}, bool bias = true,
         Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;  // (N,in,H,W) -> (N,out,OH,OW)

  Tensor weight;  // (out, in, k, k)
  Tensor bias;    // (out), or undefined

 protected:
  std::string describe() const override;

 private:
  Conv2dOptions options_;
};

// Max or average pooling over k x k windows (stride defaults to k).
class Pool2d : public Module {
 public:
  using Function = Tensor (*)(const Tensor&, Pool2dOptions);
  Pool2d(const char* type_name, Function f, int64_t kernel, int64_t stride, int64_t padding)
      : Module(type_name), f_(f), options_{kernel, stride, padding} {}
  Tensor forward(const Tensor& x) override { return f_(x, options_); }

 protected:
  std::string describe() const override;

 private:
  Function f_;
  Pool2dOptions options_;
};

struct MaxPool2d : Pool2d {
  explicit MaxPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0)
      : Pool2d("MaxPool2d", max_pool2d, kernel, stride, padding) {}
};
struct AvgPool2d : Pool2d {
  explicit AvgPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0)
      : Pool2d("AvgPool2d", avg_pool2d, kernel, stride, padding) {}
};

// Flattens dims start_dim.. into one: (N,C,H,W) -> (N, C*H*W) by default.
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1) : Module("Flatten"), start_dim_(start_dim) {}
  Tensor forward(const Tensor& x) override;

 private:
  int64_t start_dim_;
};

}  // namespace ladder::nn
