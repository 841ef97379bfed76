// Small dense linear algebra, in double precision: enough for the normal equations (lesson 02).
#pragma once

#include "core/tensor.h"

namespace ladder {

// Solves A X = B for X by Gaussian elimination with partial pivoting. A (n,n), B (n) or (n,k).
// No grad. Throws when A is singular (or nearly: a pivot below 1e-12 times A's largest entry).
Tensor solve(const Tensor& A, const Tensor& B);

}  // namespace ladder
