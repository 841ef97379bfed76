// Decision regions of a 2-D classifier: its prediction over a grid covering the data.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "plot/plot.h"

namespace ladder::plot {

// classify maps points (G, 2) to class ids (G). The grid covers the points x (N, 2) with a margin.
DecisionRegions decision_regions(const std::function<Tensor(const Tensor&)>& classify, const Tensor& x,
                                 const Tensor& labels, std::vector<std::string> class_names, std::string title,
                                 int resolution = 150);

}  // namespace ladder::plot
