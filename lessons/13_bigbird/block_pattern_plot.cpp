#include "lessons/13_bigbird/block_pattern_plot.h"

#include <cstdint>
#include <utility>

#include "core/error.h"
#include "plot/plot_page.h"

namespace ladder::lessons {

namespace {

constexpr PLINT kPanelWidth = 700, kHeight = 800;  // pixels: the page is one such column per panel
// Fractions of the page: the left margin, the room each panel takes across (its last kGap a gap
// before the next), and the panels' bottom and top.
constexpr double kLeft = 0.06, kColumns = 0.98, kGap = 0.07, kBottom = 0.19, kTop = 0.88;

// The colour of each role: the plot kit's series colours 1, 0 and 2 (orange, blue, green).
PLINT role_colour(nn::BlockRole role) {
  switch (role) {
    case nn::BlockRole::global: return plot::page::series_colour(1);
    case nn::BlockRole::window: return plot::page::series_colour(0);
    case nn::BlockRole::random: return plot::page::series_colour(2);
  }
  return 1;  // not reached: every role is listed above
}

void fill_tile(double x0, double y0, double x1, double y1) {
  PLFLT xs[] = {x0, x1, x1, x0}, ys[] = {y0, y0, y1, y1};
  plfill(4, xs, ys);
}

// One pattern in the square viewport between x0 and x1 of the page. Tile (i, j) is centred on
// (j, i), so that the tick labels name blocks.
void draw_panel(const PatternPanel& panel, double x0, double x1) {
  const nn::BlockPattern& p = panel.pattern;
  const double low = -0.5, high = static_cast<double>(p.blocks) - 0.5;
  plvpas(x0, x1, kBottom, kTop, 1.0);
  plwind(low, high, high, low);  // query block 0 at the top
  for (int64_t i = 0; i < p.blocks; ++i)
    for (size_t c = 0; c < p.keys[i].size(); ++c) {
      plcol0(role_colour(p.roles[i][c]));
      const auto row = static_cast<double>(i), col = static_cast<double>(p.keys[i][c]);
      fill_tile(col - 0.5, row - 0.5, col + 0.5, row + 0.5);
    }
  plcol0(plot::page::kGridColour);  // light grey lines between the tiles
  for (int64_t b = 1; b < p.blocks; ++b) {
    const double edge = static_cast<double>(b) - 0.5;
    pljoin(edge, low, edge, high);
    pljoin(low, edge, high, edge);
  }
  plcol0(1);
  const double tick = p.blocks <= 16 ? 2 : p.blocks <= 64 ? 8 : 16;
  plbox("bcnt", tick, 0, "bcntv", tick, 0);
  plschr(0, plot::page::kTextScale);
  plmtex("t", 1.2, 0.5, 0.5, plot::page::escaped(panel.title).c_str());
  plmtex("b", 2.8, 0.5, 0.5, "key block");
  plmtex("l", 3.4, 0.5, 0.5, "query block");
}

// The page's title at the top and a legend of filled squares along the bottom.
void draw_title_and_legend(const std::string& title) {
  plvpor(0, 1, 0, 1);
  plwind(0, 1, 0, 1);
  plcol0(1);
  plschr(0, 1.3);
  plptex(0.5, 0.955, 1, 0, 0.5, plot::page::escaped(title).c_str());
  plschr(0, plot::page::kTextScale);
  const std::pair<const char*, PLINT> entries[] = {{"global", role_colour(nn::BlockRole::global)},
                                                   {"window", role_colour(nn::BlockRole::window)},
                                                   {"random", role_colour(nn::BlockRole::random)},
                                                   {"not computed", 0}};  // cmap0 colour 0: the page's white
  double x = 0.18;
  for (const auto& [name, colour] : entries) {
    plcol0(colour);
    fill_tile(x, 0.02, x + 0.018, 0.052);
    plcol0(1);
    PLFLT xs[] = {x, x + 0.018, x + 0.018, x, x}, ys[] = {0.02, 0.02, 0.052, 0.052, 0.02};
    plline(5, xs, ys);
    plptex(x + 0.026, 0.028, 1, 0, 0, name);
    x += 0.026 + 0.012 * static_cast<double>(std::string(name).size()) + 0.04;
  }
}

}  // namespace

std::vector<std::string> save_block_patterns(const std::string& stem, const std::string& title,
                                             const std::vector<PatternPanel>& panels) {
  if (panels.empty()) fail("save_block_patterns", stem, ": no patterns to draw");
  const double column = kColumns / static_cast<double>(panels.size());
  return plot::page::render_both(
      "save_block_patterns", stem,
      [&] {
        for (size_t k = 0; k < panels.size(); ++k) {
          const double x0 = kLeft + static_cast<double>(k) * column;
          draw_panel(panels[k], x0, x0 + column - kGap);
        }
        draw_title_and_legend(title);
      },
      kPanelWidth * static_cast<PLINT>(panels.size()), kHeight);
}

}  // namespace ladder::lessons
