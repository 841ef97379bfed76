#include "core/linalg.h"

#include <cmath>
#include <vector>

#include "core/error.h"

namespace ladder {

Tensor solve(const Tensor& A, const Tensor& B) {
  if (A.dim() != 2 || A.size(0) != A.size(1))
    fail("solve", "A must be square, got shape ", shape_str(A.shape()));
  const int64_t n = A.size(0);
  if (B.dim() < 1 || B.dim() > 2 || B.size(0) != n)
    fail("solve", "B must be (", n, ") or (", n, ",k) for A of shape ", shape_str(A.shape()), ", got ", shape_str(B.shape()));
  const int64_t k = B.dim() == 2 ? B.size(1) : 1;
  // [A | B] as one augmented matrix of doubles, reduced to upper-triangular form row by row.
  std::vector<double> m(static_cast<size_t>(n * (n + k)));
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      m[i * (n + k) + j] = A.data()[i * n + j];
      scale = std::max(scale, std::fabs(m[i * (n + k) + j]));
    }
    for (int64_t j = 0; j < k; ++j) m[i * (n + k) + n + j] = B.data()[i * k + j];
  }
  auto at = [&](int64_t r, int64_t c) -> double& { return m[static_cast<size_t>(r * (n + k) + c)]; };
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;  // the largest entry in the column keeps rounding errors small
    for (int64_t r = col + 1; r < n; ++r)
      if (std::fabs(at(r, col)) > std::fabs(at(pivot, col))) pivot = r;
    if (std::fabs(at(pivot, col)) <= 1e-12 * scale || scale == 0)
      fail("solve", "A is singular (or nearly): no unique solution; are two columns of the data the same?");
    if (pivot != col)
      for (int64_t c = 0; c < n + k; ++c) std::swap(at(col, c), at(pivot, c));
    for (int64_t r = col + 1; r < n; ++r) {
      const double factor = at(r, col) / at(col, col);
      for (int64_t c = col; c < n + k; ++c) at(r, c) -= factor * at(col, c);
    }
  }
  Tensor x = empty(B.shape());
  for (int64_t j = 0; j < k; ++j)
    for (int64_t r = n - 1; r >= 0; --r) {  // back substitution
      double v = at(r, n + j);
      for (int64_t c = r + 1; c < n; ++c) v -= at(r, c) * x.data()[c * k + j];
      x.data()[r * k + j] = static_cast<float>(v / at(r, r));
    }
  return x;
}

}  // namespace ladder
