// Lesson 13's drawing of block-sparse patterns (lessons/13_bigbird/block_pattern_plot.h): a square
// per pattern side by side, its refusals naming the file.
#include "helpers.h"
#include "file_helpers.h"

#include <unistd.h>

#include <filesystem>

#include "lessons/13_bigbird/block_pattern_plot.h"
#include "nn/attention/bigbird_pattern.h"

using namespace ladder;
using ladder::testing::first_bytes;

TEST_CASE("block patterns: a square per pattern side by side, on a page as wide as they need") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ladder_blocks_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const nn::BlockPattern both = nn::bigbird_pattern(64, {.block = 8, .random_blocks = 1});
  const nn::BlockPattern causal = nn::bigbird_pattern(64, {.block = 8, .random_blocks = 1, .causal = true});
  const auto png_size = [](const std::string& png) {  // width and height from the PNG's header (IHDR)
    const std::string bytes = first_bytes(png, 24);
    const auto number = [&](size_t at) {
      uint32_t v = 0;
      for (size_t i = at; i < at + 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[i]);
      return v;
    };
    return std::pair{number(16), number(20)};
  };
  const std::vector<std::string> one = lessons::save_block_patterns((dir / "one").string(), "one", {{both, "both"}});
  REQUIRE(one.size() == 2);
  CHECK(first_bytes(one[1], 5) == "<?xml");
  CHECK(png_size(one[0]) == std::pair<uint32_t, uint32_t>{700, 800});
  const std::vector<std::string> three =
      lessons::save_block_patterns((dir / "three").string(), "three", {{both, "both"}, {causal, "causal"}, {both, "again"}});
  CHECK(png_size(three[0]) == std::pair<uint32_t, uint32_t>{2100, 800});
  testing::check_error([&] { lessons::save_block_patterns((dir / "none").string(), "none", {}); },
                       {"save_block_patterns", "no patterns to draw"});
  std::filesystem::create_directories(dir / "taken.png");
  testing::check_error([&] { lessons::save_block_patterns((dir / "taken").string(), "t", {{both, "both"}}); },
                       {"save_block_patterns", "cannot write " + (dir / "taken.png").string()});
  std::filesystem::remove_all(dir);
}
