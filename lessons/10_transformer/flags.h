// Lesson 10's own flags: the Transformer's shape, the learning-rate schedule of every run (parts 2,
// 5 and 6), part 5's post-LN / pre-LN runs and the encoder's attention kind, checked together with
// the task's steps before any work; then the model they make checked against the loaded tasks.
#pragma once

#include <cstdint>
#include <optional>

#include "data/translation_task.h"
#include "harness/attention_flags.h"
#include "harness/cli.h"
#include "harness/schedule_flags.h"
#include "lessons/translation/task_flags.h"
#include "models/transformer.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/vq_attention.h"

namespace ladder::lessons {

struct TransformerFlags {
  int64_t layers = 2, heads = 4, embed = 64, ff = 256;
  float dropout = 0;
  harness::ScheduleFlags schedule{.warmup = 60};  // the warmup of every run, parts 5 and 6 included
  bool pre_ln = false;
  int64_t norm_steps = 150;  // steps of each of part 5's four runs
  float norm_lr = 1e-2f;     // their peak learning rate
  harness::AttentionFlags attention{.defaults = {nn::BigBirdAttention::Settings{.block = 4, .random_blocks = 1},
                                                 nn::VQAttention::Settings{.block = 4}}};  // a date is a few blocks of 4
  nn::AttentionSettings encoder_attention;  // what the attention flags chose, after settle()

  // --layers, --heads (dividing --embed, a rule parse() checks), --embed, --ff, --dropout, the
  // schedule's flags, --pre-ln, --norm-steps, --norm-lr and the encoder's attention flags.
  void add_to(harness::LessonCli& cli);
  // After cli.parse(): refuses a warmup that leaves no step of --steps, --norm-steps or the number
  // task's --number-steps, reads the encoder's attention settings, lets --quick shorten every part
  // (the warmup with them), and refuses a warmup of 0 when part 5 would then run each model twice alike.
  void settle(harness::LessonCli& cli, TranslationFlags& task);
};

// Before the run: refuses a model `config` that is no Transformer, that the machine's memory
// cannot train in batches of `batch`, or whose encoder attention pattern does not fit the
// sources of `task` and of the number task.
void check_model_fits(const std::string& lesson, const models::TransformerConfig& config, int64_t batch,
                      const data::TranslationTask& task, const std::optional<data::TranslationTask>& numbers);

}  // namespace ladder::lessons
