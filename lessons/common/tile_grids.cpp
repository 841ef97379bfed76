#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "lessons/common/plot.h"
#include "lessons/common/plot_page.h"

namespace ladder::lessons {

namespace {

constexpr PLINT kGridWidth = 700, kHeight = 800;  // pixels: the page is one such column per grid
// Fractions of the page: the grids' row, the room each takes across (the last 0.07 a gap) and the
// left margin for the first one's labels.
constexpr double kLeft = 0.06, kColumn = 0.98, kGap = 0.07, kBottom = 0.19, kTop = 0.88;

void fill_tile(double x0, double y0, double x1, double y1) {
  PLFLT xs[] = {x0, x1, x1, x0}, ys[] = {y0, y0, y1, y1};
  plfill(4, xs, ys);
}

// One grid in the square viewport (x0..x1, y0..y1 of the page).
void draw_grid(const TileGrid& grid, const TileGrids& plot, double x0, double x1) {
  const auto n = static_cast<int64_t>(grid.tiles.size());
  const double low = -0.5, high = static_cast<double>(n) - 0.5;
  plvpas(x0, x1, kBottom, kTop, 1.0);
  plwind(low, high, high, low);  // row 0 at the top
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int kind = grid.tiles[i][j];
      if (kind < 0) continue;
      plcol0(page::series_colour(plot.kinds[kind].colour));
      const auto row = static_cast<double>(i), col = static_cast<double>(j);
      fill_tile(col - 0.5, row - 0.5, col + 0.5, row + 0.5);
    }
  plcol0(2);  // light grey lines between the tiles
  for (int64_t b = 1; b < n; ++b) {
    const double edge = static_cast<double>(b) - 0.5;
    pljoin(edge, low, edge, high);
    pljoin(low, edge, high, edge);
  }
  plcol0(1);
  const double tick = n <= 16 ? 2 : n <= 64 ? 8 : 16;
  plbox("bcnt", tick, 0, "bcntv", tick, 0);
  plschr(0, page::kTextScale);
  plmtex("t", 1.2, 0.5, 0.5, page::escaped(grid.title).c_str());
  plmtex("b", 2.8, 0.5, 0.5, page::escaped(plot.x_label).c_str());
  plmtex("l", 3.4, 0.5, 0.5, page::escaped(plot.y_label).c_str());
}

// The page's title at the top and the legend along the bottom: a filled square per kind, then a
// white one.
void draw_title_and_legend(const TileGrids& plot) {
  plvpor(0, 1, 0, 1);
  plwind(0, 1, 0, 1);
  plcol0(1);
  plschr(0, 1.3);
  plptex(0.5, 0.955, 1, 0, 0.5, page::escaped(plot.title).c_str());
  plschr(0, page::kTextScale);
  std::vector<std::pair<std::string, PLINT>> entries;
  for (const TileKind& kind : plot.kinds) entries.emplace_back(kind.name, page::series_colour(kind.colour));
  entries.emplace_back(plot.white_name, 0);  // cmap0 colour 0: the page's white
  double x = 0.18;
  for (const auto& [name, colour] : entries) {
    plcol0(colour);
    fill_tile(x, 0.02, x + 0.018, 0.052);
    plcol0(1);
    PLFLT xs[] = {x, x + 0.018, x + 0.018, x, x}, ys[] = {0.02, 0.02, 0.052, 0.052, 0.02};
    plline(5, xs, ys);
    plptex(x + 0.026, 0.028, 1, 0, 0, page::escaped(name).c_str());
    x += 0.026 + 0.012 * static_cast<double>(name.size()) + 0.04;
  }
}

void check_grids(const std::string& stem, const TileGrids& plot) {
  if (plot.grids.empty()) fail("save_tile_grids", stem, ": no grids");
  for (const TileGrid& grid : plot.grids)
    for (size_t i = 0; i < grid.tiles.size(); ++i) {
      if (grid.tiles[i].size() != grid.tiles.size())
        fail("save_tile_grids", stem, ": grid '", grid.title, "' is not square: ", grid.tiles.size(), " rows, row ", i,
             " has ", grid.tiles[i].size(), " tiles");
      for (const int kind : grid.tiles[i])
        if (kind < -1 || kind >= static_cast<int>(plot.kinds.size()))
          fail("save_tile_grids", stem, ": grid '", grid.title, "' has a tile of kind ", kind, ", but ",
               plot.kinds.size(), " kinds are listed (-1: white)");
    }
}

}  // namespace

std::vector<std::string> save_tile_grids(const std::string& stem, const TileGrids& plot) {
  check_grids(stem, plot);
  const double column = kColumn / static_cast<double>(plot.grids.size());
  return page::render_both(
      "save_tile_grids", stem,
      [&] {
        for (size_t g = 0; g < plot.grids.size(); ++g) {
          const double x0 = kLeft + static_cast<double>(g) * column;
          draw_grid(plot.grids[g], plot, x0, x0 + column - kGap);
        }
        draw_title_and_legend(plot);
      },
      kGridWidth * static_cast<PLINT>(plot.grids.size()), kHeight);
}

}  // namespace ladder::lessons
