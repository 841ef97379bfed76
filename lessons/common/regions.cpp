#include "lessons/common/regions.h"

#include <algorithm>
#include <cmath>

#include "core/autograd.h"

namespace ladder::lessons {

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

}  // namespace ladder::lessons
