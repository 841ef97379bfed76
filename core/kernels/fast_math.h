// exp, tanh, the sigmoid and the normal CDF for float, written so that the compiler vectorises
// loops that call them (std::exp and std::tanh are calls into libm, one value at a time). Always
// inlined: a call left out of line (GCC gives up inlining in a file with many callers) keeps the
// loop scalar.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace ladder {

// exp(x) = 2^n * e^r with n = round(x / ln 2) and |r| <= ln(2)/2; e^r by its Taylor series to r^7
// (error below 1e-8 relative), 2^n by writing n straight into the float's exponent bits.
// Agrees with std::exp to a few ulp; exp(-inf) = 0 exactly, which masked softmax relies on.
[[gnu::always_inline]] inline float fast_exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // ln 2 split in two so that n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kMin = -87.33654f;  // below: the result would be a denormal; return 0
  constexpr float kMax = 88.7228391f;  // ln(FLT_MAX): above it, overflow; return inf
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it pushes a float's fraction bits out
  // std::max(kMin, NaN) is kMin: a NaN input becomes a number here, so that the cast to int below
  // is defined; the NaN is given back at the end.
  const float clamped = std::min(std::max(kMin, x), kMax);
  // n rounded to nearest (std::floor would not vectorise), at most 127 so that 2^n stays a float;
  // near the top r then reaches about 0.7, where the series is still good to ~1e-6.
  const float n = std::min((clamped * kLog2e + kRound) - kRound, 127.0f);
  const float r = clamped - n * kLn2Hi - n * kLn2Lo;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  const float result = p * scale;
  if (x != x) return x;  // NaN stays NaN
  return x < kMin ? 0.0f : (x > kMax ? INFINITY : result);
}

// tanh(x): an odd Taylor polynomial near 0 (where 1 - 2/(e^2x + 1) would cancel), and that
// formula with fast_exp elsewhere. Agrees with std::tanh to a few ulp; saturates to +-1.
[[gnu::always_inline]] inline float fast_tanh(float x) {
  const float a = std::fabs(x);
  const float x2 = x * x;
  // x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835: the next term is below 1e-8 for |x| < 1/4
  const float series = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315 + x2 * (62.0f / 2835)))));
  const float far = 1.0f - 2.0f / (fast_exp(2.0f * a) + 1.0f);
  return a < 0.25f ? series : std::copysign(far, x);
}

// e^x - 1: a Taylor polynomial near 0 (where fast_exp(x) - 1 would cancel; the next term is below
// 5e-8 relative for |x| < 1/8), fast_exp(x) - 1 elsewhere. expm1(-inf) = -1, NaN stays NaN.
[[gnu::always_inline]] inline float fast_expm1(float x) {
  const float series = x * (1.0f + x * (0.5f + x * (1.0f / 6 + x * (1.0f / 24 + x * (1.0f / 120)))));
  return std::fabs(x) < 0.125f ? series : fast_exp(x) - 1.0f;
}

// 1 / (1 + e^-x), with fast_exp.
[[gnu::always_inline]] inline float fast_sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

// Phi(x), the standard normal CDF, = erfc(-x / sqrt 2) / 2 (GELU's gate). erfc(a) for a >= 0 as
// t exp(-a^2 + P(t)) with t = 1 / (1 + a/2) and P the degree-9 Chebyshev fit of Numerical Recipes'
// erfcc (relative error below 1.2e-7 for every a); erfc(-a) = 2 - erfc(a). Unlike 1 + erf(x), the
// tail x << 0 keeps its relative precision (to about x^2 / 2 ulp: the exponent's rounding).
// Phi(NaN) is NaN, Phi(-inf) = 0 and Phi(inf) = 1.
[[gnu::always_inline]] inline float fast_normal_cdf(float x) {
  const float a = std::fabs(x) * 0.7071067811865476f;
  const float t = 1.0f / (1.0f + 0.5f * a);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float half_erfc = 0.5f * t * fast_exp(p - 0.5f * x * x);  // Phi(-|x|); a^2 = x^2 / 2
  return x < 0 ? half_erfc : 1.0f - half_erfc;
}

}  // namespace ladder
