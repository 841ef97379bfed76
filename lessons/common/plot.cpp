#include "lessons/common/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "lessons/common/plot_page.h"

namespace ladder::lessons {

using page::Point;

namespace {

// The spacing of x ticks: 1, 2, 2.5 or 5 times a power of ten, with a label for every 80 pixels
// of plot at most (PLplot's own choice ignores the plot's width, and crowds a narrow one).
double x_tick_spacing() {
  PLFLT vx0, vx1, vy0, vy1, wx0, wx1, wy0, wy1;
  plgvpd(&vx0, &vx1, &vy0, &vy1);
  plgvpw(&wx0, &wx1, &wy0, &wy1);
  const double labels = std::max(2.0, (vx1 - vx0) * page::kWidth / 80), range = std::fabs(wx1 - wx0);
  const double power = std::pow(10.0, std::floor(std::log10(range / labels)));
  for (const double m : {1.0, 2.0, 2.5, 5.0})
    if (range / (m * power) <= labels) return m * power;
  return 10 * power;
}

// Tick labels as plain numbers: PLplot's own labels take a factor out of narrow ranges
// (0.986 ... 0.996 became 9.86 ... 9.96 and "(x10^-1)" above the axis, cut off by the page's edge).
void plain_tick_label(PLINT, PLFLT value, char* label, PLINT length, PLPointer) {
  if (std::fabs(value) < 1e-12) value = 0;  // a tick at 0 computed as 1e-17
  std::snprintf(label, static_cast<size_t>(length), "%.6g", value);
}

// The title centred above the plot, `above` title-line heights over it, in a smaller font when it
// would run off a page `page_width` pixels wide (a long source sentence in an attention map's title).
void draw_title(const std::string& title, double above, double page_width) {
  constexpr double kTitleScale = 1.3;
  PLFLT vx0, vx1, vy0, vy1;
  plgvpd(&vx0, &vx1, &vy0, &vy1);
  const double centre = (vx0 + vx1) / 2, room = 2 * std::min(centre, 1 - centre) * page_width - 20;
  const double width = 1.1 * page::measure({title}, kTitleScale).widths[0];  // measured a little short
  const double scale = width > room ? kTitleScale * room / width : kTitleScale;
  plschr(0, scale);
  plmtex("t", above * kTitleScale / scale, 0.5, 0.5, page::escaped(title).c_str());
}

// The title goes at the top of the page's plot area (kTop), above a legend that may sit between
// it and a plot that reaches up to `plot_top`. x_tick 0: chosen by x_tick_spacing.
void axes_and_title(const std::string& title, const std::string& x_label, const std::string& y_label, const char* y_options,
                    double plot_top, double x_tick = 0) {
  const PLINT x_minor = x_tick > 0 ? 1 : 0;  // a given spacing (whole-number x) has no minor ticks
  if (x_tick == 0) x_tick = x_tick_spacing();
  const bool log_y = std::string(y_options) == "bc";  // log_y_labels draws that axis's grid itself
  plcol0(2);
  plbox("g", x_tick, 0, log_y ? "" : "g", 0, 0);  // grid lines first, under the data
  plcol0(1);
  plslabelfunc(plain_tick_label, nullptr);
  plbox("bcnsto", x_tick, x_minor, (std::string(y_options) + "o").c_str(), 0, 0);
  draw_title(title, 1.5 + (page::kTop - plot_top) * page::kHeight / page::line_height(1.3), page::kWidth);
  plschr(0, page::kTextScale);
  plmtex("b", 3.0, 0.5, 0.5, page::escaped(x_label).c_str());
  plmtex("l", 5.2, 0.5, 0.5, page::escaped(y_label).c_str());
}

// Grid lines and labels at the log_axis_values of a log10 y axis.
void log_y_labels(double x_min, double x_max, double y_min, double y_max) {
  for (const double v : log_axis_values(y_min, y_max)) {
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

// What a value that a chart cannot draw is called; "" for one that it can.
std::string unplottable(double y, bool log_y) {
  if (std::isnan(y)) return "NaN";
  if (y == INFINITY) return "infinite";
  if (y == -INFINITY) return "minus infinite";
  if (log_y && y == 0) return "0";
  if (log_y && y < 0) return "negative";
  return "";
}

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

// A series as a line chart draws it: runs of drawable points (y as on the axis: log10 y on a log
// axis), and where runs of values it cannot draw start.
struct Drawn {
  std::vector<std::vector<Point>> runs;
  std::vector<double> above, below;  // infinite values (a mark at the top edge); 0 or less on a log axis, minus infinite (the bottom)
  std::string note;                  // what the legend says about them
};

Drawn drawn(const Series& s, bool log_y, const std::string& x_label) {
  Drawn d;
  d.runs.emplace_back();
  for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
    const bool drawable = std::isfinite(s.x[i]) && unplottable(s.y[i], log_y).empty();
    if (drawable) d.runs.back().push_back({s.x[i], log_y ? std::log10(s.y[i]) : s.y[i]});
    if ((!drawable || s.dots) && !d.runs.back().empty()) d.runs.emplace_back();  // the line breaks here (dots: after each point)
  }
  const std::vector<OffScale> off = off_scale(s, log_y);
  for (const OffScale& run : off)
    if (run.what == "infinite") d.above.push_back(run.first);
    else if (run.what != "NaN") d.below.push_back(run.first);
  d.note = off_scale_note(off, x_label);
  return d;
}

// Points in plot coordinates as fractions of the plot area (0..1 across and up).
std::vector<Point> as_fractions(const std::vector<Point>& points, double x_min, double x_max, double y_min, double y_max) {
  std::vector<Point> out;
  for (const Point& p : points) out.push_back({(p.x - x_min) / (x_max - x_min), (p.y - y_min) / (y_max - y_min)});
  return out;
}

}  // namespace

std::vector<double> log_axis_values(double y_min, double y_max) {
  std::vector<double> values;
  if (y_max - y_min > 2.5) {
    const auto lo = static_cast<int>(std::ceil(y_min)), hi = static_cast<int>(std::floor(y_max));
    int every = 1;
    for (const int e : {1, 2, 3, 5, 10, 20, 25, 50, 100}) {
      every = e;
      if ((hi - lo) / e < 8) break;
    }
    for (int decade = every * static_cast<int>(std::ceil(static_cast<double>(lo) / every)); decade <= hi; decade += every)
      values.push_back(std::pow(10.0, decade));
  } else if (y_max - y_min > 0.7) {
    for (int decade = static_cast<int>(std::floor(y_min)); decade <= static_cast<int>(std::ceil(y_max)); ++decade)
      for (const double m : {1, 2, 5}) values.push_back(m * std::pow(10.0, decade));
  } else {  // evenly spaced round values, about five of them
    const double lo = std::pow(10.0, y_min), hi = std::pow(10.0, y_max), rough = (hi - lo) / 5;
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    const double step = power * (rough / power < 2 ? 1 : rough / power < 5 ? 2 : 5);
    for (double v = std::ceil(lo / step) * step; v <= hi; v += step) values.push_back(v);
  }
  return values;
}


std::vector<OffScale> off_scale(const Series& s, bool log_y) {
  std::vector<OffScale> runs;
  const size_t n = std::min(s.x.size(), s.y.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string what = unplottable(s.y[i], log_y);
    if (what.empty() || !std::isfinite(s.x[i])) continue;
    if (!runs.empty() && runs.back().what == what && unplottable(s.y[i - 1], log_y) == what) {
      runs.back().last = s.x[i];  // the run goes on
      runs.back().to_the_end = i + 1 == n;
      continue;
    }
    runs.push_back({what, s.x[i], s.x[i], false});
  }
  return runs;
}

std::string off_scale_note(const std::vector<OffScale>& runs, const std::string& x_label) {
  std::string note;
  for (size_t k = 0; k < runs.size() && k < 3; ++k) {
    const OffScale& r = runs[k];
    note += k ? "; " : "";
    if (r.to_the_end) note += r.what + " from " + x_label + " " + number(r.first);
    else note += r.what + " at " + x_label + " " + number(r.first) + (r.last != r.first ? "-" + number(r.last) : "");
  }
  if (runs.size() > 3) note += "; ...";
  return note;
}

std::vector<std::string> save_line_chart(const std::string& stem, const LineChart& chart) {
  std::vector<Drawn> series;
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (const Series& s : chart.series) {
    series.push_back(drawn(s, chart.log_y, chart.x_label));
    for (const auto& run : series.back().runs)
      for (const Point& p : run) x_min = std::min(x_min, p.x), x_max = std::max(x_max, p.x), y_min = std::min(y_min, p.y), y_max = std::max(y_max, p.y);
    for (const double x : series.back().above) x_min = std::min(x_min, x), x_max = std::max(x_max, x);
    for (const double x : series.back().below) x_min = std::min(x_min, x), x_max = std::max(x_max, x);
  }
  if (!std::isfinite(y_min)) fail("save_line_chart", stem, ": no finite points to plot");
  if (x_max == x_min) x_max = x_min + 1;
  const bool dots = std::any_of(series.begin(), series.end(), [](const Drawn& d) {
    return std::any_of(d.runs.begin(), d.runs.end(), [](const auto& run) { return run.size() == 1; });
  });
  double biggest = 1;  // the largest dot, times the default: bigger dots need more room at the edges
  for (const Series& s : chart.series) biggest = std::max(biggest, s.dot_size);
  const double x_pad = dots ? 0.02 * biggest * (x_max - x_min) : 0;  // a lone point is a dot: keep it off the edge
  x_min -= x_pad, x_max += x_pad;
  const double pad = y_max > y_min ? 0.05 * biggest * (y_max - y_min) : 0.5;
  const double top = y_max + pad, bottom = y_min - pad;
  // Values off the scale get a mark just inside the plot's top or bottom edge.
  constexpr double kMarkScale = 0.9;
  const double mark = page::line_height(kMarkScale) / ((page::kTop - page::kBottom) * page::kHeight) * (top - bottom);  // its height

  std::vector<page::LegendEntry> entries;
  std::vector<std::vector<Point>> ink;
  for (size_t k = 0; k < series.size(); ++k) {
    const std::string& name = chart.series[k].name;
    const std::string& note = series[k].note;
    entries.push_back({note.empty() ? name : name.empty() ? note : name + " (" + note + ")", k, chart.series[k].dots});
    for (const auto& run : series[k].runs) ink.push_back(as_fractions(run, x_min, x_max, bottom, top));
    for (const double x : series[k].above) ink.push_back(as_fractions({{x, top}, {x, top - mark}}, x_min, x_max, bottom, top));
    for (const double x : series[k].below) ink.push_back(as_fractions({{x, bottom}, {x, bottom + mark}}, x_min, x_max, bottom, top));
  }
  const bool named = std::any_of(entries.begin(), entries.end(), [](const page::LegendEntry& e) { return !e.name.empty(); });
  const page::Legend legend(series.size() > 1 || named ? entries : std::vector<page::LegendEntry>{});
  const page::Placement place = page::place_legend(legend, ink);
  // The marks' middles (a plot made shorter for a legend above it fits more of the y range in a mark).
  const double shorter = (place.plot_top - page::kBottom) / (page::kTop - page::kBottom);
  const double mark_top = top - mark / shorter / 2, mark_bottom = bottom + mark / shorter / 2;
  return page::render_both("save_line_chart", stem, [&] {
    plvpor(page::kLeft, place.plot_right, page::kBottom, place.plot_top);
    plwind(x_min, x_max, bottom, top);
    axes_and_title(chart.title, chart.x_label, chart.y_label, chart.log_y ? "bc" : "bcnstv", place.plot_top, chart.x_tick);
    if (chart.log_y) log_y_labels(x_min, x_max, bottom, top);
    for (size_t k = 0; k < series.size(); ++k) {
      plcol0(page::series_colour(k));
      plwidth(page::kLineWidth);
      page::set_dashes(k);
      const double dot = chart.series[k].dot_size > 0 ? chart.series[k].dot_size : 1;
      plschr(0, chart.series[k].dots ? 0.7 * dot : page::kTextScale);  // scattered data: small dots, there are many
      for (const auto& run : series[k].runs) {
        std::vector<PLFLT> xs, ys;
        for (const Point& p : run) xs.push_back(p.x), ys.push_back(p.y);
        if (run.size() > 1) plline(static_cast<PLINT>(xs.size()), xs.data(), ys.data());
        if (run.size() == 1) plstring(1, xs.data(), ys.data(), "●");
      }
      page::set_dashes(0);
      plwidth(1);
      plschr(0, kMarkScale);
      for (const double x : series[k].above) plstring(1, &x, &mark_top, "▲");
      for (const double x : series[k].below) plstring(1, &x, &mark_bottom, "▼");
      plschr(0, page::kTextScale);
    }
    if (!legend.empty()) legend.draw(place.legend_left, place.legend_top, place.columns);
  });
}

namespace {

// A token as a heatmap label: white space as visible marks.
std::string label(const std::string& token) {
  if (token == " ") return "␣";
  if (token == "\n") return "⏎";
  return token;
}

std::vector<std::string> labels(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  for (const std::string& t : tokens) out.push_back(label(t));
  return out;
}

// How a heatmap's labels fit its cells (sizes in pixels): column labels written across when they
// fit at a readable size, else turned upright; each as large as its cell allows, up to the normal
// size. `below` and `left`: how far they reach out of the plot.
struct LabelFit {
  double col_scale, row_scale;
  bool upright;
  double below = 0, left = 0;
};

LabelFit fit_labels(const page::TextSizes& cols, const page::TextSizes& rows, double cell_width, double cell_height) {
  const double line = cols.height;
  auto widest = [](const page::TextSizes& t) { return t.widths.empty() ? 0.0 : *std::max_element(t.widths.begin(), t.widths.end()); };
  LabelFit fit{};
  const double across = widest(cols) > 0 ? std::min(1.0, 0.9 * cell_width / widest(cols)) : 1.0;
  fit.upright = across < 0.6;
  fit.col_scale = fit.upright ? std::min(1.0, 0.9 * cell_width / line) : across;
  if (!cols.widths.empty()) fit.below = fit.col_scale * (fit.upright ? 0.6 * line + widest(cols) : 2.0 * line);
  fit.row_scale = std::min(1.0, 0.8 * cell_height / line);
  if (!rows.widths.empty()) fit.left = fit.row_scale * (0.6 * line + widest(rows));
  return fit;
}

}  // namespace

std::vector<std::vector<double>> matrix_rows(const float* values, int64_t rows, int64_t cols) {
  std::vector<std::vector<double>> out;
  for (int64_t i = 0; i < rows; ++i) out.emplace_back(values + i * cols, values + (i + 1) * cols);
  return out;
}

std::vector<std::string> sparse_labels(const std::vector<double>& values, int64_t every) {
  std::vector<std::string> out;
  for (size_t i = 0; i < values.size(); ++i) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", values[i]);
    out.push_back(static_cast<int64_t>(i) % every == 0 ? text : "");
  }
  return out;
}

std::pair<double, double> colour_scale(const Heatmap& map) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& row : map.values)
    for (double v : row)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (map.diverging) hi = std::max(std::fabs(lo), std::fabs(hi)), lo = -hi;
  if (!std::isnan(map.scale_min)) lo = map.scale_min;
  if (!std::isnan(map.scale_max)) hi = map.scale_max;
  if (!std::isfinite(lo)) lo = 0;  // no finite value
  if (!(hi > lo)) hi = lo + 1;
  return {lo, hi};
}

