#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "plot/plot.h"
#include "plot/plot_page.h"
#include "plot/plplot_errors.h"

namespace ladder::plot {

using page::draw_title;
using page::plain_tick_label;

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

// Covers the NaN cells of a heatmap's values [row][col] (row 0 on top) with the grid's grey, a
// run of them along a row at a time; the window is one unit per cell.
void grey_out_missing(const std::vector<std::vector<double>>& values) {
  const auto rows = static_cast<double>(values.size());
  plcol0(page::kGridColour);
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = 0; j < values[i].size();) {
      if (!std::isnan(values[i][j])) {
        ++j;
        continue;
      }
      const size_t start = j;
      while (j < values[i].size() && std::isnan(values[i][j])) ++j;
      const double top = rows - static_cast<double>(i), bottom = top - 1;
      const PLFLT xs[] = {static_cast<double>(start), static_cast<double>(j), static_cast<double>(j), static_cast<double>(start)};
      const PLFLT ys[] = {bottom, bottom, top, top};
      plfill(4, xs, ys);
    }
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
  const page::Drawing drawing("save_heatmap", stem + ".png");  // text is measured before the page is drawn
  const auto rows = static_cast<PLINT>(map.values.size());
  const auto cols = static_cast<PLINT>(rows ? map.values[0].size() : 0);
  if (rows == 0 || cols == 0) fail("save_heatmap", stem, ": no values");
  for (const auto& row : map.values)
    if (static_cast<PLINT>(row.size()) != cols) fail("save_heatmap", stem, ": rows of different lengths");
  const auto [lo, hi] = colour_scale(map);
  // plimagefr wants data[x][y] with y growing upwards; row 0 goes on top.
  std::vector<std::vector<PLFLT>> columns(cols, std::vector<PLFLT>(rows));
  for (PLINT i = 0; i < rows; ++i)
    for (PLINT j = 0; j < cols; ++j) columns[j][rows - 1 - i] = std::isnan(map.values[i][j]) ? lo : map.values[i][j];
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
        grey_out_missing(map.values);
        plcol0(1);
        plbox("bc", 0, 0, "bc", 0, 0);
        plschr(0, fit.col_scale);
        const double cell_width = (vx1 - vx0) * width / cols;
        for (PLINT j = 0; j < cols && j < static_cast<PLINT>(col_labels.size()); ++j) {
          const std::string text = page::escaped(col_labels[j]);
          // Labels that fit their cell stay across even among upright ones: a "-" turned upright reads as "'".
          const bool across = !fit.upright || col_text.widths[j] * fit.col_scale <= 0.9 * cell_width;
          if (across) plmtex("b", 1.3, (j + 0.5) / cols, 0.5, text.c_str());
          else plmtex("bv", 0.6, (j + 0.5) / cols, 1.0, text.c_str());
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

std::vector<std::vector<double>> tile(const std::vector<std::vector<std::vector<double>>>& tiles, int columns) {
  if (tiles.empty() || columns < 1) fail("tile", "needs at least one tile and one column");
  const size_t h = tiles[0].size(), w = h ? tiles[0][0].size() : 0;
  const size_t rows = (tiles.size() + static_cast<size_t>(columns) - 1) / static_cast<size_t>(columns);
  std::vector<std::vector<double>> out(rows * (h + 1) + 1, std::vector<double>(static_cast<size_t>(columns) * (w + 1) + 1, NAN));
  for (size_t t = 0; t < tiles.size(); ++t) {
    const size_t top = (t / static_cast<size_t>(columns)) * (h + 1) + 1, left = (t % static_cast<size_t>(columns)) * (w + 1) + 1;
    for (size_t i = 0; i < h; ++i)
      for (size_t j = 0; j < w; ++j) out[top + i][left + j] = tiles[t][i][j];
  }
  return out;
}

}  // namespace ladder::plot
