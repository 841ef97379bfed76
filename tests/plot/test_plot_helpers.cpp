// The plotting kit's helpers: a row-major matrix as a heatmap's rows, sparse labels for axes with
// too many rows or columns to label each, tiles framed by cells without a value, styles that tell
// series apart, series that lie on others, the labels of a doubling axis, and the baselines of an
// accuracy chart.
#include "helpers.h"

#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plot/plot.h"
#include "plot/plot_page.h"

using namespace ladder::plot;

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

TEST_CASE("tile: tiles side by side in a frame of cells without a value, so that no frame reads as data") {
  const std::vector<std::vector<double>> a = {{1, 2}}, b = {{3, 4}}, c = {{5, 6}};
  const std::vector<std::vector<double>> grid = tile({a, b, c}, 2);
  REQUIRE(grid.size() == 2 * (1 + 1) + 1);     // two rows of tiles, each one high, framed
  REQUIRE(grid[0].size() == 2 * (2 + 1) + 1);  // two tiles across, each two wide, framed
  CHECK(grid[1][1] == 1);
  CHECK(grid[1][2] == 2);
  CHECK(grid[1][4] == 3);
  CHECK(grid[3][1] == 5);
  int frame = 0;
  for (const auto& row : grid)
    for (const double v : row) frame += std::isnan(v);
  CHECK(frame == 5 * 7 - 6);  // all but the six values; the fourth tile's place is empty too
  CHECK_THROWS_WITH(tile({}, 2), doctest::Contains("at least one tile"));
}

TEST_CASE("series styles: colour and dash pattern together differ for each of the first 50 series") {
  std::set<std::pair<PLINT, size_t>> styles;
  for (size_t k = 0; k < 50; ++k) styles.insert({page::series_colour(k), page::dash_pattern(k)});
  CHECK(styles.size() == 50);
  CHECK(page::dash_pattern(0) == 0);  // the first series is solid, and no other
  for (size_t k = 1; k < 50; ++k) CHECK(page::dash_pattern(k) != 0);
  CHECK(page::dash_pattern(4) != page::dash_pattern(14));  // lesson 15's fifth and fifteenth curves share a colour
}

TEST_CASE("lies_on: a series drawn on top of an earlier one along its whole length, within the tolerance") {
  const std::vector<Series> series = {{"full", {1, 2, 3}, {3, 2, 1}},
                                      {"bigbird", {1, 2, 3}, {3.001, 2, 0.999}},
                                      {"vq", {1, 2, 3}, {3, 2.5, 1}},
                                      {"shifted", {1, 2, 4}, {3, 2, 1}},
                                      {"copy", {1, 2, 3}, {3, 2, 1}}};
  CHECK(lies_on(series, 0, false, 0.01) == -1);  // nothing before it
  CHECK(lies_on(series, 1, false, 0.01) == 0);
  CHECK(lies_on(series, 1, false, 0.0001) == -1);
  CHECK(lies_on(series, 2, false, 0.01) == -1);  // apart at one point
  CHECK(lies_on(series, 3, false, 0.01) == -1);  // other x
  CHECK(lies_on(series, 4, false, 0.01) == 0);   // the first it lies on
  // On a log axis the tolerance is in decades: 1% apart is 0.0043 of a decade.
  const std::vector<Series> losses = {{"a", {1, 2}, {100, 10}}, {"b", {1, 2}, {101, 10.1}}};
  CHECK(lies_on(losses, 1, true, 0.005) == 0);
  CHECK(lies_on(losses, 1, false, 0.005) == -1);
  // Scattered points and single points lie on nothing.
  std::vector<Series> dots = {{"a", {1, 2}, {1, 2}}, {"b", {1, 2}, {1, 2}, /*dots=*/true}, {"c", {1}, {1}}};
  CHECK(lies_on(dots, 1, false, 0.01) == -1);
  CHECK(lies_on(dots, 2, false, 0.01) == -1);
}

TEST_CASE("doubling_label: a tick at log2 x names the value, short, in units of 1024") {
  CHECK(page::doubling_label(8) == "256");
  CHECK(page::doubling_label(-1) == "0.5");
  CHECK(page::doubling_label(10) == "1k");
  CHECK(page::doubling_label(13) == "8k");
  CHECK(page::doubling_label(16) == "64k");
  CHECK(page::doubling_label(20) == "1M");
  CHECK(page::doubling_label(31) == "2G");
  CHECK(page::doubling_label(9.5) == "724.1");  // between ticks: four digits
}

TEST_CASE("baseline_lines: chance and the most common answer as flat lines in %, each named with its level") {
  const std::vector<Series> lines = baseline_lines(0.1, 0.166, 0, 2000);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].name == "chance, 10.0%");
  CHECK(lines[1].name == "the most common answer, 16.6%");
  for (const Series& s : lines) CHECK(s.x == std::vector<double>{0, 2000});
  CHECK(lines[0].y == std::vector<double>{10, 10});
  CHECK(lines[1].y[0] == doctest::Approx(16.6));
  CHECK(lines[1].y[1] == lines[1].y[0]);
  CHECK(percent_label(0.0625) == "6.2%");  // as the printed tables round it (printf, half to even), not 6.3%
  const std::vector<Series> one = baseline_lines(0.0625, 0.064, 0, 100);  // less than a point apart: one line
  REQUIRE(one.size() == 1);
  CHECK(one[0].name == "chance 6.2%, most common 6.4%");
  CHECK(one[0].y == std::vector<double>{6.25, 6.25});
}

TEST_CASE("y_extent: the points' range, widened to the chart's floor and ceiling where given") {
  LineChart chart{"t", "x", "y", {}};
  CHECK(y_extent(0.994, 1.0, chart) == std::pair<double, double>{0.994, 1.0});  // none given: the points' own
  chart.y_floor = 0, chart.y_ceiling = 1;
  CHECK(y_extent(0.994, 1.0, chart) == std::pair<double, double>{0.0, 1.0});  // a small dip is drawn small
  CHECK(y_extent(-0.5, 1.5, chart) == std::pair<double, double>{-0.5, 1.5});  // points beyond them stay in view
  chart.log_y = true, chart.y_floor = 0.1, chart.y_ceiling = NAN;  // log axis: the points come as log10 y
  CHECK(y_extent(0.5, 2.0, chart) == std::pair<double, double>{-1.0, 2.0});
  chart.y_floor = 0;  // log10 0 is not drawable: no floor
  CHECK(y_extent(0.5, 2.0, chart) == std::pair<double, double>{0.5, 2.0});
}
