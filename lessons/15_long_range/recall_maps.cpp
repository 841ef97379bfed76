#include "lessons/15_long_range/recall_maps.h"

#include "core/error.h"
#include "plot/plot.h"

namespace ladder::lessons {

void save_recall_maps(harness::Run& run, const std::vector<Tensor>& maps, const std::vector<std::string>& words,
                      const std::string& kind) {
  for (size_t layer = 0; layer < maps.size(); ++layer) {
    const Tensor& m = maps[layer];  // (B,H,T,T)
    const int64_t heads = m.size(1), T = m.size(2);
    if (T != static_cast<int64_t>(words.size()))
      fail("save_recall_maps", "layer ", layer + 1, " has ", T, " positions, the sequence ", words.size(), " words");
    std::vector<std::vector<std::vector<double>>> tiles;
    for (int64_t h = 0; h < heads; ++h) tiles.push_back(plot::matrix_rows(m.data() + h * T * T, T, T));
    std::vector<std::string> columns{""};  // the words under each head's tile, the borders between tiles blank
    for (int64_t h = 0; h < heads; ++h) {
      columns.insert(columns.end(), words.begin(), words.end());
      columns.emplace_back("");
    }
    std::vector<std::string> rows{""};
    rows.insert(rows.end(), words.begin(), words.end());
    rows.emplace_back("");
    run.wrote(plot::save_heatmap(run.path(cat("recall_maps_", kind, "_layer", layer + 1)),
                           {cat("Multi-query recall: ", kind, ", layer ", layer + 1, "'s attention, heads 1 to ", heads, " left to right"),
                            "key (the token attended to)", "query (the token attending)", "weight",
                            plot::tile(tiles, static_cast<int>(heads)), rows, columns}));
  }
}

}  // namespace ladder::lessons
