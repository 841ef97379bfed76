// exp(x) for float, written so that the compiler vectorises loops that call it (std::exp does not).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace ladder {

// exp(x) = 2^n * e^r with n = round(x / ln 2) and |r| <= ln(2)/2; e^r by its Taylor series to r^7
// (error below 1e-8 relative), 2^n by writing n straight into the float's exponent bits.
// Agrees with std::exp to a few ulp; exp(-inf) = 0 exactly, which masked softmax relies on.
inline float fast_exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // ln 2 split in two so that n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kMin = -87.33654f;  // below: the result would be a denormal; return 0
  constexpr float kMax = 88.3762626f;  // above: overflow; return inf
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it pushes a float's fraction bits out
  const float clamped = std::min(std::max(x, kMin), kMax);
  const float n = (clamped * kLog2e + kRound) - kRound;  // round to nearest; std::floor would not vectorise
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

}  // namespace ladder
