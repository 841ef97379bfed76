#include "lessons/common/plot.h"

#include <plplot/plplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/error.h"

namespace ladder::lessons {

namespace {

// Tableau's ten colours: distinct, and readable by most colour-blind readers.
constexpr std::array<std::array<int, 3>, 10> kPalette = {{{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40},
                                                          {148, 103, 189}, {140, 86, 75}, {227, 119, 194},
                                                          {127, 127, 127}, {188, 189, 34}, {23, 190, 207}}};
constexpr int kFirstSeriesColour = 3;  // cmap0: 0 background, 1 text and axes, 2 grid lines
constexpr PLINT kWidth = 1000, kHeight = 700;

// PLplot reads '#' as the start of an escape sequence; a literal one is written "##".
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '#' ? std::string("##") : std::string(1, c);
  return out;
}

// Draws one page into `file` with a PLplot device ("pngcairo" or "svgcairo").
void render(const std::string& file, const char* device, const std::function<void()>& draw) {
  plsdev(device);
  plsfnam(file.c_str());
  plspage(0, 0, kWidth, kHeight, 0, 0);
  plscolbg(255, 255, 255);
  plscmap0n(kFirstSeriesColour + static_cast<PLINT>(kPalette.size()));
  plscol0(0, 255, 255, 255);
  plscol0(1, 30, 30, 30);
  plscol0(2, 220, 220, 220);
  for (size_t i = 0; i < kPalette.size(); ++i)
    plscol0(kFirstSeriesColour + static_cast<PLINT>(i), kPalette[i][0], kPalette[i][1], kPalette[i][2]);
  plinit();
  plschr(0, 1.1);
  pladv(0);
  draw();
  plend();
}

std::vector<std::string> render_both(const std::string& stem, const std::function<void()>& draw) {
  const std::string png = stem + ".png", svg = stem + ".svg";
  render(png, "pngcairo", draw);
  render(svg, "svgcairo", draw);
  return {png, svg};
}

void axes_and_title(const std::string& title, const std::string& x_label, const std::string& y_label, const char* y_options,
                    double x_tick = 0) {
  const bool log_y = std::string(y_options) == "bc";  // log_y_labels draws that axis's grid itself
  plcol0(2);
  plbox("g", x_tick, 0, log_y ? "" : "g", 0, 0);  // grid lines first, under the data
  plcol0(1);
  plbox("bcnst", x_tick, x_tick > 0 ? 1 : 0, y_options, 0, 0);
  plschr(0, 1.3);
  plmtex("t", 1.5, 0.5, 0.5, escaped(title).c_str());
  plschr(0, 1.1);
  plmtex("b", 3.0, 0.5, 0.5, escaped(x_label).c_str());
  plmtex("l", 5.2, 0.5, 0.5, escaped(y_label).c_str());
}

// Labels a log10 y axis, with grid lines: at powers of ten over a wide range, at 1, 2 and 5
// times them over one or two decades, and at round values 1, 2 or 5 apart over a short range
// (PLplot's own log axis labels only the powers, which can leave a plot with one label).
void log_y_labels(double x_min, double x_max, double y_min, double y_max) {
  std::vector<double> values;
  if (y_max - y_min > 0.7) {
    const std::vector<double> mantissas = y_max - y_min > 2.5 ? std::vector<double>{1} : std::vector<double>{1, 2, 5};
    for (int decade = static_cast<int>(std::floor(y_min)); decade <= static_cast<int>(std::ceil(y_max)); ++decade)
      for (double m : mantissas) values.push_back(m * std::pow(10.0, decade));
  } else {  // a short range: evenly spaced round values, about five of them
    const double lo = std::pow(10.0, y_min), hi = std::pow(10.0, y_max), rough = (hi - lo) / 5;
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    const double step = power * (rough / power < 2 ? 1 : rough / power < 5 ? 2 : 5);
    for (double v = std::ceil(lo / step) * step; v <= hi; v += step) values.push_back(v);
  }
  for (const double v : values) {
    const double y = std::log10(v);
    if (y < y_min || y > y_max) continue;
    const PLFLT xs[] = {x_min, x_max}, ys[] = {y, y};
    plcol0(2);
    plline(2, xs, ys);
    plcol0(1);
    char text[32];  // 0.01 to 5000 written out, beyond that short exponents: at most four characters
    const int decade = static_cast<int>(std::floor(y + 1e-9));
    if (decade < -2 || decade > 3) std::snprintf(text, sizeof text, "%ge%d", v / std::pow(10.0, decade), decade);
    else std::snprintf(text, sizeof text, "%g", v);
    plmtex("lv", 0.7, (y - y_min) / (y_max - y_min), 1.0, text);
  }
}

// A legend in the top right corner of the plot (or outside it, to its right): a line (or a dot)
// per entry in the series' colours.
void legend(const std::vector<std::string>& names, bool as_lines, bool outside = false) {
  const auto n = static_cast<PLINT>(names.size());
  if (n == 0) return;
  std::vector<PLINT> opts(n, as_lines ? PL_LEGEND_LINE : PL_LEGEND_SYMBOL), colours(n), styles(n, 1), numbers(n, 1);
  std::vector<PLFLT> widths(n, 2.5), scales(n, 1.5);
  std::vector<const char*> texts(n), symbols(n, "●");
  std::vector<std::string> escaped_names(n);
  for (PLINT i = 0; i < n; ++i) {
    colours[i] = kFirstSeriesColour + i % static_cast<PLINT>(kPalette.size());
    escaped_names[i] = escaped(names[i]);
    texts[i] = escaped_names[i].c_str();
  }
  PLFLT width, height;
  pllegend(&width, &height, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           outside ? PL_POSITION_RIGHT | PL_POSITION_OUTSIDE : PL_POSITION_TOP | PL_POSITION_RIGHT | PL_POSITION_INSIDE,
           0.02, 0.02, 0.08, 0, 1, 1, 0, 0, n, opts.data(), 1.0, 1.0, 2.0, 0.0, colours.data(), texts.data(), nullptr,
           nullptr, nullptr, nullptr, colours.data(), styles.data(), widths.data(), colours.data(), scales.data(),
           numbers.data(), symbols.data());
}

}  // namespace

