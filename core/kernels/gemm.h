// Matrix multiply on raw row-major buffers: the one kernel almost every layer ends up in.
#pragma once

#include <cstdint>

namespace ladder {

// C (M,N) = alpha * op(A) @ op(B) + beta * C, all row-major.
// op(A) is (M,K): A itself (M,K) with row stride lda, or, when trans_a, A (K,M) read transposed.
// op(B) is (K,N): B itself (K,N) with row stride ldb, or, when trans_b, B (N,K) read transposed.
// With beta = 0, C may hold garbage (it is overwritten, never read).
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// The same contract in three plain loops, accumulating in double: the reference the fast one is
// tested against, and the one to read.
void gemm_naive(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                int64_t ldc);

}  // namespace ladder
