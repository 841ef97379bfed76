#include "data/glyphs.h"

#include <array>

#include "core/error.h"

namespace ladder::data {

namespace {

constexpr int kFontW = 5, kFontH = 7;

// A 5x7 font for 0-9, one string per row, '#' for ink.
constexpr std::array<std::array<const char*, kFontH>, 10> kFont = {{
    {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},
    {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},
    {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},
    {"####.", "....#", "....#", ".###.", "....#", "....#", "####."},
    {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},
    {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},
    {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},
    {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},
    {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},
    {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},
}};

}  // namespace

Images glyph_images(int64_t n, const GlyphOptions& o, Generator& gen) {
  const int64_t w = kFontW * o.scale, h = kFontH * o.scale;
  if (o.min_x < 0 || o.min_y < 0 || o.min_x > o.max_x || o.min_y > o.max_y || o.max_x + w > o.canvas ||
      o.max_y + h > o.canvas)
    fail("glyph_images", "positions x in [", o.min_x, ", ", o.max_x, "], y in [", o.min_y, ", ", o.max_y, "] put a ", w, "x",
         h, " digit off the ", o.canvas, "x", o.canvas, " canvas");
  Images images{zeros({n, 1, o.canvas, o.canvas}), empty({n})};
  for (int64_t i = 0; i < n; ++i) {
    const auto digit = static_cast<size_t>(gen.randint(0, 10));
    const int64_t left = gen.randint(o.min_x, o.max_x + 1), top = gen.randint(o.min_y, o.max_y + 1);
    const float ink = gen.uniform(0.7f, 1.0f);  // some digits are written fainter than others
    float* image = images.x.data() + i * o.canvas * o.canvas;
    for (int64_t r = 0; r < h; ++r)
      for (int64_t c = 0; c < w; ++c)
        if (kFont[digit][static_cast<size_t>(r / o.scale)][c / o.scale] == '#') image[(top + r) * o.canvas + left + c] = ink;
    for (int64_t p = 0; p < o.canvas * o.canvas; ++p) image[p] += o.noise * gen.normal();
    images.y.data()[i] = static_cast<float>(digit);
  }
  return images;
}

}  // namespace ladder::data
