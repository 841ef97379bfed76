#include "lessons/13_bigbird/flags.h"

#include <algorithm>

#include "core/error.h"
#include "lessons/13_bigbird/pattern_variants.h"
#include "lessons/memory/model_memory.h"
#include "nn/attention/attention_registry.h"

namespace ladder::lessons {

namespace {

constexpr int64_t kMaxDrawnBlocks = 128;  // more blocks than this make tiles too small to see

}  // namespace

void BigBirdFlags::add_to(harness::LessonCli& cli) {
  cli.option("--length", length, "part 1: sequence length of the drawn pattern", {2, 1 << 16});
  cli.option("--attention-block", block, "parts 1, 2 and 4: positions per block b", {1, 4096});
  cli.divides("--attention-block", block, "--length", length,
              "the picture draws whole blocks; give a --length that is a multiple of --attention-block");
  cli.option("--random-blocks", random, "parts 1 and 4: random blocks r per query block", {0, 64});
  cli.option("--task-length", task.length, "parts 2 and 4: tokens per sequence of the retrieval task", {6, 1 << 16});
  cli.option("--distance", task.min_distance, "parts 2 and 4: the asked key at least this many positions back", {3, 1 << 16});
  cli.at_most("--distance", task.min_distance, "--task-length", task.length,
              "the asked key sits that far before the question's key at the end; give a smaller --distance or a "
              "longer --task-length", /*strictly=*/true);
  cli.option("--keys", task.keys, "parts 2 and 4: distinct keys", {2, 26});
  cli.option("--values", task.values, "parts 2 and 4: distinct values (the classes)", {2, 10});
  cli.option("--distractors", task.distractors, "parts 2 and 4: other key/value pairs per sequence", {0, 1 << 15});
  cli.option("--examples", examples, "part 2: sequences printed", {0, 20});
  cli.option("--max-n", max_n, "part 3: the longest sequence timed (from 256, doubling)", {256, 1 << 15});
  cli.option("--width", width, "part 4: the classifier's model width (a multiple of --heads)", {4, 1024});
  cli.option("--layers", layers, "part 4: encoder layers", {1, 12});
  cli.option("--heads", heads, "part 4: attention heads per layer", {1, 16});
  cli.divides("--heads", heads, "--width", width,
              "each head takes --width / --heads features; give a --width that is a multiple of --heads");
  cli.option("--patterns", patterns_given, "part 4: the patterns trained, separated by commas, or all: " +
             nn::joined_names(pattern_variant_names()) + " (_mid: padding after the question, off the global blocks)");
  cli.option("--train-size", task.train, "part 4: training sequences (each step draws --batch of them)", {1, 1 << 20});
  cli.option("--test-size", task.test, "part 4: test sequences", {10, 1 << 20});
  schedule.add_to(cli, "part 4: ");
}

void BigBirdFlags::settle(harness::LessonCli& cli) {
  if (!cli.given("--warmup")) schedule.warmup = std::min(schedule.warmup, cli.common.steps / 10);
  if (cli.common.quick) shrink_for_quick(cli);
  patterns = harness::chosen_names(cli.lesson(), "--patterns", patterns_given, pattern_variant_names(), "pattern");
  check(cli);
  task.seed = cli.common.seed;
}

// --quick: everything small but what the command line sets.
void BigBirdFlags::shrink_for_quick(harness::LessonCli& cli) {
  const auto small = [&](const char* flag, int64_t& value, int64_t tiny) { value = cli.given(flag) ? value : tiny; };
  small("--max-n", max_n, 512), small("--examples", examples, 1), sample = 100;
  small("--steps", cli.common.steps, 4), small("--warmup", schedule.warmup, 1);
  small("--train-size", task.train, 64), task.val = 32, small("--test-size", task.test, 64);
  small("--layers", layers, 1);
}

// What the declared ranges and rules cannot see: BigBird's pattern against the lengths, the
// picture's size, the task's own limits, the schedule against the steps, and the memory.
void BigBirdFlags::check(const harness::LessonCli& cli) const {
  const char* lesson = cli.lesson().c_str();
  // With m <= r + 4 blocks every query block lists them all (2 global + 3 window + r random): full attention.
  const auto too_short = [&](const std::string& flag, const std::string& blocks_text, int64_t blocks, const char* what) {
    if (blocks >= random + 5) return;
    fail(lesson, blocks_text, " = ", blocks, " blocks is too short for ", what, ": with up to 2 global + "
         "3 window + ", random, " random blocks listed, every query block would see every key block (full attention, "
         "only slower); give at least ", random + 5, " blocks: ", flag, " ", (random + 5) * block,
         " or more, or a smaller --attention-block or --random-blocks");
  };
  const int64_t blocks = length / block;
  too_short("--length", cat("--length ", length, " / --attention-block ", block), blocks, "the pattern");
  if (blocks > kMaxDrawnBlocks)
    fail(lesson, "--length ", length, " / --attention-block ", block, " = ", blocks, " blocks, more than ", kMaxDrawnBlocks,
         " would make tiles too small to see; give a larger --attention-block or a shorter --length");
  task.check();
  // The last block is padded when b does not divide n.
  too_short("--task-length", cat("--task-length ", task.length, " in blocks of --attention-block ", block),
            (task.length + block - 1) / block, "part 4's patterns");
  schedule.check(lesson, cli.common.steps);
  harness::check_memory(lesson, retrieval_memory(task, cli.common.batch, width, layers, heads));
}

}  // namespace ladder::lessons