std::vector<std::string> save_line_chart(const std::string& stem, const LineChart& chart) {
  auto y_of = [&](double y) { return chart.log_y ? std::log10(y) : y; };
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (const Series& s : chart.series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      const double y = y_of(s.y[i]);
      if (!std::isfinite(s.x[i]) || !std::isfinite(y)) continue;
      x_min = std::min(x_min, s.x[i]);
      x_max = std::max(x_max, s.x[i]);
      y_min = std::min(y_min, y);
      y_max = std::max(y_max, y);
    }
  if (!std::isfinite(x_min)) fail("save_line_chart", stem, ": no finite points to plot");
  if (x_max == x_min) x_max = x_min + 1;
  const double pad = y_max > y_min ? 0.05 * (y_max - y_min) : 0.5;
  return render_both(stem, [&] {
    plvpor(0.12, chart.legend_outside ? 0.66 : 0.96, 0.12, 0.92);
    plwind(x_min, x_max, y_min - pad, y_max + pad);
    axes_and_title(chart.title, chart.x_label, chart.y_label, chart.log_y ? "bc" : "bcnstv", chart.x_tick);
    if (chart.log_y) log_y_labels(x_min, x_max, y_min - pad, y_max + pad);
    std::vector<std::string> names;
    for (size_t k = 0; k < chart.series.size(); ++k) {
      const Series& s = chart.series[k];
      plcol0(kFirstSeriesColour + static_cast<PLINT>(k % kPalette.size()));
      plwidth(2.5);
      std::vector<PLFLT> xs, ys;
      auto flush = [&] {
        if (xs.size() > 1) plline(static_cast<PLINT>(xs.size()), xs.data(), ys.data());
        if (xs.size() == 1) plstring(1, xs.data(), ys.data(), "●");
        xs.clear();
        ys.clear();
      };
      for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
        const double y = y_of(s.y[i]);
        if (std::isfinite(s.x[i]) && std::isfinite(y)) {
          xs.push_back(s.x[i]);
          ys.push_back(y);
        } else {
          flush();
        }
      }
      flush();
      plwidth(1);
      names.push_back(s.name);
    }
    if (chart.series.size() > 1 || !names.front().empty()) legend(names, true, chart.legend_outside);
  });
}

