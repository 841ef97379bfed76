// Elementwise ops of one tensor: y = f(x), and dy/dx written right beside it.
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/kernels/fast_math.h"
#include "core/ops/elementwise.h"

namespace ladder {

namespace {

float sigmoid_of(float v) { return fast_sigmoid(v); }

}  // namespace

Tensor neg(const Tensor& x) {
  return unary_op("neg", x, [](float v) { return -v; }, -1.0f);
}

Tensor exp(const Tensor& x) {  // d/dx e^x = e^x = y
  return unary_op("exp", x, [](float v) { return fast_exp(v); }, [](float, float y) { return y; });
}

Tensor log(const Tensor& x) {
  return unary_op("log", x, [](float v) { return std::log(v); }, [](float v, float) { return 1 / v; });
}

Tensor sqrt(const Tensor& x) {  // d/dx x^(1/2) = 1 / (2 sqrt(x))
  return unary_op("sqrt", x, [](float v) { return std::sqrt(v); }, [](float, float y) { return 0.5f / y; });
}

Tensor abs(const Tensor& x) {  // the kink at 0 gets gradient 0, as in PyTorch
  return unary_op("abs", x, [](float v) { return std::fabs(v); },
                  [](float v, float) { return v > 0 ? 1.0f : (v < 0 ? -1.0f : 0.0f); });
}

Tensor sin(const Tensor& x) {
  return unary_op("sin", x, [](float v) { return std::sin(v); }, [](float v, float) { return std::cos(v); });
}

Tensor cos(const Tensor& x) {
  return unary_op("cos", x, [](float v) { return std::cos(v); }, [](float v, float) { return -std::sin(v); });
}

Tensor tanh(const Tensor& x) {
  return unary_op("tanh", x, [](float v) { return fast_tanh(v); },
                  // exercise: tanh_backward
                  [](float, float y) { return 1 - y * y; }  // d/dx tanh(x), from y = tanh(x): 1 - tanh^2
                  // end of exercise: tanh_backward
  );
}

Tensor sigmoid(const Tensor& x) {  // d/dx s = s (1 - s)
  return unary_op("sigmoid", x, sigmoid_of, [](float, float y) { return y * (1 - y); });
}

Tensor relu(const Tensor& x) {
  return unary_op("relu", x, [](float v) { return v > 0 || v != v ? v : 0.0f; },  // NaN stays NaN
                  [](float v, float) { return v > 0 ? 1.0f : 0.0f; });
}

Tensor gelu(const Tensor& x, GeluApprox approximate) {
  if (approximate == GeluApprox::tanh) {
    // y = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3)
    constexpr float k = 0.7978845608028654f, c = 0.044715f;
    return unary_op("gelu_tanh", x,
                    [](float v) { return 0.5f * v * (1 + std::tanh(k * (v + c * v * v * v))); },
                    [](float v, float) {
                      // 1 - tanh(u)^2 as 1 / cosh(u)^2: where tanh(u) rounds to nearly 1, 1 - t*t keeps no digits.
                      const float u = k * (v + c * v * v * v), sech = 1 / std::cosh(u);
                      return 0.5f * (1 + std::tanh(u)) + 0.5f * v * sech * sech * k * (1 + 3 * c * v * v);
                    });
  }
  // y = x Phi(x) with Phi the standard normal CDF; dy/dx = Phi(x) + x phi(x). When a gradient will
  // be wanted the forward writes dy/dx too, while Phi(x) is at hand: the backward is then one
  // multiply instead of Phi and phi computed again.
  constexpr auto inv_sqrt_2pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
  const bool wants_grad = any_requires_grad({x});
  Tensor y = empty(x.shape()), slope = wants_grad ? empty(x.shape()) : Tensor();
  const float* px = x.data();
  float *py = y.data(), *pd = wants_grad ? slope.data() : nullptr;
  parallel_for(x.numel(), 2, [&](int64_t begin, int64_t end) {
    if (pd) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) {
        const float v = px[i], cdf = fast_normal_cdf(v);
        py[i] = v * cdf;
        pd[i] = cdf + v * inv_sqrt_2pi * fast_exp(-0.5f * v * v);
      }
    } else {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) py[i] = px[i] * fast_normal_cdf(px[i]);
    }
  });
  if (!wants_grad) return y;
  return record("gelu", y, {x}, Saved{x}, [slope](const Tensor& gy, NeedsGrad) -> Grads { return {gy * slope}; });
}

