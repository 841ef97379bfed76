#include "plot/plot_page.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "data/visible_text.h"
#include "plot/plplot_errors.h"

namespace ladder::plot::page {

namespace {

constexpr PLINT kFirstSeriesColour = 3;  // cmap0: 0 background, 1 text and axes, kGridColour (2) grid lines
constexpr double kLegendScale = 1.0;  // legend text, times PLplot's default size
constexpr double kInset = 0.015;      // between a legend and the plot's edge, or the page's
// A legend's layout, in character heights: the padding inside its box, the line sample, the gap
// before the name, the gap between columns, and the height of a row.
constexpr double kPad = 0.7, kSample = 3.5, kGap = 0.8, kColumnGap = 1.5, kRow = 1.8;

// Starts a page of width x height pixels with a PLplot device ("pngcairo" or "svgcairo"), into the
// file or stream set before: white background, dark text, light grid lines, then the series'
// colours. Text and ticks are as large as on a kWidth x kHeight page, where `measure` measures
// them (PLplot scales its default sizes with the page's mean side).
void start_page(const char* device, PLINT width, PLINT height) {
  throw_plplot_errors();
  require_device(device);
  plsdev(device);
  plspage(0, 0, width, height, 0, 0);
  plscolbg(255, 255, 255);
  plscmap0n(kFirstSeriesColour + static_cast<PLINT>(kPalette.size()));
  plscol0(0, 255, 255, 255);
  plscol0(1, 30, 30, 30);
  plscol0(kGridColour, 220, 220, 220);
  for (size_t i = 0; i < kPalette.size(); ++i)
    plscol0(kFirstSeriesColour + static_cast<PLINT>(i), kPalette[i][0], kPalette[i][1], kPalette[i][2]);
  plinit();
  const double to_reference = static_cast<double>(kWidth + kHeight) / (width + height);
  PLFLT default_height, height_now;
  plgchr(&default_height, &height_now);
  plschr(default_height * to_reference, kTextScale);
  plsmaj(0, to_reference);
  plsmin(0, to_reference);
  pladv(0);
}

// One page drawn by `draw`, as `device` writes it: into memory, because PLplot writes a file
// without checking (a full disk would leave it short or empty, and say nothing).
std::string drawn_page(const char* device, const std::function<void()>& draw, PLINT width, PLINT height) {
  char* bytes = nullptr;
  size_t size = 0;
  std::FILE* memory = open_memstream(&bytes, &size);
  if (!memory) fail("plot", "no memory for a page of ", width, " x ", height, " pixels");
  plsfile(memory);
  start_page(device, width, height);
  draw();
  plend();  // closes `memory`: bytes and size hold the page
  std::string page(bytes, size);
  std::free(bytes);
  return page;
}

// Writes `page` to `file`, checked up to its close (the last bytes reach the disk there): a write
// the disk refuses fails naming the file, and leaves no page cut short behind.
void write_page(const char* op, const std::string& file, const std::string& page) {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) fail(op, "cannot write ", file, ": ", std::strerror(errno), " (remove what is in the way, or choose another --out folder)");
  bool whole = std::fwrite(page.data(), 1, page.size(), f) == page.size() && std::fflush(f) == 0;
  int error = errno;
  if (std::fclose(f) != 0 && whole) whole = false, error = errno;
  if (!whole) {
    std::remove(file.c_str());
    fail(op, "cannot write ", file, ": ", std::strerror(error), " (is the disk full?)");
  }
}

// The width and height of a one-line legend holding `text` and nothing else (PLplot's string
// length function is not public; pllegend measures its text with it and reports its size).
std::pair<double, double> bare_legend_size(const std::string& text, double scale) {
  const PLINT opts[] = {PL_LEGEND_NONE}, colours[] = {1};
  const char* texts[] = {text.c_str()};
  PLFLT width, height;
  plschr(0, scale);
  pllegend(&width, &height, 0, PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE | PL_POSITION_SUBPAGE, 0, 0, 0, 0, 0, 0,
           1, 1, 1, opts, 0, scale, 1.0, 0, colours, texts, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
           nullptr, nullptr, nullptr, nullptr);
  return {width, height};
}

// The spacing of x ticks: 1, 2, 2.5 or 5 times a power of ten, with a label for every
// `pixels_per_label` of plot at most (PLplot's own choice ignores the plot's width, and crowds a
// narrow one).
double x_tick_spacing(double pixels_per_label) {
  PLFLT vx0, vx1, vy0, vy1, wx0, wx1, wy0, wy1;
  plgvpd(&vx0, &vx1, &vy0, &vy1);
  plgvpw(&wx0, &wx1, &wy0, &wy1);
  const double labels = std::max(2.0, (vx1 - vx0) * page::kWidth / pixels_per_label), range = std::fabs(wx1 - wx0);
  const double power = std::pow(10.0, std::floor(std::log10(range / labels)));
  for (const double m : {1.0, 2.0, 2.5, 5.0})
    if (range / (m * power) <= labels) return m * power;
  return 10 * power;
}

}  // namespace

