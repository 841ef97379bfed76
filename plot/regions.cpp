#include "plot/regions.h"

#include <algorithm>
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "plot/plot_page.h"
#include "plot/plplot_errors.h"

namespace ladder::plot {

using page::as_fractions;
using page::axes_and_title;
using page::Point;

DecisionRegions decision_regions(const std::function<Tensor(const Tensor&)>& classify, const Tensor& x,
                                 const Tensor& labels, std::vector<std::string> class_names, std::string title,
                                 int resolution) {
  DecisionRegions plot{std::move(title)};
  plot.x_min = plot.y_min = INFINITY;
  plot.x_max = plot.y_max = -INFINITY;
  for (int64_t i = 0; i < x.size(0); ++i) {
    plot.px.push_back(x.data()[2 * i]);
    plot.py.push_back(x.data()[2 * i + 1]);
    plot.labels.push_back(static_cast<int>(labels.data()[i]));
    plot.x_min = std::min(plot.x_min, plot.px.back());
    plot.x_max = std::max(plot.x_max, plot.px.back());
    plot.y_min = std::min(plot.y_min, plot.py.back());
    plot.y_max = std::max(plot.y_max, plot.py.back());
  }
  const double mx = 0.1 * (plot.x_max - plot.x_min) + 1e-3, my = 0.1 * (plot.y_max - plot.y_min) + 1e-3;
  plot.x_min -= mx, plot.x_max += mx, plot.y_min -= my, plot.y_max += my;
  // Grid points at cell centres, row by row from the bottom.
  Tensor grid = empty({static_cast<int64_t>(resolution) * resolution, 2});
  for (int i = 0; i < resolution; ++i)
    for (int j = 0; j < resolution; ++j) {
      float* p = grid.data() + 2 * (static_cast<int64_t>(i) * resolution + j);
      p[0] = static_cast<float>(plot.x_min + (plot.x_max - plot.x_min) * (j + 0.5) / resolution);
      p[1] = static_cast<float>(plot.y_min + (plot.y_max - plot.y_min) * (i + 0.5) / resolution);
    }
  NoGradGuard no_grad;
  const Tensor classes = classify(grid);
  plot.grid.assign(static_cast<size_t>(resolution), std::vector<int>(static_cast<size_t>(resolution)));
  for (int i = 0; i < resolution; ++i)
    for (int j = 0; j < resolution; ++j)
      plot.grid[static_cast<size_t>(i)][static_cast<size_t>(j)] = static_cast<int>(classes.data()[i * resolution + j]);
  plot.class_names = std::move(class_names);
  return plot;
}

std::vector<std::string> save_decision_regions(const std::string& stem, const DecisionRegions& plot) {
  const page::Drawing drawing("save_decision_regions", stem + ".png");  // text is measured before the page is drawn
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

}  // namespace ladder::plot
