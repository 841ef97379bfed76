#include "plot/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "core/error.h"
#include "plot/plot_page.h"
#include "plot/plplot_errors.h"

namespace ladder::plot {

using page::as_fractions;
using page::axes_and_title;
using page::Point;

namespace {

// Grid lines and labels at the log_axis_values of a log10 y axis.
void log_y_labels(double x_min, double x_max, double y_min, double y_max) {
  for (const double v : log_axis_values(y_min, y_max)) {
    const double y = std::log10(v);
    if (y < y_min || y > y_max) continue;
    const PLFLT xs[] = {x_min, x_max}, ys[] = {y, y};
    plcol0(page::kGridColour);
    plline(2, xs, ys);
    plcol0(1);
    char text[32];  // 0.01 to 5000 written out, beyond that short exponents: at most four characters
    const int decade = static_cast<int>(std::floor(y + 1e-9));
    if (decade < -2 || decade > 3) std::snprintf(text, sizeof text, "%ge%d", v / std::pow(10.0, decade), decade);
    else std::snprintf(text, sizeof text, "%g", v);
    plmtex("lv", 0.7, (y - y_min) / (y_max - y_min), 1.0, text);
  }
}

// y where the axis draws it: log10 y on a log axis.
double as_drawn(double y, bool log_y) { return log_y ? std::log10(y) : y; }

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

Drawn drawn(const Series& s, const LineChart& chart) {
  const bool log_y = chart.log_y;
  Drawn d;
  d.runs.emplace_back();
  for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
    const double x = chart.log2_x ? (s.x[i] > 0 ? std::log2(s.x[i]) : NAN) : s.x[i];
    const bool drawable = std::isfinite(x) && unplottable(s.y[i], log_y).empty();
    if (drawable) d.runs.back().push_back({x, as_drawn(s.y[i], log_y)});
    if ((!drawable || s.dots) && !d.runs.back().empty()) d.runs.emplace_back();  // the line breaks here (dots: after each point)
  }
  const std::vector<OffScale> off = off_scale(s, log_y);
  for (const OffScale& run : off) {
    const double x = chart.log2_x ? std::log2(run.first) : run.first;
    if (!std::isfinite(x)) continue;
    if (run.what == "infinite") d.above.push_back(x);
    else if (run.what != "NaN") d.below.push_back(x);
  }
  d.note = off_scale_note(off, chart.x_label);
  return d;
}

// About a dozen hollow marks along a series that lies on another, starting at a place of its own
// so that the marks of two such series do not fall together.
void draw_marks(const Drawn& d, size_t k) {
  std::vector<Point> points;
  for (const auto& run : d.runs) points.insert(points.end(), run.begin(), run.end());
  const size_t every = std::max<size_t>(1, points.size() / 12);
  plwidth(1);
  plschr(0, 1.0);
  for (size_t i = k % every; i < points.size(); i += every) plstring(1, &points[i].x, &points[i].y, page::overlap_marker(k));
  plwidth(page::kLineWidth);
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


int64_t lies_on(const std::vector<Series>& series, size_t k, bool log_y, double tolerance) {
  const Series& s = series[k];
  if (s.dots || s.x.size() < 2 || s.y.size() != s.x.size()) return -1;
  for (size_t j = 0; j < k; ++j) {
    const Series& other = series[j];
    if (other.dots || other.x != s.x || other.y.size() != s.y.size()) continue;
    bool close = true;
    for (size_t i = 0; i < s.y.size() && close; ++i)
      close = std::fabs(as_drawn(s.y[i], log_y) - as_drawn(other.y[i], log_y)) <= tolerance;
    if (close) return static_cast<int64_t>(j);
  }
  return -1;
}

std::string percent_label(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * share);
  return text;
}

std::vector<Series> baseline_lines(double chance, double majority, double x_from, double x_to) {
  const auto level = [&](const std::string& name, double share) {
    return Series{name, {x_from, x_to}, {100 * share, 100 * share}};
  };
  // Levels less than a point apart would draw as one line: one short legend entry names both.
  if (std::fabs(chance - majority) < 0.01)
    return {level(cat("chance ", percent_label(chance), ", most common ", percent_label(majority)), chance)};
  return {level("chance, " + percent_label(chance), chance),
          level("the most common answer, " + percent_label(majority), majority)};
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

std::pair<double, double> y_extent(double low, double high, const LineChart& chart) {
  const double bottom = as_drawn(chart.y_floor, chart.log_y), top = as_drawn(chart.y_ceiling, chart.log_y);
  if (std::isfinite(bottom)) low = std::min(low, bottom);
  if (std::isfinite(top)) high = std::max(high, top);
  return {low, high};
}

std::vector<std::string> save_line_chart(const std::string& stem, const LineChart& chart) {
  const page::Drawing drawing("save_line_chart", stem + ".png");  // text is measured before the page is drawn
  std::vector<Drawn> series;
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (const Series& s : chart.series) {
    series.push_back(drawn(s, chart));
    for (const auto& run : series.back().runs)
      for (const Point& p : run) x_min = std::min(x_min, p.x), x_max = std::max(x_max, p.x), y_min = std::min(y_min, p.y), y_max = std::max(y_max, p.y);
    for (const double x : series.back().above) x_min = std::min(x_min, x), x_max = std::max(x_max, x);
    for (const double x : series.back().below) x_min = std::min(x_min, x), x_max = std::max(x_max, x);
  }
  if (!std::isfinite(y_min)) fail("save_line_chart", stem, ": no finite points to plot");
  std::tie(y_min, y_max) = y_extent(y_min, y_max, chart);
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

  // A series within 1% of the plot's height of an earlier one everywhere is hidden under it: it gets marks.
  std::vector<int64_t> under(series.size());
  for (size_t k = 0; k < series.size(); ++k) under[k] = lies_on(chart.series, k, chart.log_y, 0.01 * (top - bottom));
  std::vector<page::LegendEntry> entries;
  std::vector<std::vector<Point>> ink;
  for (size_t k = 0; k < series.size(); ++k) {
    std::string name = chart.series[k].name;
    if (under[k] >= 0) name += " (lies on " + chart.series[static_cast<size_t>(under[k])].name + ")";
    const std::string& note = series[k].note;
    entries.push_back({note.empty() ? name : name.empty() ? note : name + " (" + note + ")", k, chart.series[k].dots,
                       under[k] >= 0 ? page::overlap_marker(k) : ""});
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
    axes_and_title(chart.title, chart.x_label, chart.y_label, chart.log_y ? "bc" : "bcnstv", place.plot_top, chart.x_tick,
                   chart.log2_x);
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
      if (under[k] >= 0) draw_marks(series[k], k);
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

}  // namespace ladder::plot