std::vector<std::string> save_heatmap(const std::string& stem, const Heatmap& map) {
  const auto rows = static_cast<PLINT>(map.values.size());
  const auto cols = static_cast<PLINT>(rows ? map.values[0].size() : 0);
  if (rows == 0 || cols == 0) fail("save_heatmap", stem, ": no values");
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& row : map.values) {
    if (static_cast<PLINT>(row.size()) != cols) fail("save_heatmap", stem, ": rows of different lengths");
    for (double v : row)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (map.diverging) hi = std::max(std::fabs(lo), std::fabs(hi)), lo = -hi;
  if (!(hi > lo)) hi = lo + 1;
  // plimage wants data[x][y] with y growing upwards; row 0 goes on top.
  std::vector<std::vector<PLFLT>> columns(cols, std::vector<PLFLT>(rows));
  for (PLINT i = 0; i < rows; ++i)
    for (PLINT j = 0; j < cols; ++j) columns[j][rows - 1 - i] = map.values[i][j];
  std::vector<const PLFLT*> pointers(cols);
  for (PLINT j = 0; j < cols; ++j) pointers[j] = columns[j].data();
  auto label = [](const std::string& token) {  // show white space as visible marks
    if (token == " ") return std::string("␣");
    if (token == "\n") return std::string("⏎");
    return escaped(token);
  };
  return render_both(stem, [&] {
    const double longest = std::max(rows, cols);
    const double label_scale = std::clamp(24.0 / longest, 0.45, 1.0);
    if (map.square_cells) plvpas(0.12, 0.8, 0.14, 0.9, static_cast<PLFLT>(rows) / cols);
    else plvpor(0.12, 0.8, 0.14, 0.9);
    plwind(0, cols, 0, rows);
    if (map.diverging) {  // blue below zero, white at zero, red above
      const PLFLT at[] = {0, 0.5, 1}, r[] = {0.02, 1, 0.7}, g[] = {0.19, 1, 0.01}, b[] = {0.38, 1, 0.11};
      plscmap1l(1, 3, at, r, g, b, nullptr);
    } else {  // white (low) to dark blue (high)
      const PLFLT at[] = {0, 1}, r[] = {1, 0.03}, g[] = {1, 0.19}, b[] = {1, 0.42};
      plscmap1l(1, 2, at, r, g, b, nullptr);
    }
    // plimage draws cell i over [xmin + i dx, xmin + (i+1) dx] with dx = (xmax - xmin) / (n - 1):
    // giving n - 1 as the extent makes every cell one unit wide.
    plimage(pointers.data(), cols, rows, 0, cols - 1, 0, rows - 1, lo, hi, 0, cols - 1, 0, rows - 1);
    plcol0(1);
    plbox("bc", 0, 0, "bc", 0, 0);
    plschr(0, label_scale);
    for (PLINT j = 0; j < cols && j < static_cast<PLINT>(map.col_labels.size()); ++j)
      plmtex("bv", 0.6, (j + 0.5) / cols, 1.0, label(map.col_labels[j]).c_str());
    for (PLINT i = 0; i < rows && i < static_cast<PLINT>(map.row_labels.size()); ++i)
      plmtex("lv", 0.6, 1 - (i + 0.5) / rows, 1.0, label(map.row_labels[i]).c_str());
    plschr(0, 1.3);
    plmtex("t", 1.5, 0.5, 0.5, escaped(map.title).c_str());
    plschr(0, 1.1);
    plmtex("b", 3.5, 0.5, 0.5, escaped(map.x_label).c_str());
    plmtex("l", 4.0, 0.5, 0.5, escaped(map.y_label).c_str());
    // The colour bar on the right, with its scale.
    PLFLT width, height;
    const char* axis_options[] = {"bcvtm"};
    const char* label_text[] = {map.value_label.c_str()};
    PLINT label_opts[] = {PL_COLORBAR_LABEL_RIGHT};
    PLFLT ticks[] = {0};
    PLINT sub_ticks[] = {0};
    constexpr PLINT kSteps = 64;
    std::vector<PLFLT> levels(kSteps);
    for (PLINT k = 0; k < kSteps; ++k) levels[k] = lo + (hi - lo) * k / (kSteps - 1);
    const PLFLT* values[] = {levels.data()};
    PLINT n_values[] = {kSteps};
    plcolorbar(&width, &height, PL_COLORBAR_IMAGE, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT,
               0.03, 0, 0.04, 1.0, 0, 1, 1, 0, 0, 0, 0, 1, label_opts, label_text, 1, axis_options, ticks, sub_ticks,
               n_values, values);
  });
}

