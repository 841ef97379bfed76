// The plotting kit's helpers that turn a lesson's numbers into a heatmap: a row-major matrix as
// rows, and sparse labels for axes with too many rows or columns to label each.
#include "helpers.h"

#include <string>
#include <vector>

#include "lessons/common/plot.h"

using namespace ladder::lessons;

TEST_CASE("matrix_rows: a row-major (rows, cols) matrix as a heatmap's values [row][col]") {
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  CHECK(matrix_rows(values.data(), 2, 3) == std::vector<std::vector<double>>{{1, 2, 3}, {4, 5, 6}});
  CHECK(matrix_rows(values.data(), 3, 2) == std::vector<std::vector<double>>{{1, 2}, {3, 4}, {5, 6}});
  CHECK(matrix_rows(values.data(), 0, 3).empty());
}

TEST_CASE("sparse_labels: every n-th value with one decimal, from the first, the others blank") {
  CHECK(sparse_labels({0, 0.1, 0.2, 0.3, 0.44, 0.56}, 2) == std::vector<std::string>{"0.0", "", "0.2", "", "0.4", ""});
  CHECK(sparse_labels({4.96, -1.26}, 1) == std::vector<std::string>{"5.0", "-1.3"});
  CHECK(sparse_labels({}, 5).empty());
}
