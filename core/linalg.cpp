#include "core/linalg.h"

#include <algorithm>
#include <cmath>
#include <functional>
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

std::vector<double> singular_values(const Tensor& A) {
  if (A.dim() != 2) fail("singular_values", "A must be a matrix, got shape ", shape_str(A.shape()));
  // Rotating the columns of whichever of A and A^T has fewer of them gives the same values.
  const bool wide = A.size(1) > A.size(0);
  const int64_t columns = wide ? A.size(0) : A.size(1), length = wide ? A.size(1) : A.size(0);
  std::vector<std::vector<double>> c(static_cast<size_t>(columns), std::vector<double>(static_cast<size_t>(length)));
  for (int64_t i = 0; i < A.size(0); ++i)
    for (int64_t j = 0; j < A.size(1); ++j) (wide ? c[i][j] : c[j][i]) = A.data()[i * A.size(1) + j];
  const auto dot = [&](const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (int64_t t = 0; t < length; ++t) s += a[t] * b[t];
    return s;
  };
  constexpr int kMaxSweeps = 60;  // Jacobi converges quadratically: a few sweeps suffice in practice
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < columns; ++p)
      for (int64_t q = p + 1; q < columns; ++q) {
        const double alpha = dot(c[p], c[p]), beta = dot(c[q], c[q]), gamma = dot(c[p], c[q]);
        if (std::fabs(gamma) <= 1e-15 * std::sqrt(alpha * beta)) continue;  // orthogonal already
        rotated = true;
        // The rotation that makes columns p and q orthogonal (Golub and Van Loan, section 8.6).
        const double zeta = (beta - alpha) / (2 * gamma);
        const double t = std::copysign(1.0, zeta) / (std::fabs(zeta) + std::sqrt(1 + zeta * zeta));
        const double cs = 1 / std::sqrt(1 + t * t), sn = cs * t;
        for (int64_t i = 0; i < length; ++i) {
          const double a = c[p][i], b = c[q][i];
          c[p][i] = cs * a - sn * b;
          c[q][i] = sn * a + cs * b;
        }
      }
    if (!rotated) break;
  }
  std::vector<double> values;
  for (const std::vector<double>& column : c) values.push_back(std::sqrt(dot(column, column)));
  std::sort(values.begin(), values.end(), std::greater<>());
  return values;
}

int64_t numerical_rank(const std::vector<double>& values, double tolerance) {
  if (values.empty()) return 0;
  return std::count_if(values.begin(), values.end(), [&](double v) { return v > tolerance * values.front(); });
}

}  // namespace ladder