Tensor elu(const Tensor& x, float alpha) {  // below 0: alpha (e^x - 1), whose slope is y + alpha
  return unary_op("elu", x, [alpha](float v) { return v > 0 ? v : alpha * fast_expm1(v); },
                  [alpha](float v, float y) { return v > 0 ? 1.0f : y + alpha; });
}

Tensor silu(const Tensor& x) {  // y = x s(x); dy/dx = s(x) (1 + x (1 - s(x)))
  return unary_op("silu", x, [](float v) { return v * sigmoid_of(v); },
                  [](float v, float) {
                    const float s = sigmoid_of(v);
                    return s * (1 + v * (1 - s));
                  });
}

Tensor softplus(const Tensor& x, float beta, float threshold) {
  // y = log(1 + e^(beta x)) / beta, and just x once beta x > threshold (where they agree in float).
  return unary_op("softplus", x,
                  [beta, threshold](float v) {
                    return beta * v > threshold ? v : std::log1p(std::exp(beta * v)) / beta;
                  },
                  [beta, threshold](float v, float) {
                    return beta * v > threshold ? 1.0f : sigmoid_of(beta * v);
                  });
}

Tensor pow(const Tensor& x, float exponent) {  // d/dx x^p = p x^(p-1); x^0 = 1 has slope 0, even at 0
  return unary_op("pow", x, [exponent](float v) { return std::pow(v, exponent); },
                  [exponent](float v, float) { return exponent == 0 ? 0.0f : exponent * std::pow(v, exponent - 1); });
}

Tensor clamp(const Tensor& x, float low, float high) {
  if (low > high) fail("clamp", "low ", low, " is greater than high ", high);
  return unary_op("clamp", x, [low, high](float v) { return std::min(std::max(v, low), high); },
                  [low, high](float v, float) { return v >= low && v <= high ? 1.0f : 0.0f; });
}

Tensor clone(const Tensor& x) {
  return unary_op("clone", x, [](float v) { return v; }, 1.0f);
}

// ---- with a scalar ----

Tensor add(const Tensor& x, float s) {
  return unary_op("add_scalar", x, [s](float v) { return v + s; }, 1.0f);
}

Tensor mul(const Tensor& x, float s) {
  return unary_op("mul_scalar", x, [s](float v) { return v * s; }, s);
}

Tensor div(const Tensor& x, float s) {
  return unary_op("div_scalar", x, [s](float v) { return v / s; }, 1 / s);
}

Tensor rsub(const Tensor& x, float s) {  // s - x
  return unary_op("rsub_scalar", x, [s](float v) { return s - v; }, -1.0f);
}

Tensor rdiv(const Tensor& x, float s) {  // s / x; d/dx = -s / x^2 = -y / x
  return unary_op("rdiv_scalar", x, [s](float v) { return s / v; }, [](float v, float y) { return -y / v; });
}

Tensor operator-(const Tensor& x) { return neg(x); }
Tensor operator+(const Tensor& x, float s) { return add(x, s); }
Tensor operator-(const Tensor& x, float s) { return add(x, -s); }
Tensor operator*(const Tensor& x, float s) { return mul(x, s); }
Tensor operator/(const Tensor& x, float s) { return div(x, s); }
Tensor operator+(float s, const Tensor& x) { return add(x, s); }
Tensor operator-(float s, const Tensor& x) { return rsub(x, s); }
Tensor operator*(float s, const Tensor& x) { return mul(x, s); }
Tensor operator/(float s, const Tensor& x) { return rdiv(x, s); }

}  // namespace ladder