PLINT series_colour(size_t k) { return kFirstSeriesColour + static_cast<PLINT>(k % kPalette.size()); }

const char* overlap_marker(size_t k) {
  static const char* const shapes[] = {"○", "□", "△", "◇", "▽"};
  return shapes[k % 5];
}

size_t dash_pattern(size_t k) {
  // One pattern further on for each round of the ten colours, so that no two of the first 50
  // series share both colour and dashes.
  return k == 0 ? 0 : 1 + (k - 1 + k / kPalette.size()) % 5;
}

void set_dashes(size_t k) {
  // Marks and spaces in micrometres (a millimetre is 2.8 pixels here) of patterns 1 to 5: dashes,
  // dots, dash-dot, long dashes, dash-dot-dot.
  static const std::vector<std::vector<PLINT>> marks = {{5000}, {1200}, {5000, 1200}, {9000}, {5000, 1200, 1200}};
  static const std::vector<std::vector<PLINT>> spaces = {{2500}, {1800}, {1800, 1800}, {2500}, {1800, 1800, 1800}};
  const size_t p = dash_pattern(k);
  if (p == 0) {
    plstyl(0, nullptr, nullptr);
    return;
  }
  plstyl(static_cast<PLINT>(marks[p - 1].size()), marks[p - 1].data(), spaces[p - 1].data());
}

std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : data::valid_utf8(text)) out += c == '#' ? std::string("##") : std::string(1, c);
  return out;
}

std::vector<std::string> render_both(const char* op, const std::string& stem, const std::function<void()>& draw, PLINT width,
                                     PLINT height) {
  const std::string png = stem + ".png", svg = stem + ".svg";
  for (const auto& [file, device] : {std::pair{png, "pngcairo"}, std::pair{svg, "svgcairo"}}) {
    const Drawing drawing(op, file);
    write_page(op, file, drawn_page(device, draw, width, height));
  }
  return {png, svg};
}

TextSizes measure(const std::vector<std::string>& texts, double scale) {
  PLINT previous, scratch;
  plgstrm(&previous);
  plmkstrm(&scratch);
  plsfnam("/dev/null");
  start_page("pngcairo", kWidth, kHeight);  // the same fonts as the real pages
  plvpor(0, 1, 0, 1);  // pllegend puts the viewport back as it found it: give it one
  plwind(0, 1, 0, 1);
  const auto [empty_width, height] = bare_legend_size("", scale);  // fractions of the page
  TextSizes sizes{{}, height * kHeight};
  for (const std::string& text : texts) sizes.widths.push_back((bare_legend_size(escaped(text), scale).first - empty_width) * kWidth);
  plend1();
  plsstrm(previous);
  return sizes;
}

double line_height(double scale) {
  static const double at_default_size = measure({}, 1.0).height;
  return at_default_size * scale;
}

