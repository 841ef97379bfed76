// The page that every plot of plot/plot.cpp is drawn on, with PLplot: its set-up and
// colours, measuring text before the layout is fixed, and legends that find a place where they
// hide no data. Positions are fractions of the page: x of its width, y of its height, from the
// bottom left.
#pragma once

#include <plplot/plplot.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace ladder::plot::page {

// Tableau's ten colours: distinct, and readable by most colour-blind readers.
inline constexpr std::array<std::array<int, 3>, 10> kPalette = {{{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40},
                                                                 {148, 103, 189}, {140, 86, 75}, {227, 119, 194},
                                                                 {127, 127, 127}, {188, 189, 34}, {23, 190, 207}}};
inline constexpr PLINT kWidth = 1000, kHeight = 700;  // pixels, of every page but a heatmap's that needs more
// The plot area when nothing sits beside it: room on the left for the tick labels and the y label
// (5.2 character heights out), below for the x label, above for the title.
inline constexpr double kLeft = 0.12, kRight = 0.96, kBottom = 0.12, kTop = 0.92;
inline constexpr double kTextScale = 1.1;  // axis labels and ticks, times PLplot's default size
inline constexpr double kLineWidth = 2.5;  // of the series' lines
inline constexpr PLINT kGridColour = 2;     // cmap0: light grey, of grid lines and of a heatmap's cells without a value

PLINT series_colour(size_t k);  // the cmap0 index of series k's colour
size_t dash_pattern(size_t k);  // series k's dash pattern, 0 (solid, series 0 alone) to 5; with the colour, unique among 50
void set_dashes(size_t k);      // draws in series k's dash pattern; plstyl(0, ...) undoes it

// Text as PLplot draws it: PLplot reads '#' as the start of an escape sequence, so a literal one
// is written "##"; it refuses a string that is not UTF-8 (a folder's or a column's name may not
// be), so each byte that is not is written \xNN (data::valid_utf8).
std::string escaped(const std::string& text);

// Writes <stem>.png and <stem>.svg, each a page of width x height pixels drawn by `draw`; returns
// the two paths. Each page is drawn into memory and then written, checked to its close: a file
// that cannot be written, or that the disk refuses in part, throws ladder::Error from `op` naming it,
// as does one PLplot cannot draw (plot/plplot_errors.h).
std::vector<std::string> render_both(const char* op, const std::string& stem, const std::function<void()>& draw,
                                     PLINT width = kWidth, PLINT height = kHeight);

// The widths of texts drawn at `scale` times PLplot's default size, and the height of a line of
// them, in pixels, as the real pages draw them (measured on a scratch page that writes nowhere).
struct TextSizes {
  std::vector<double> widths;
  double height;
};
TextSizes measure(const std::vector<std::string>& texts, double scale);
double line_height(double scale);  // the height alone, in pixels

struct Point {
  double x, y;
};
struct Box {
  double x0, x1, y0, y1;
};

// A legend: per entry a short line in the series' colour and dashes (or a dot), and its name;
// in one column, or in several (entries then run across, row by row).
struct LegendEntry {
  std::string name;
  size_t series;       // whose colour and dashes
  bool dot = false;    // a dot instead of a line (scattered points)
  std::string marker;  // a mark on the line's middle, as on a series that lies on another; "": none
};

// The mark drawn along series k when it lies on an earlier series: a hollow shape per series.
const char* overlap_marker(size_t k);
class Legend {
 public:
  explicit Legend(std::vector<LegendEntry> entries);
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  double width(size_t columns = 1) const;
  double height(size_t columns = 1) const;
  void draw(double left, double top, size_t columns = 1) const;  // top-left corner; leaves the viewport as it was

 private:
  double char_width() const;  // a character's height, as a fraction of the page's width
  std::vector<LegendEntry> entries_;
  double line_;        // the height of a line of its text
  double entry_width_;  // the widest entry: line sample, gap and name
};

// Where a legend goes, given `ink`, the paths drawn (in fractions of the plot area: 0..1 across
// and up). In order of preference: the first corner of the plot area (top right, top left, bottom
// right, bottom left) where it covers no ink; beside the plot on the right, which narrows; above
// the plot, in as many columns as fit across the page, the plot growing shorter; in the corner
// where it covers least.
struct Placement {
  double plot_right = kRight, plot_top = kTop;
  double legend_left, legend_top;
  size_t columns = 1;
};
Placement place_legend(const Legend& legend, const std::vector<std::vector<Point>>& ink);

// A tick-label function for plslabelfunc: plain numbers ("%.6g"), where PLplot's own labels take a
// factor out of narrow ranges (0.986 ... 0.996 became 9.86 ... 9.96 and "(x10^-1)" above the axis).
void plain_tick_label(PLINT, PLFLT value, char* label, PLINT length, PLPointer);
// The title centred above the plot, `above` title-line heights over it, in a smaller font when it
// would run off a page `page_width` pixels wide (a long source sentence in an attention map's title).
void draw_title(const std::string& title, double above, double page_width);
// The axes, grid, labels and title of a plot area. The title goes at the top of the page's plot
// area (kTop), above a legend that may sit between it and a plot that reaches up to `plot_top`.
// y_options "bc" marks a log axis, whose grid log_y_labels draws. x_tick 0: chosen for the plot's width.
// doubling_x: x is log2 of the values, and its ticks (whole doublings) are labelled with the values.
void axes_and_title(const std::string& title, const std::string& x_label, const std::string& y_label, const char* y_options,
                    double plot_top, double x_tick = 0, bool doubling_x = false);
// The label of a tick at log2 x = `doublings`: the value 2^doublings, in units of 1024 from 1024
// up, so that labels stay short: "0.5", "256", "1k" (1024), "64k", "1M" (2^20), "2G".
std::string doubling_label(double doublings);

// Points in plot coordinates as fractions of the plot area (0..1 across and up).
std::vector<Point> as_fractions(const std::vector<Point>& points, double x_min, double x_max, double y_min, double y_max);

// Whether the segment a-b (a single point when a == b) meets the box.
bool segment_meets_box(Point a, Point b, const Box& box);

}  // namespace ladder::plot::page
