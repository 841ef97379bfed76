#include "lessons/10_transformer/flags.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "harness/memory_estimate.h"
#include "lessons/memory/model_memory.h"

namespace ladder::lessons {

void TransformerFlags::add_to(harness::LessonCli& cli) {
  cli.option("--layers", layers, "encoder layers, and as many decoder layers", {1, 8});
  cli.option("--heads", heads, "attention heads; must divide --embed", {1, 64});
  cli.option("--embed", embed, "d_model: the width of every position's vector", {2, 1024});
  cli.divides("--heads", heads, "--embed", embed, "each head takes --embed / --heads features; choose --heads dividing --embed");
  cli.option("--ff", ff, "hidden width of the position-wise feed-forward blocks", {1, 8192});
  cli.option("--dropout", dropout, "dropout on embeddings, attention weights and sublayer outputs", {0.0f, 0.9f});
  schedule.add_to(cli);
  cli.flag("--pre-ln", pre_ln, "train the main model pre-LN (norm_first) instead of post-LN");
  cli.option("--norm-steps", norm_steps, "part 5: steps of each post-LN / pre-LN run (0: skip part 5)", {0, 100000});
  cli.option("--norm-lr", norm_lr, "part 5: the peak learning rate of the four runs", {0.0f, 1.0f, /*above_min=*/true});
  harness::add_attention_options(cli, attention,
                                 "the encoder's self attention (the decoder's masked self attention, with its KV cache, and "
                                 "its cross attention stay full)",
                                 /*causal=*/false);
}

namespace {

// Every part warms up over --warmup steps, so each must run more steps than that. --quick cuts the
// default warmup to fit its short runs: only a --warmup the user gave is judged then.
void check_warmup(const TransformerFlags& flags, const harness::LessonCli& cli, int64_t number_steps) {
  if (cli.common.quick && !cli.given("--warmup")) return;
  flags.schedule.check(cli.lesson(), cli.common.steps);
  for (const auto& [part, steps] : {std::pair<const char*, int64_t>{"--norm-steps", flags.norm_steps}, {"--number-steps", number_steps}})
    if (steps > 0 && flags.schedule.warmup >= steps)
      fail(cli.lesson().c_str(), "--warmup ", flags.schedule.warmup, " must be fewer than ", part, " ", steps,
           " (that part warms up over the same steps); give a smaller --warmup or ", part, " 0");
}

}  // namespace

void TransformerFlags::settle(harness::LessonCli& cli, TranslationFlags& task) {
  check_warmup(*this, cli, task.number_steps);
  encoder_attention = harness::attention_settings(cli.lesson(), cli, attention, cli.common.seed);
  if (cli.common.quick) {  // the same parts, shorter; the warmup shrinks with the runs
    cli.common.steps = std::min<int64_t>(cli.common.steps, 40);
    norm_steps = std::min<int64_t>(norm_steps, 10);
    task.number_steps = std::min<int64_t>(task.number_steps, 40);
    schedule.warmup = std::min({schedule.warmup, cli.common.steps / 4, norm_steps / 4});
  }
  if (norm_steps > 0 && schedule.warmup == 0)
    fail(cli.lesson().c_str(), cli.common.quick ? "--quick's warmup, a quarter of --steps and of --norm-steps, is 0 here" : "--warmup 0",
         ": part 5's runs with and without warmup would be the same run; give --steps and --norm-steps of 4 or more, or --norm-steps 0");
}

void check_model_fits(const std::string& lesson, const models::TransformerConfig& config, int64_t batch,
                      const data::TranslationTask& task, const std::optional<data::TranslationTask>& numbers) {
  models::check_config(lesson.c_str(), config);
  harness::check_memory(lesson, transformer_memory(config, batch, task.source_width, task.longest_target + 1));
  harness::check_pattern_fits(lesson, config.encoder_attention, task.source_width, /*causal=*/false,
                              cat("the longest source (", task.source_width, " tokens)"));
  if (numbers)
    harness::check_pattern_fits(lesson, config.encoder_attention, numbers->source_width, /*causal=*/false,
                                cat("the longest number in words (", numbers->source_width, " tokens)"));
}

}  // namespace ladder::lessons
