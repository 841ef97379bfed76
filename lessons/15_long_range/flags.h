// Lesson 15's flags: the tasks' sizes, the model, the budget of parts 4 and 5, the attention kinds'
// settings, and what runs (--kinds, --circuit-kinds, --tasks). After parse, settle() shrinks them
// for --quick, completes the tasks' options and chooses what runs, refusing before any work what
// cannot run: a BigBird pattern that would cover a task whole, a circuit kind that cannot attend
// causally, a run too large for the memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/listops.h"
#include "data/mqar.h"
#include "harness/attention_flags.h"
#include "harness/cli.h"
#include "harness/part_flag.h"
#include "harness/schedule_flags.h"
#include "lessons/long_range/contenders.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/vq_attention.h"

namespace ladder::lessons {

// What the command line chose to run.
struct LongRangeChoice {
  std::vector<Contender> contenders;     // --kinds, in its order
  std::vector<Contender> circuit_kinds;  // --circuit-kinds, in its order
  std::vector<std::string> described;    // part 1: the tasks printed, of listops and recall
  std::vector<std::string> running;      // listops and recall (parts 2 and 3), capacity (part 4), circuit (part 5)
  bool describes(const std::string& task) const;
  bool runs(const std::string& task) const;
};

struct LongRangeFlags {
  data::ListOpsOptions listops{.max_len = 64, .train = 20000, .val = 200, .test = 1200};  // min_len: from --min-len
  int64_t min_len = 0;  // --min-len as given, kept so that the run records the flag, not what it implies
  data::MqarOptions recall{.pairs = 16, .queries = 16, .keys = 64, .values = 16, .length = 64, .one_hop = true,
                           .train = 5000, .val = 200, .test = 500};
  std::vector<int64_t> capacity_pairs{4, 16, 32, 64};
  int64_t capacity_steps = 300;
  data::MqarOptions two_tokens{.pairs = 8, .queries = 8, .keys = 32, .values = 16, .train = 20000, .val = 200, .test = 500};
  int64_t circuit_steps = 3000;
  std::string kinds = "all", tasks = "all", circuit_kinds = nn::FullAttention::kName;
  ModelSize size{64, 2};
  // BigBird's blocks of 8 positions with 2 random blocks, VQ's of 16 with 64 codes per head.
  harness::AttentionFlags attention{.defaults = {nn::BigBirdAttention::Settings{.block = 8, .random_blocks = 2},
                                                 nn::VQAttention::Settings{.block = 16, .codes = 64}}};
  harness::ScheduleFlags warmup{.warmup = 50};

  void add_to(harness::LessonCli& cli);
  // After cli.parse(): --quick's sizes, the tasks' options the flags imply (the same sizes and seed
  // for every task), and what runs; fails on what cannot run.
  LongRangeChoice settle(harness::LessonCli& cli, const harness::PartFlag& part);

  ModelSize one_hop() const { return {size.d_model, 1}; }  // recall, one token per pair: a single hop, one block
  // Part 4's recall at `pairs` pairs, one token each, each pair asked, at least as long as part 2's.
  data::MqarOptions capacity(int64_t pairs) const;

 private:
  void shrink_for_quick(harness::LessonCli& cli);
  void check(const harness::LessonCli& cli, const LongRangeChoice& choice) const;
};

}  // namespace ladder::lessons
