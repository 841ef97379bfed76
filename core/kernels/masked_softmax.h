// Softmax over the rows of a (rows, cols) buffer, restricted to the columns each row may see.
// The kernel of masked_softmax (core/ops/masked_softmax.cpp); its naive twin is composed of ops
// (nn::masked_softmax_naive), which the tests compare it against.
#pragma once

#include <cstdint>

namespace ladder {

// x, y: (rows, cols); visible: (mask rows, cols) of 1 (visible) and 0 (masked); row r of x reads
// row mask_row[r] of visible (rows may share a mask row: broadcasting).
// y = exp(x - m) / sum(exp(x - m)) over the visible columns (m their maximum), exactly 0 on the
// masked ones. A row with no visible column (or only -inf scores there) is all 0. The masked values
// of x never reach the result, so they may be anything, even inf or NaN.
void masked_softmax_rows(const float* x, const float* visible, const int64_t* mask_row, float* y, int64_t rows,
                         int64_t cols);

// gx = y * (gy - sum(gy * y)) over the visible columns, and exactly 0 on the masked ones (selected,
// not multiplied by 0, so whatever gy holds there stays out).
void masked_softmax_backward_rows(const float* y, const float* gy, const float* visible, const int64_t* mask_row,
                                  float* gx, int64_t rows, int64_t cols);

}  // namespace ladder
