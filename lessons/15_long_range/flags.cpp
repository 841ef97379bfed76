#include "lessons/15_long_range/flags.h"

#include <algorithm>

#include "core/error.h"
#include "lessons/memory/model_memory.h"
#include "nn/attention/attention_registry.h"

namespace ladder::lessons {

bool LongRangeChoice::describes(const std::string& task) const {
  return std::find(described.begin(), described.end(), task) != described.end();
}

bool LongRangeChoice::runs(const std::string& task) const {
  return std::find(running.begin(), running.end(), task) != running.end();
}

void LongRangeFlags::add_to(harness::LessonCli& cli) {
  cli.option("--kinds", kinds,
             "which to train, separated by commas, or all: " + nn::joined_names(names_of(all_contenders(cli, attention, 0)))
                 + " (linear_* is linear attention with that feature map; a kind that attends causally only runs "
                   "causal; lstm has no attention and runs ListOps only)");
  cli.option("--tasks", tasks, "which to run, separated by commas, or all: listops, recall, capacity, circuit");
  cli.option("--max-len", listops.max_len, "ListOps: the longest expression in tokens (the LRA: 2000)", {4, 1 << 15});
  cli.option("--min-len", min_len, "ListOps: the shortest expression in tokens; 0: a quarter of --max-len",
             {0, 1 << 15});
  cli.at_most("--min-len", min_len, "--max-len", listops.max_len,
              "the shortest expression cannot be longer than the longest; give a smaller --min-len");
  cli.option("--max-depth", listops.max_depth,
             "ListOps: levels of the tree, the digits' counted (operators nest one fewer deep; the LRA: 10)", {2, 64});
  cli.option("--max-args", listops.max_args, "ListOps: arguments per operator at most", {2, 64});
  cli.option("--pairs", recall.pairs, "recall: key-value pairs per sequence", {1, 1 << 14});
  cli.option("--queries", recall.queries, "recall: keys asked per sequence (at most --pairs)", {1, 1 << 14});
  cli.option("--recall-len", recall.length, "recall: tokens per sequence; 0: just enough for pairs and queries",
             {0, 1 << 15});
  cli.option("--keys", recall.keys, "recall: distinct keys", {2, 1 << 14});
  cli.option("--values", recall.values, "recall: distinct values (the classes)", {2, 1 << 14});
  cli.option("--capacity-pairs", capacity_pairs, "part 4: the counts of pairs, separated by commas", harness::positive);
  cli.option("--capacity-steps", capacity_steps, "part 4: training steps of each model", harness::positive);
  cli.option("--circuit-kinds", circuit_kinds, "part 5: the kinds that learn two tokens per pair (as --kinds)");
  cli.option("--circuit-pairs", two_tokens.pairs, "part 5: key-value pairs per sequence, each asked", {1, 1 << 14});
  cli.option("--circuit-steps", circuit_steps, "part 5: training steps", harness::positive);
  cli.option("--train", listops.train, "examples in each task's training set", {1, 1 << 20});
  cli.option("--val", listops.val, "examples in each task's validation set (the loss curves)", {1, 1 << 20});
  cli.option("--test", listops.test, "examples in each task's test set", {1, 1 << 20});
  cli.option("--d-model", size.d_model, "width of every model (4 heads)", {.min = 4, .max = 1024, .multiple_of = 4});
  cli.option("--layers", size.layers, "encoder blocks (recall with one token per pair: one, a single hop)", {1, 16});
  warmup.add_to(cli);
  harness::add_every_kind_options(cli, attention);
}

LongRangeChoice LongRangeFlags::settle(harness::LessonCli& cli, const harness::PartFlag& part) {
  if (cli.common.quick) shrink_for_quick(cli);
  if (!cli.given("--warmup")) warmup.warmup = std::min(warmup.warmup, cli.common.steps / 10);
  const std::vector<Contender> every = all_contenders(cli, attention, cli.common.seed);
  const auto chosen_contenders = [&](const std::string& flag, const std::string& given) {
    std::vector<Contender> list;  // those the flag names, in its order
    for (const std::string& name : harness::chosen_names(cli.lesson(), flag, given, names_of(every), "kind"))
      list.push_back(*std::find_if(every.begin(), every.end(), [&](const Contender& c) { return c.name == name; }));
    return list;
  };
  LongRangeChoice choice{.contenders = chosen_contenders("--kinds", kinds),
                         .circuit_kinds = chosen_contenders("--circuit-kinds", circuit_kinds)};
  const std::vector<std::string> asked =
      harness::chosen_names(cli.lesson(), "--tasks", tasks, {"listops", "recall", "capacity", "circuit"}, "task");
  if (cli.given("--part") && cli.given("--tasks"))
    fail(cli.lesson().c_str(), "--part and --tasks both choose what runs; give one of them");
  for (const std::string& task : asked) {
    const bool trained = task == "listops" || task == "recall";  // by part 2, tabled by part 3
    if (part.runs(task == "capacity" ? 4 : task == "circuit" ? 5 : 2) || (trained && part.runs(3)))
      choice.running.push_back(task);
    if (trained && part.runs(1)) choice.described.push_back(task);
  }
  listops.min_len = min_len > 0 ? min_len : std::max<int64_t>(4, listops.max_len / 4);
  listops.seed = recall.seed = two_tokens.seed = cli.common.seed;
  recall.train = listops.train, recall.val = listops.val, recall.test = listops.test;
  two_tokens.queries = two_tokens.pairs, two_tokens.test = listops.test;
  check(cli, choice);
  return choice;
}

data::MqarOptions LongRangeFlags::capacity(int64_t pairs) const {
  data::MqarOptions o = recall;
  const int64_t most = *std::max_element(capacity_pairs.begin(), capacity_pairs.end());
  o.pairs = o.queries = pairs, o.keys = std::max(o.keys, most), o.length = std::max(3 * pairs, recall.tokens());
  return o;
}

// --quick: everything tiny but what the command line sets.
void LongRangeFlags::shrink_for_quick(harness::LessonCli& cli) {
  const auto tiny = [&](const char* flag, int64_t& value, int64_t small) { value = cli.given(flag) ? value : small; };
  tiny("--max-len", listops.max_len, 64), tiny("--pairs", recall.pairs, 4), tiny("--queries", recall.queries, 4);
  tiny("--keys", recall.keys, 8), tiny("--values", recall.values, 4), tiny("--recall-len", recall.length, 64);
  tiny("--train", listops.train, 300), tiny("--val", listops.val, 50), tiny("--test", listops.test, 100);
  tiny("--d-model", size.d_model, 16), tiny("--capacity-steps", capacity_steps, 20);
  tiny("--circuit-pairs", two_tokens.pairs, 4), tiny("--circuit-steps", circuit_steps, 20);
  if (!cli.given("--capacity-pairs")) capacity_pairs = {2, 4};
  attention.defaults = {nn::BigBirdAttention::Settings{.block = 8, .random_blocks = 2},
                        nn::VQAttention::Settings{.block = 8, .codes = 16}};
  tiny("--steps", cli.common.steps, 40), tiny("--batch", cli.common.batch, 16), tiny("--warmup", warmup.warmup, 5);
  if (!cli.given("--lr")) cli.common.lr = 3e-3f;  // tiny models take a larger step
}

namespace {

// ListOps and recall, each contender in turn (the one scoring the most keys counts).
harness::MemoryEstimate long_range_memory(const data::ListOpsOptions& listops, const data::MqarOptions& recall, int64_t batch,
                                          ModelSize size, const std::vector<Contender>& contenders) {
  const int64_t length = std::max(listops.max_len, recall.tokens());
  int64_t keys = 0;
  for (const Contender& c : contenders) keys = std::max(keys, c.attention ? keys_per_query(*c.attention, length) : 0);
  return encoder_memory({listops.train + listops.val + listops.test, length, batch, size.d_model, size.layers, 4, keys},
                        cat("--max-len ", listops.max_len, ", --train ", listops.train),
                        cat("--max-len ", listops.max_len, ", --d-model ", size.d_model, ", --layers ", size.layers));
}

}  // namespace

// What the declared ranges and rules cannot see: the kinds' settings against the tasks' lengths,
// the tasks' own limits, and the memory.
void LongRangeFlags::check(const harness::LessonCli& cli, const LongRangeChoice& choice) const {
  const std::string& lesson = cli.lesson();
  warmup.check(lesson, cli.common.steps);
  for (const Contender& c : choice.contenders) {  // BigBird over a sequence it would cover whole is refused
    if (!c.attention) continue;
    harness::check_pattern_fits(lesson, *c.attention, listops.max_len, false, cat("--max-len ", listops.max_len), "--kinds");
    harness::check_pattern_fits(lesson, *c.attention, recall.tokens(), false, cat("--recall-len ", recall.tokens()), "--kinds");
    for (const int64_t pairs : capacity_pairs)
      harness::check_pattern_fits(lesson, *c.attention, capacity(pairs).length, false, cat("--capacity-pairs ", pairs), "--kinds");
  }
  for (const Contender& c : choice.circuit_kinds)
    if (!c.attention || nn::registered_kind(c.attention->kind).directions == nn::Directions::bidirectional_only)
      fail(lesson.c_str(), "--circuit-kinds ", c.name, " cannot attend causally; part 5 reads left to right");
  listops.check(), recall.check(), two_tokens.check();
  harness::check_memory(lesson, long_range_memory(listops, recall, cli.common.batch, size, choice.contenders));
}

}  // namespace ladder::lessons