Legend::Legend(std::vector<LegendEntry> entries) : entries_(std::move(entries)) {
  std::vector<std::string> names;
  for (const LegendEntry& e : entries_) names.push_back(e.name);
  const TextSizes text = measure(names, kLegendScale);
  line_ = text.height / kHeight;
  const double widest = text.widths.empty() ? 0 : *std::max_element(text.widths.begin(), text.widths.end());
  entry_width_ = (kSample + kGap) * char_width() + widest / kWidth;
}

double Legend::char_width() const { return line_ * kHeight / kWidth; }

double Legend::width(size_t columns) const {
  if (entries_.empty()) return 0;
  return 2 * kPad * char_width() + static_cast<double>(columns) * entry_width_ + static_cast<double>(columns - 1) * kColumnGap * char_width();
}

double Legend::height(size_t columns) const {
  if (entries_.empty()) return 0;
  const size_t rows = (entries_.size() + columns - 1) / columns;
  return (static_cast<double>(rows) * kRow + 1) * line_;  // half a line above and below the rows
}

void Legend::draw(double left, double top, size_t columns) const {
  PLFLT vx0, vx1, vy0, vy1, wx0, wx1, wy0, wy1;
  plgvpd(&vx0, &vx1, &vy0, &vy1);
  plgvpw(&wx0, &wx1, &wy0, &wy1);
  plvpor(0, 1, 0, 1);  // world coordinates = fractions of the page
  plwind(0, 1, 0, 1);
  const double right = left + width(columns), bottom = top - height(columns);
  const PLFLT xs[] = {left, right, right, left, left}, ys[] = {top, top, bottom, bottom, top};
  plcol0(0);
  plfill(4, xs, ys);
  plcol0(1);
  plwidth(1);
  plline(5, xs, ys);
  for (size_t i = 0; i < entries_.size(); ++i) {
    const LegendEntry& e = entries_[i];
    const double sample_left = left + kPad * char_width() + static_cast<double>(i % columns) * (entry_width_ + kColumnGap * char_width());
    const double sample_right = sample_left + kSample * char_width();
    const PLFLT y = top - (0.5 + (static_cast<double>(i / columns) + 0.5) * kRow) * line_;  // the row's middle
    plcol0(series_colour(e.series));
    if (e.dot) {
      const PLFLT x = (sample_left + sample_right) / 2;
      plschr(0, 1.2);
      plstring(1, &x, &y, "●");
    } else {
      const PLFLT lx[] = {sample_left, sample_right}, ly[] = {y, y};
      plwidth(kLineWidth);
      set_dashes(e.series);
      plline(2, lx, ly);
      set_dashes(0);
      plwidth(1);
      if (!e.marker.empty()) {
        const PLFLT x = (sample_left + sample_right) / 2;
        plschr(0, 1.0);
        plstring(1, &x, &y, e.marker.c_str());
      }
    }
    plschr(0, kLegendScale);
    plptex(sample_right + kGap * char_width(), y, 1, 0, 0, escaped(e.name).c_str());
  }
  plschr(0, kTextScale);
  plvpor(vx0, vx1, vy0, vy1);
  plwind(wx0, wx1, wy0, wy1);
}

bool segment_meets_box(Point a, Point b, const Box& box) {
  // Liang-Barsky: the part of a + t (b - a), t in [0, 1], inside each of the four edges.
  double t0 = 0, t1 = 1;
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double p[] = {-dx, dx, -dy, dy}, q[] = {a.x - box.x0, box.x1 - a.x, a.y - box.y0, box.y1 - a.y};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;  // parallel to this edge and outside it
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
  }
  return t0 <= t1;
}

