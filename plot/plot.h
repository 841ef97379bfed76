// Plots for the lessons, drawn with PLplot and written twice: <stem>.png and <stem>.svg.
// White background, readable fonts, a title, axis labels and a legend or colour bar, all inside
// the image. A legend goes into a corner of the plot where it hides no data, else beside it.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ladder::plot {

// Each series is drawn in its own colour and dash pattern (or as dots), so that curves lying on
// top of each other stay visible; a series that lies on an earlier one along its whole length
// also carries hollow marks, and its legend entry says which it lies on. A value that cannot be drawn breaks the line and is named in
// the legend: an infinite one gets a mark at the top edge ("infinite from step 120"), a 0 on a
// log axis one at the bottom edge, a NaN only the note.
struct Series {
  std::string name;
  std::vector<double> x, y;
  bool dots = false;  // a dot at each point and no line between them: scattered data
  double dot_size = 0;  // dots: their size, times the default's (a third value such as memory); 0: the default
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  bool log_y = false;  // for losses and perplexities that span decades
  double x_tick = 0;   // spacing of x ticks; 0: chosen to suit the plot's width (1 for whole-number x such as orders)
  // For x that doubles (lengths, sizes): each doubling one step along the axis, ticks at powers of
  // two labelled with their values in units of 1024 ("256", "1k", "64k", "1M"; say so in x_label);
  // x of 0 or less is not drawn. x_tick then counts doublings.
  bool log2_x = false;
  // The y axis reaches at least from y_floor to y_ceiling (NaN: only as far as the points): shares
  // such as exact match take 0 and 1, so that a dip of one example in a thousand is drawn small.
  double y_floor = NAN, y_ceiling = NAN;
};

// Rows are drawn top to bottom and labelled on the left (attention: queries); columns left to
// right, labelled at the bottom (attention: keys). A NaN cell holds no value: it is drawn in the
// grid's grey, a colour no value takes (the frames between tiles).
struct Heatmap {
  std::string title, x_label, y_label, value_label;
  std::vector<std::vector<double>> values;  // [row][col]
  std::vector<std::string> row_labels, col_labels;
  bool diverging = false;  // blue (negative), white (0), red (positive), symmetric around 0: for weights
  bool square_cells = false;  // keep each cell square (images, filters) instead of filling the page
  // The ends of the colour scale, so that maps drawn to be compared share one; NaN: the values' own.
  double scale_min = NAN, scale_max = NAN;
};

// A row-major matrix (rows, cols), as a tensor of attention weights (Q,S) holds it, as a heatmap's
// values [row][col].
std::vector<std::vector<double>> matrix_rows(const float* values, int64_t rows, int64_t cols);
// Labels for rows or columns too many to label each: every `every`-th value with one decimal
// ("2.5"), from the first, the others blank.
std::vector<std::string> sparse_labels(const std::vector<double>& values, int64_t every);

// The values at the two ends of a heatmap's colour scale (and of its colour bar): those of
// scale_min and scale_max where given, else the values' own lowest and highest (for a diverging
// map, symmetric around 0). Values beyond either end take its colour.
std::pair<double, double> colour_scale(const Heatmap& map);

// A share as a legend writes it, "6.2%" for 0.0625: one decimal, rounded as printf rounds it, so that
// a legend and the printed tables agree.
std::string percent_label(double share);

// The two levels a classifier's accuracy (in %) has to beat, as flat lines from x_from to x_to:
// guessing uniformly (`chance`) and always giving the training set's most common answer
// (`majority`, measured on the test set), so that a model stuck on the commonest class is not read
// as learning. Both as fractions: 0.1 is drawn at 10%. Two levels less than a point apart are one
// line, "chance 6.2%, most common 6.4%", drawn at chance.
std::vector<Series> baseline_lines(double chance, double majority, double x_from, double x_to);

// The values a line chart cannot draw, in runs of one kind: "infinite", "minus infinite", "NaN",
// and on a log axis "0" and "negative".
struct OffScale {
  std::string what;
  double first, last;  // their x
  bool to_the_end;     // the run lasts to the series' last point (and is longer than one)
};
std::vector<OffScale> off_scale(const Series& s, bool log_y);
// What the legend says about them: "infinite from step 120", "0 at time step 3-7; NaN at step 9"
// (the first three runs).
std::string off_scale_note(const std::vector<OffScale>& runs, const std::string& x_label);

// The earlier series (index) that series k lies on: the same x, and every y within `tolerance`
// (as drawn: log10 y on a log axis); -1 if none. Series of fewer than two points lie on nothing.
int64_t lies_on(const std::vector<Series>& series, size_t k, bool log_y, double tolerance);

// The y range a line chart draws before its margins: [low, high], the points' ends as drawn,
// widened to take in chart.y_floor and chart.y_ceiling where they are given (log10 of them on a
// log axis).
std::pair<double, double> y_extent(double low, double high, const LineChart& chart);

// The values a log axis from 10^lo to 10^hi labels, with grid lines: powers of ten over a wide
// range (every second, fifth, tenth... when there are many, so that at most eight are written),
// 1, 2 and 5 times them over one or two decades, and round values 1, 2 or 5 apart over a short
// range (PLplot's own log axis labels only the powers, which can leave a plot with one label).
std::vector<double> log_axis_values(double lo, double hi);

// Lays out equal-sized 2-D arrays in a grid, `columns` across, with a one-cell frame of NaN around
// each (a montage of filters, feature maps or attention maps for save_heatmap, which draws the
// frames in grey, so that no frame reads as a value).
std::vector<std::vector<double>> tile(const std::vector<std::vector<std::vector<double>>>& tiles, int columns);

// The class a model predicts over a grid of 2-D points, and the data points on top.
struct DecisionRegions {
  std::string title, x_label = "x1", y_label = "x2";
  double x_min, x_max, y_min, y_max;
  std::vector<std::vector<int>> grid;  // [row from the bottom][col]: predicted class
  std::vector<double> px, py;          // data points
  std::vector<int> labels;             // their classes
  std::vector<std::string> class_names;
};

// Each returns the two paths it wrote. A file that cannot be written (its folder is missing or
// read-only, or a folder has its name) throws ladder::Error naming it, before anything is drawn.
std::vector<std::string> save_line_chart(const std::string& stem, const LineChart& chart);
std::vector<std::string> save_heatmap(const std::string& stem, const Heatmap& map);
std::vector<std::string> save_decision_regions(const std::string& stem, const DecisionRegions& plot);

}  // namespace ladder::plot