std::vector<std::string> save_heatmap(const std::string& stem, const Heatmap& map) {
  const auto rows = static_cast<PLINT>(map.values.size());
  const auto cols = static_cast<PLINT>(rows ? map.values[0].size() : 0);
  if (rows == 0 || cols == 0) fail("save_heatmap", stem, ": no values");
  for (const auto& row : map.values)
    if (static_cast<PLINT>(row.size()) != cols) fail("save_heatmap", stem, ": rows of different lengths");
  const auto [lo, hi] = colour_scale(map);
  // plimagefr wants data[x][y] with y growing upwards; row 0 goes on top.
  std::vector<std::vector<PLFLT>> columns(cols, std::vector<PLFLT>(rows));
  for (PLINT i = 0; i < rows; ++i)
    for (PLINT j = 0; j < cols; ++j) columns[j][rows - 1 - i] = map.values[i][j];
  std::vector<const PLFLT*> pointers(cols);
  for (PLINT j = 0; j < cols; ++j) pointers[j] = columns[j].data();

  // The page, in pixels: labelled cells get at least kCell pixels (the page grows for many of
  // them), and margins hold the labels, the axis labels, the title and the colour bar.
  constexpr double kCell = 22, kRightMargin = 180, kTopMargin = 70, kBarGap = 20, kBarWidth = 28;
  const std::vector<std::string> col_labels = labels(map.col_labels), row_labels = labels(map.row_labels);
  const page::TextSizes col_text = page::measure(col_labels, 1.0), row_text = page::measure(row_labels, 1.0);
  const double axis_line = page::line_height(page::kTextScale);
  const double plot_width = col_labels.empty() ? 0 : kCell * cols, plot_height = row_labels.empty() ? 0 : kCell * rows;
  const LabelFit estimate = fit_labels(col_text, row_text, std::max(kCell, 700.0 / cols), std::max(kCell, 500.0 / rows));
  const double left = 10 + estimate.left + 2.2 * axis_line, bottom = 10 + estimate.below + 2.6 * axis_line;
  const auto width = static_cast<PLINT>(std::max<double>(page::kWidth, left + plot_width + kRightMargin));
  const auto height = static_cast<PLINT>(std::max<double>(page::kHeight, kTopMargin + plot_height + bottom));
  const double x0 = left / width, x1 = 1 - kRightMargin / width, y0 = bottom / height, y1 = 1 - kTopMargin / height;
  return page::render_both(
      "save_heatmap", stem,
      [&] {
        if (map.square_cells) plvpas(x0, x1, y0, y1, static_cast<PLFLT>(rows) / cols);
        else plvpor(x0, x1, y0, y1);
        PLFLT vx0, vx1, vy0, vy1;
        plgvpd(&vx0, &vx1, &vy0, &vy1);
        const LabelFit fit = fit_labels(col_text, row_text, (vx1 - vx0) * width / cols, (vy1 - vy0) * height / rows);
        plwind(0, cols, 0, rows);
        if (map.diverging) {  // blue below zero, white at zero, red above
          const PLFLT at[] = {0, 0.5, 1}, r[] = {0.02, 1, 0.7}, g[] = {0.19, 1, 0.01}, b[] = {0.38, 1, 0.11};
          plscmap1l(1, 3, at, r, g, b, nullptr);
        } else {  // white (low) to dark blue (high)
          const PLFLT at[] = {0, 1}, r[] = {1, 0.03}, g[] = {1, 0.19}, b[] = {1, 0.42};
          plscmap1l(1, 2, at, r, g, b, nullptr);
        }
        // plimagefr draws cell i over [xmin + i dx, xmin + (i+1) dx] with dx = (xmax - xmin) / (n - 1):
        // giving n - 1 as the extent makes every cell one unit wide. Colours run from lo to hi (plimage
        // would stretch them over the values' own range); zmin = zmax = 0: every value is drawn.
        plimagefr(pointers.data(), cols, rows, 0, cols - 1, 0, rows - 1, 0, 0, lo, hi, nullptr, nullptr);
        plcol0(1);
        plbox("bc", 0, 0, "bc", 0, 0);
        plschr(0, fit.col_scale);
        for (PLINT j = 0; j < cols && j < static_cast<PLINT>(col_labels.size()); ++j) {
          const std::string text = page::escaped(col_labels[j]);
          if (fit.upright) plmtex("bv", 0.6, (j + 0.5) / cols, 1.0, text.c_str());
          else plmtex("b", 1.3, (j + 0.5) / cols, 0.5, text.c_str());
        }
        plschr(0, fit.row_scale);
        for (PLINT i = 0; i < rows && i < static_cast<PLINT>(row_labels.size()); ++i)
          plmtex("lv", 0.6, 1 - (i + 0.5) / rows, 1.0, page::escaped(row_labels[i]).c_str());
        draw_title(map.title, 1.5, width);
        plschr(0, page::kTextScale);
        plmtex("b", fit.below / axis_line + 1.3, 0.5, 0.5, page::escaped(map.x_label).c_str());
        plmtex("l", fit.left / axis_line + 1.2, 0.5, 0.5, page::escaped(map.y_label).c_str());
        // The colour bar on the right, with its scale.
        PLFLT bar_width, bar_height;
        plslabelfunc(plain_tick_label, nullptr);
        const char* axis_options[] = {"bcvtmo"};
        const char* label_text[] = {map.value_label.c_str()};
        PLINT label_opts[] = {PL_COLORBAR_LABEL_RIGHT};
        PLFLT ticks[] = {0};
        PLINT sub_ticks[] = {0};
        constexpr PLINT kSteps = 64;
        std::vector<PLFLT> levels(kSteps);
        for (PLINT k = 0; k < kSteps; ++k) levels[k] = lo + (hi - lo) * k / (kSteps - 1);
        const PLFLT* values[] = {levels.data()};
        PLINT n_values[] = {kSteps};
        plcolorbar(&bar_width, &bar_height, PL_COLORBAR_IMAGE, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT,
                   kBarGap / width / (vx1 - vx0), 0, kBarWidth / width / (vx1 - vx0), 1.0, 0, 1, 1, 0, 0, 0, 0, 1, label_opts, label_text, 1,
                   axis_options, ticks, sub_ticks, n_values, values);
      },
      width, height);
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
  std::vector<page::LegendEntry> entries;
  for (size_t c = 0; c < plot.class_names.size(); ++c) entries.push_back({plot.class_names[c], c, /*dot=*/true});
  const page::Legend legend(entries);
  std::vector<std::vector<Point>> ink;
  for (size_t i = 0; i < plot.px.size(); ++i)
    ink.push_back(as_fractions({{plot.px[i], plot.py[i]}}, plot.x_min, plot.x_max, plot.y_min, plot.y_max));
  const page::Placement place = page::place_legend(legend, ink);
  return page::render_both("save_decision_regions", stem, [&] {
    plvpor(page::kLeft, place.plot_right, page::kBottom, place.plot_top);
    plwind(plot.x_min, plot.x_max, plot.y_min, plot.y_max);
    // Region colours: the class colours mixed with white, one flat colour per class.
    std::vector<PLINT> r(classes), g(classes), b(classes);
    for (PLINT c = 0; c < classes; ++c) {
      const auto& rgb = page::kPalette[static_cast<size_t>(c) % page::kPalette.size()];
      r[c] = 255 - (255 - rgb[0]) * 3 / 10;
      g[c] = 255 - (255 - rgb[1]) * 3 / 10;
      b[c] = 255 - (255 - rgb[2]) * 3 / 10;
    }
    plscmap1n(classes);
    plscmap1(r.data(), g.data(), b.data(), classes);
    const double dx = (plot.x_max - plot.x_min) / nx, dy = (plot.y_max - plot.y_min) / ny;  // cell sizes (see save_heatmap)
    plimage(pointers.data(), nx, ny, plot.x_min, plot.x_max - dx, plot.y_min, plot.y_max - dy, -0.5, classes - 0.5,
            plot.x_min, plot.x_max - dx, plot.y_min, plot.y_max - dy);
    axes_and_title(plot.title, plot.x_label, plot.y_label, "bcnstv", place.plot_top);
    for (PLINT c = 0; c < classes; ++c) {
      std::vector<PLFLT> xs, ys;
      for (size_t i = 0; i < plot.labels.size(); ++i)
        if (plot.labels[i] == c) xs.push_back(plot.px[i]), ys.push_back(plot.py[i]);
      plcol0(page::series_colour(static_cast<size_t>(c)));
      plschr(0, 0.7);  // small dots: there are many
      if (!xs.empty()) plstring(static_cast<PLINT>(xs.size()), xs.data(), ys.data(), "●");
      plschr(0, page::kTextScale);
    }
    if (!legend.empty()) legend.draw(place.legend_left, place.legend_top, place.columns);
  });
}

}  // namespace ladder::lessons