Placement place_legend(const Legend& legend, const std::vector<std::vector<Point>>& ink) {
  const double plot_width = kRight - kLeft, plot_height = kTop - kBottom;
  const double w = legend.width() / plot_width, h = legend.height() / plot_height;  // in fractions of the plot
  const double ix = kInset / plot_width, iy = kInset / plot_height, clearance = 0.01;
  size_t best_covered = std::numeric_limits<size_t>::max();
  Placement best;
  const std::pair<bool, bool> corners[] = {{true, true}, {false, true}, {true, false}, {false, false}};  // (right?, top?)
  for (const auto& [right, top] : corners) {
    const double x0 = right ? 1 - ix - w : ix, y0 = top ? 1 - iy - h : iy;
    const Box box{x0 - clearance, x0 + w + clearance, y0 - clearance, y0 + h + clearance};
    size_t covered = 0;
    for (const std::vector<Point>& path : ink)
      for (size_t i = 0; i < path.size(); ++i) covered += segment_meets_box(path[i], path[i + 1 < path.size() ? i + 1 : i], box);
    Placement here;
    here.legend_left = kLeft + x0 * plot_width, here.legend_top = kBottom + (y0 + h) * plot_height;
    if (covered == 0) return here;
    if (covered < best_covered) best_covered = covered, best = here;
  }
  Placement beside;
  beside.plot_right = 1 - legend.width() - 2 * kInset;
  beside.legend_left = beside.plot_right + kInset, beside.legend_top = (kTop + kBottom + legend.height()) / 2;
  if (beside.plot_right - kLeft >= 0.45) return beside;
  Placement above;
  while (above.columns < legend.size() && legend.width(above.columns + 1) <= 1 - 2 * kInset) ++above.columns;
  above.plot_top = kTop - legend.height(above.columns) - kInset;
  above.legend_left = (1 - legend.width(above.columns)) / 2, above.legend_top = kTop;
  if (above.plot_top - kBottom >= 0.5) return above;
  return best;
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

std::string doubling_label(double doublings) {
  double value = std::exp2(doublings);
  const char* unit = "";
  for (const char* bigger : {"k", "M", "G"})
    if (value >= 1024) value /= 1024, unit = bigger;
  char text[32];
  std::snprintf(text, sizeof text, "%.4g%s", value, unit);
  return text;
}

// Ticks of a doubling x axis: its values; of the y axis: plain numbers.
void doubling_tick_label(PLINT axis, PLFLT value, char* label, PLINT length, PLPointer data) {
  if (axis != PL_X_AXIS) return plain_tick_label(axis, value, label, length, data);
  std::snprintf(label, static_cast<size_t>(length), "%s", doubling_label(value).c_str());
}

// The title goes at the top of the page's plot area (kTop), above a legend that may sit between
// it and a plot that reaches up to `plot_top`. x_tick 0: chosen by x_tick_spacing.
void axes_and_title(const std::string& title, const std::string& x_label, const std::string& y_label, const char* y_options,
                    double plot_top, double x_tick, bool doubling_x) {
  const PLINT x_minor = x_tick > 0 || doubling_x ? 1 : 0;  // a given spacing (whole-number x) has no minor ticks
  if (x_tick == 0) x_tick = x_tick_spacing(doubling_x ? 55 : 80);
  if (doubling_x) x_tick = std::max(1.0, std::ceil(x_tick));  // whole doublings
  const bool log_y = std::string(y_options) == "bc";  // log_y_labels draws that axis's grid itself
  plcol0(kGridColour);
  plbox("g", x_tick, 0, log_y ? "" : "g", 0, 0);  // grid lines first, under the data
  plcol0(1);
  plslabelfunc(doubling_x ? doubling_tick_label : plain_tick_label, nullptr);
  plbox("bcnsto", x_tick, x_minor, (std::string(y_options) + "o").c_str(), 0, 0);
  draw_title(title, 1.5 + (page::kTop - plot_top) * page::kHeight / page::line_height(1.3), page::kWidth);
  plschr(0, page::kTextScale);
  plmtex("b", 3.0, 0.5, 0.5, page::escaped(x_label).c_str());
  plmtex("l", 5.2, 0.5, 0.5, page::escaped(y_label).c_str());
}

// Points in plot coordinates as fractions of the plot area (0..1 across and up).
std::vector<Point> as_fractions(const std::vector<Point>& points, double x_min, double x_max, double y_min, double y_max) {
  std::vector<Point> out;
  for (const Point& p : points) out.push_back({(p.x - x_min) / (x_max - x_min), (p.y - y_min) / (y_max - y_min)});
  return out;
}

}  // namespace ladder::plot::page
