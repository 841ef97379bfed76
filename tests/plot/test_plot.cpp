// The plot kit: files that cannot be written, text that is not UTF-8, values a chart cannot draw,
// log axis labels, where a legend goes.
#include "helpers.h"
#include "file_helpers.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plot/plot.h"
#include "plot/plot_page.h"

using namespace ladder;
using namespace ladder::plot;
using ladder::testing::first_bytes;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() : path(fs::temp_directory_path() / ("ladder_plot_" + std::to_string(getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

LineChart small_chart() { return {"title", "step", "loss", {{"train", {1, 2, 3}, {3, 2, 1}}, {"validation", {1, 2, 3}, {3, 2.5, 2}}}}; }

}  // namespace

TEST_CASE("every plot writes a PNG and an SVG") {
  TempDir dir;
  LineChart chart = small_chart();
  chart.series.push_back({"diverged", {1, 2, 3}, {1, INFINITY, NAN}});
  chart.series.push_back({"data points", {1, 2, 3}, {2, 2.5, 1.5}, /*dots=*/true});
  chart.log_y = true;
  const std::vector<std::string> paths = save_line_chart((dir.path / "chart").string(), chart);
  REQUIRE(paths.size() == 2);
  CHECK(first_bytes(paths[0], 8) == "\x89PNG\r\n\x1a\n");
  CHECK(first_bytes(paths[1], 5) == "<?xml");
  const Heatmap map{"gates", "character", "unit", "value", {{0, 0.5}, {1, 0.25}}, {"0", "1"}, {"a", " "}};
  CHECK(fs::file_size(save_heatmap((dir.path / "map").string(), map)[0]) > 0);
  const Heatmap tiles{"two maps", "", "", "weight", tile({{{0, 1}, {1, 0}}, {{1, 1}, {0, 0}}}, 2)};  // frames without values
  CHECK(fs::file_size(save_heatmap((dir.path / "tiles").string(), tiles)[0]) > 0);
  LineChart lengths{"time against length", "n", "ms", {{"full", {256, 512, 1024}, {1, 4, 16}}, {"copy", {256, 512, 1024}, {1, 4, 16}}}};
  lengths.log2_x = true;  // and the copy lies on the first: marked
  CHECK(fs::file_size(save_line_chart((dir.path / "lengths").string(), lengths)[0]) > 0);
  DecisionRegions regions{"regions"};
  regions.x_min = regions.y_min = 0, regions.x_max = regions.y_max = 1;
  regions.grid = {{0, 1}, {1, 0}};
  regions.px = {0.25, 0.75}, regions.py = {0.25, 0.75}, regions.labels = {0, 1}, regions.class_names = {"zero", "one"};
  CHECK(fs::file_size(save_decision_regions((dir.path / "regions").string(), regions)[0]) > 0);
}

TEST_CASE("a plot whose file cannot be written throws, naming the file") {
  TempDir dir;
  // A folder where the PNG should go.
  fs::create_directories(dir.path / "loss.png");
  const std::string png = (dir.path / "loss.png").string();
  testing::check_error([&] { save_line_chart((dir.path / "loss").string(), small_chart()); },
                       {"save_line_chart", "cannot write " + png, "Is a directory", "--out"});
  CHECK_FALSE(fs::exists(dir.path / "loss.svg"));  // nothing written
  fs::create_directories(dir.path / "map.svg");
  testing::check_error([&] { save_heatmap((dir.path / "map").string(), {"t", "x", "y", "v", {{1, 2}}}); },
                       {"save_heatmap", "cannot write " + (dir.path / "map.svg").string(), "Is a directory"});
  // A folder that cannot exist: its parent is a file.
  std::ofstream(dir.path / "plain_file") << "x";
  testing::check_error([&] { save_decision_regions((dir.path / "plain_file" / "regions").string(), {"t", "x1", "x2", 0, 1, 0, 1, {{0}}}); },
                       {"save_decision_regions", "cannot write " + (dir.path / "plain_file" / "regions.png").string(),
                        "Not a directory"});
  // A folder that does not exist.
  testing::check_error([&] { save_line_chart((dir.path / "missing" / "loss").string(), small_chart()); },
                       {"cannot write " + (dir.path / "missing" / "loss.png").string(), "No such file or directory"});
}

TEST_CASE("a page the disk refuses throws, naming the file: PLplot's own writes would leave it empty and say nothing") {
  TempDir dir;
  fs::create_symlink("/dev/full", dir.path / "loss.png");  // every write: no space left on the device
  testing::check_error([&] { save_line_chart((dir.path / "loss").string(), small_chart()); },
                       {"save_line_chart", "cannot write " + (dir.path / "loss.png").string(), "No space left on device", "disk full"});
}

TEST_CASE("text that is not UTF-8 is drawn with its bytes written \\xNN: PLplot refused it, and the kit throws what PLplot refuses") {
  CHECK(page::escaped("run #3") == "run ##3");
  CHECK(page::escaped("bad\xff\xfeutf8 caf\xc3\xa9") == "bad\\xff\\xfeutf8 caf\xc3\xa9");  // well-formed UTF-8 stays
  TempDir dir;
  LineChart chart = small_chart();
  chart.title = "loss of runs/bad\xff";  // compare's titles and legends hold folder and column names
  chart.series[0].name = "bad\xff\xfeutf8";
  CHECK(first_bytes(save_line_chart((dir.path / "chart").string(), chart)[0], 4) == "\x89PNG");
}

TEST_CASE("text is as large on a page of any size as on the page where the kit measures it") {
  TempDir dir;
  // The current character height in pixels, as PLplot holds it while it draws a page of this size.
  auto char_pixels = [&](PLINT width, PLINT height) {
    double pixels = 0;
    page::render_both("test", (dir.path / "page").string(), [&] {
      PLFLT default_mm, current_mm, x0, x1, y0, y1;
      plgchr(&default_mm, &current_mm);
      plgspa(&x0, &x1, &y0, &y1);  // the page, in millimetres
      pixels = current_mm * width / (x1 - x0);
    }, width, height);
    return pixels;
  };
  const double reference = char_pixels(page::kWidth, page::kHeight);
  CHECK(reference > 5);
  // PLplot's own default grows with the page's mean side: a tall heatmap's labels outgrew the room measured for them.
  CHECK(char_pixels(1400, 1300) == doctest::Approx(reference).epsilon(0.01));
  CHECK(char_pixels(700, 500) == doctest::Approx(reference).epsilon(0.01));
}

TEST_CASE("a heatmap's colours span its values, symmetric around 0 when diverging, or the ends given") {
  Heatmap map{"t", "x", "y", "v", {{0.02, 0.03}, {0.025, NAN}}, {}, {}};
  CHECK(colour_scale(map) == std::pair{0.02, 0.03});
  map.diverging = true;
  CHECK(colour_scale(map) == std::pair{-0.03, 0.03});
  // Maps to be compared share a scale: the ends given win, whatever the values.
  map.scale_min = 0, map.scale_max = 1;
  CHECK(colour_scale(map) == std::pair{0.0, 1.0});
  map.scale_max = NAN;  // one end given, the other the values'
  CHECK(colour_scale(map) == std::pair{0.0, 0.03});
  // One value throughout: a scale one unit wide, so that the colour bar is not empty.
  CHECK(colour_scale({"t", "x", "y", "v", {{2, 2}}, {}, {}}) == std::pair{2.0, 3.0});
}

TEST_CASE("values a chart cannot draw come in runs, and the legend names them") {
  const Series s{"loss", {1, 2, 3, 4, 5, 6, 7}, {1, INFINITY, INFINITY, 2, NAN, 0, 0}};
  const std::vector<OffScale> on_log = off_scale(s, /*log_y=*/true);
  REQUIRE(on_log.size() == 3);
  CHECK(on_log[0].what == "infinite");
  CHECK(on_log[0].first == 2);
  CHECK(on_log[0].last == 3);
  CHECK_FALSE(on_log[0].to_the_end);
  CHECK(on_log[1].what == "NaN");
  CHECK(on_log[2].what == "0");
  CHECK(on_log[2].to_the_end);
  CHECK(off_scale_note(on_log, "step") == "infinite at step 2-3; NaN at step 5; 0 from step 6");
  // On a linear axis 0 is an ordinary value; minus infinity is not.
  const std::vector<OffScale> on_linear = off_scale({"x", {1, 2, 3}, {0, -INFINITY, -1}}, /*log_y=*/false);
  REQUIRE(on_linear.size() == 1);
  CHECK(off_scale_note(on_linear, "order") == "minus infinite at order 2");
  CHECK(off_scale({"x", {1, 2}, {-1, 5}}, true).front().what == "negative");
  CHECK(off_scale(small_chart().series[0], true).empty());
  // At most three runs are spelled out.
  const Series many{"x", {1, 2, 3, 4, 5, 6, 7, 8}, {NAN, 1, NAN, 1, NAN, 1, NAN, 1}};
  CHECK(off_scale_note(off_scale(many, false), "t") == "NaN at t 1; NaN at t 3; NaN at t 5; ...");
}

TEST_CASE("a log axis over many decades labels at most eight of them") {
  const std::vector<double> wide = log_axis_values(-5, 38);  // lesson 02 with --lr 1.2
  CHECK(wide.size() <= 8);
  CHECK(wide.size() >= 4);
  CHECK(wide.front() == doctest::Approx(1));  // every 10th power, from 1e0 up
  CHECK(wide[1] == doctest::Approx(1e10));
  const std::vector<double> few = log_axis_values(-2, 3);  // 0.01 .. 1000: every power
  CHECK(few == std::vector<double>{0.01, 0.1, 1, 10, 100, 1000});
  const std::vector<double> short_range = log_axis_values(std::log10(6.0), std::log10(22.0));  // round values
  CHECK(short_range.size() >= 4);
  for (const double v : short_range) CHECK(v == doctest::Approx(std::round(v)));
}

TEST_CASE("segment_meets_box: crossing, passing by, and single points") {
  const page::Box box{0.4, 0.6, 0.4, 0.6};
  CHECK(page::segment_meets_box({0, 0}, {1, 1}, box));        // through it, both ends outside
  CHECK(page::segment_meets_box({0.5, 0}, {0.5, 1}, box));    // straight down through it
  CHECK_FALSE(page::segment_meets_box({0, 0}, {1, 0.2}, box));  // below it
  CHECK_FALSE(page::segment_meets_box({0, 0.9}, {0.3, 1}, box));
  CHECK(page::segment_meets_box({0.5, 0.5}, {0.5, 0.5}, box));  // a point inside
  CHECK_FALSE(page::segment_meets_box({0.7, 0.5}, {0.7, 0.5}, box));
}

TEST_CASE("a legend takes a free corner, else the space beside the plot, else above it") {
  const page::Legend legend({{"train", 0}, {"validation", 1}});
  REQUIRE(legend.width() > 0);
  REQUIRE(legend.height() > 0);
  // A curve across the top right: the legend goes top left, and the plot keeps its size.
  const page::Placement top_left = page::place_legend(legend, {{{0.5, 0.95}, {1, 0.95}}});
  CHECK(top_left.legend_left < 0.5 * (page::kLeft + page::kRight));
  CHECK(top_left.legend_top == doctest::Approx(page::kTop - 0.015));
  CHECK(top_left.plot_right == page::kRight);
  CHECK(top_left.plot_top == page::kTop);
  // Ink everywhere: beside the plot, which narrows to make room, with the legend inside the page.
  std::vector<std::vector<page::Point>> everywhere;
  for (int i = 0; i <= 20; ++i) everywhere.push_back({{0, i / 20.0}, {1, i / 20.0}});
  const page::Placement beside = page::place_legend(legend, everywhere);
  CHECK(beside.plot_right < page::kRight);
  CHECK(beside.legend_left > beside.plot_right);
  CHECK(beside.legend_left + legend.width() <= 1.0);
  // A legend too wide to sit beside the plot: above it, in columns, the plot growing shorter.
  const page::Legend wide({{"linear regression (MSE) (infinite from step 121)", 0}, {"logistic regression (BCE)", 1},
                           {"softmax regression (CE)", 2}, {"XOR: one hidden layer", 3}});
  const page::Placement above = page::place_legend(wide, everywhere);
  CHECK(above.plot_right == page::kRight);
  CHECK(above.plot_top < page::kTop - wide.height(above.columns) + 1e-9);
  CHECK(above.legend_left >= 0);
  CHECK(above.legend_left + wide.width(above.columns) <= 1.0);
  CHECK(wide.height(2) < wide.height(1));
}