std::vector<std::vector<double>> tile(const std::vector<std::vector<std::vector<double>>>& tiles, int columns, double gap) {
  if (tiles.empty() || columns < 1) fail("tile", "needs at least one tile and one column");
  const size_t h = tiles[0].size(), w = h ? tiles[0][0].size() : 0;
  const size_t rows = (tiles.size() + static_cast<size_t>(columns) - 1) / static_cast<size_t>(columns);
  std::vector<std::vector<double>> out(rows * (h + 1) + 1, std::vector<double>(static_cast<size_t>(columns) * (w + 1) + 1, gap));
  for (size_t t = 0; t < tiles.size(); ++t) {
    const size_t top = (t / static_cast<size_t>(columns)) * (h + 1) + 1, left = (t % static_cast<size_t>(columns)) * (w + 1) + 1;
    for (size_t i = 0; i < h; ++i)
      for (size_t j = 0; j < w; ++j) out[top + i][left + j] = tiles[t][i][j];
  }
  return out;
}

std::vector<std::string> save_decision_regions(const std::string& stem, const DecisionRegions& plot) {
  const auto ny = static_cast<PLINT>(plot.grid.size());
  const auto nx = static_cast<PLINT>(ny ? plot.grid[0].size() : 0);
  if (nx == 0) fail("save_decision_regions", stem, ": empty grid");
  const auto classes = static_cast<PLINT>(std::max<size_t>(plot.class_names.size(), 1));
  std::vector<std::vector<PLFLT>> columns(nx, std::vector<PLFLT>(ny));
  for (PLINT i = 0; i < ny; ++i)
    for (PLINT j = 0; j < nx; ++j) columns[j][i] = plot.grid[i][j];
  std::vector<const PLFLT*> pointers(nx);
  for (PLINT j = 0; j < nx; ++j) pointers[j] = columns[j].data();
  return render_both(stem, [&] {
    plvpor(0.1, 0.96, 0.12, 0.92);
    plwind(plot.x_min, plot.x_max, plot.y_min, plot.y_max);
    // Region colours: the class colours mixed with white, one flat colour per class.
    std::vector<PLINT> r(classes), g(classes), b(classes);
    for (PLINT c = 0; c < classes; ++c) {
      const auto& rgb = kPalette[static_cast<size_t>(c) % kPalette.size()];
      r[c] = 255 - (255 - rgb[0]) * 3 / 10;
      g[c] = 255 - (255 - rgb[1]) * 3 / 10;
      b[c] = 255 - (255 - rgb[2]) * 3 / 10;
    }
    plscmap1n(classes);
    plscmap1(r.data(), g.data(), b.data(), classes);
    const double dx = (plot.x_max - plot.x_min) / nx, dy = (plot.y_max - plot.y_min) / ny;  // cell sizes (see save_heatmap)
    plimage(pointers.data(), nx, ny, plot.x_min, plot.x_max - dx, plot.y_min, plot.y_max - dy, -0.5, classes - 0.5,
            plot.x_min, plot.x_max - dx, plot.y_min, plot.y_max - dy);
    axes_and_title(plot.title, plot.x_label, plot.y_label, "bcnstv");
    for (PLINT c = 0; c < classes; ++c) {
      std::vector<PLFLT> xs, ys;
      for (size_t i = 0; i < plot.labels.size(); ++i)
        if (plot.labels[i] == c) xs.push_back(plot.px[i]), ys.push_back(plot.py[i]);
      plcol0(kFirstSeriesColour + c % static_cast<PLINT>(kPalette.size()));
      plschr(0, 0.7);  // small dots: there are many
      if (!xs.empty()) plstring(static_cast<PLINT>(xs.size()), xs.data(), ys.data(), "●");
      plschr(0, 1.1);
    }
    legend(plot.class_names, false);
  });
}

}  // namespace ladder::lessons
