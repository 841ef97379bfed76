// 2-D convolution as im2col + GEMM, and the direct loops it is tested against.
#pragma once

#include <cstdint>

namespace ladder {

// The sizes of one convolution: input (C,H,W), kernel (KH,KW), stride, zero padding, output (OH,OW).
struct ConvGeometry {
  int64_t C, H, W, KH, KW, stride, padding;
  int64_t out_h() const { return (H + 2 * padding - KH) / stride + 1; }
  int64_t out_w() const { return (W + 2 * padding - KW) / stride + 1; }
  int64_t patch() const { return C * KH * KW; }     // rows of the column matrix
  int64_t pixels() const { return out_h() * out_w(); }  // columns per image
};

// One image x (C,H,W) -> cols (C*KH*KW, OH*OW) with row stride ld: column p holds the input
// patch that output pixel p sees (zeros where it hangs over the padding).
void im2col(const float* x, const ConvGeometry& g, float* cols, int64_t ld);
// The adjoint of im2col: adds every column entry back onto the pixel it came from (x += ...).
void col2im(const float* cols, const ConvGeometry& g, int64_t ld, float* x);

// Direct convolution, seven plain loops. x (N,C,H,W), w (O,C,KH,KW), b (O) or null -> y (N,O,OH,OW).
void conv2d_naive(const float* x, const float* w, const float* b, float* y, int64_t N, int64_t O,
                  const ConvGeometry& g);
// Its backward: gx (N,C,H,W), gw (O,C,KH,KW), gb (O) or null, all overwritten.
void conv2d_backward_naive(const float* x, const float* w, const float* gy, float* gx, float* gw,
                           float* gb, int64_t N, int64_t O, const ConvGeometry& g);

}  // namespace ladder
