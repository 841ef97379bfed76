// core/linalg.h's spectrum: singular values by one-sided Jacobi, held to matrices whose values are
// known, to the rank of a product of thin factors, and to a naive check (each squared value is a root
// of det(A^T A - s^2 I), the determinant by plain elimination); the numerical rank.
#include "helpers.h"

#include <cmath>
#include <vector>

#include "core/linalg.h"
#include "core/ops.h"

using namespace ladder;
using ladder::testing::check_error;

namespace {

// det(M) of an (n,n) matrix of doubles, by elimination with partial pivoting: the naive twin's tool.
double determinant(std::vector<std::vector<double>> m) {
  const auto n = m.size();
  double det = 1;
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    if (m[pivot][col] == 0) return 0;
    if (pivot != col) std::swap(m[pivot], m[col]), det = -det;
    det *= m[col][col];
    for (size_t r = col + 1; r < n; ++r) {
      const double f = m[r][col] / m[col][col];
      for (size_t c = col; c < n; ++c) m[r][c] -= f * m[col][c];
    }
  }
  return det;
}

}  // namespace

TEST_CASE("singular_values: a diagonal matrix gives its entries, sorted; a tall and a wide matrix alike") {
  const Tensor d = tensor({0, 0, 0, 0, -5, 0, 2, 0, 0}, {3, 3});  // diag(0, -5, 2) with the rows moved
  const std::vector<double> values = singular_values(d);
  REQUIRE(values.size() == 3);
  CHECK(values[0] == doctest::Approx(5));
  CHECK(values[1] == doctest::Approx(2));
  CHECK(values[2] == doctest::Approx(0).epsilon(1e-12));
  Generator gen(3);
  const Tensor a = randn({7, 4}, gen);
  const std::vector<double> tall = singular_values(a), wide = singular_values(transpose(a, 0, 1));
  REQUIRE(tall.size() == 4);
  REQUIRE(wide.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(tall[i] == doctest::Approx(wide[i]).epsilon(1e-10));
}

TEST_CASE("singular_values: det(A^T A - x I) = the product of (s^2 - x) for any x, and the squares sum to |A|^2") {
  Generator gen(4);
  const Tensor a = randn({6, 4}, gen);
  const std::vector<double> values = singular_values(a);
  std::vector<std::vector<double>> gram(4, std::vector<double>(4));  // A^T A in double
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t r = 0; r < 6; ++r) gram[i][j] += double(a.data()[r * 4 + i]) * a.data()[r * 4 + j];
  double frobenius = 0, squares = 0;
  for (int64_t i = 0; i < 4; ++i) frobenius += gram[i][i];
  for (const double s : values) squares += s * s;
  CHECK(squares == doctest::Approx(frobenius).epsilon(1e-12));
  // The characteristic polynomial of A^T A, evaluated by elimination, has the squared values as its roots.
  for (const double x : {0.0, 0.5 * values[3] * values[3], values[1] * values[1], 0.5 * (values[0] + values[1]) * values[1]}) {
    std::vector<std::vector<double>> shifted = gram;
    for (int64_t i = 0; i < 4; ++i) shifted[i][i] -= x;
    double product = 1;
    for (const double s : values) product *= s * s - x;
    CHECK(determinant(shifted) == doctest::Approx(product).epsilon(1e-9).scale(std::pow(frobenius, 4)));
  }
}

TEST_CASE("singular_values and numerical_rank: a product of rank-3 factors has three values above rounding") {
  Generator gen(5);
  const Tensor a = matmul(randn({12, 3}, gen), randn({3, 10}, gen));  // (12,10), rank 3
  const std::vector<double> values = singular_values(a);
  REQUIRE(values.size() == 10);
  CHECK(values[2] > 1e-2 * values[0]);
  CHECK(values[3] < 1e-6 * values[0]);  // float rounding of the product, not rank
  CHECK(numerical_rank(values, 1e-5) == 3);
  CHECK(numerical_rank(singular_values(randn({10, 10}, gen)), 1e-5) == 10);
  CHECK(numerical_rank({}, 1e-5) == 0);
  CHECK(numerical_rank(singular_values(zeros({3, 3})), 1e-5) == 0);
}

TEST_CASE("singular_values refuses what is not a matrix") {
  check_error([] { singular_values(zeros({2, 3, 4})); }, {"singular_values", "matrix", "(2,3,4)"});
}
