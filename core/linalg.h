// Small dense linear algebra, in double precision: enough for the normal equations (lesson 02) and
// the spectrum of an attention matrix (lesson 12).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace ladder {

// Solves A X = B for X by Gaussian elimination with partial pivoting. A (n,n), B (n) or (n,k).
// No grad. Throws when A is singular (or nearly: a pivot below 1e-12 times A's largest entry).
Tensor solve(const Tensor& A, const Tensor& B);

// The singular values of A (m,n), min(m,n) of them, largest first, by one-sided Jacobi (Hestenes):
// pairs of columns are rotated until all are orthogonal, and the values are then the columns'
// lengths. In double precision, so values down to about 1e-15 of the largest are resolved. No grad.
std::vector<double> singular_values(const Tensor& A);

// How many of `values` (largest first) exceed `tolerance` times the largest: the numerical rank.
int64_t numerical_rank(const std::vector<double>& values, double tolerance);

}  // namespace ladder
