#include "lessons/attention_kinds/gpt_comparison.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace ladder::lessons {

models::GPTConfig compared_gpt() { return {.block_size = 64, .n_layer = 2, .n_head = 4, .n_embd = 64, .dropout = 0}; }

GPTTraining compared_gpt_training() { return {.schedule = {.warmup = 50}, .eval_every = 50}; }

void add_gpt_shape_options(harness::LessonCli& cli, models::GPTConfig& config, const std::string& part) {
  cli.option("--layers", config.n_layer, part + "Transformer blocks of each GPT", {1, 12});
  cli.option("--heads", config.n_head, part + "attention heads per block, dividing --embd", {1, 16});
  cli.option("--embd", config.n_embd, part + "width of each GPT's residual stream", {1, 1024});
  cli.option("--context", config.block_size, part + "context length of each GPT", {2, 1024});
  heads_divide_embd(cli, config);
}

void print_compared_gpts(const models::GPTConfig& config, const harness::CommonFlags& flags, const data::CharCorpus& corpus) {
  std::printf("  %lld layers, %lld heads, %lld wide, context %lld; %lld steps of batch %lld on %s%s\n",
              static_cast<long long>(config.n_layer), static_cast<long long>(config.n_head),
              static_cast<long long>(config.n_embd), static_cast<long long>(config.block_size),
              static_cast<long long>(flags.steps), static_cast<long long>(flags.batch), corpus.lines ? "the lines of " : "",
              corpus.source.c_str());
}

void GPTComparison::add(const AttentionVariant& variant, const harness::Tracker& tracker) {
  Trained trained{variant, tracker.last("val_loss"), tracker.seconds(), tracker.curve("val_ppl")};
  trained.val_ppl.name = variant.label;
  trained_.push_back(std::move(trained));
}

void GPTComparison::report(harness::Run& run) const {
  std::printf("  %-24s %16s %14s %10s\n", "attention", "validation ppl", "nats per char", "seconds");
  std::vector<plot::Series> curves;
  for (const Trained& t : trained_) {
    std::printf("  %-24s %16.2f %14.4f %10.1f\n", t.variant.label.c_str(), std::exp(t.val_loss), t.val_loss, t.seconds);
    curves.push_back(t.val_ppl);
  }
  run.wrote(plot::save_line_chart(run.path("gpt_perplexity"), {"Character GPTs: validation perplexity by attention", "step",
                                                          "validation perplexity (log scale)", curves, /*log_y=*/true}));
}

GPTComparison::Result GPTComparison::result(const std::string& name) const {
  for (const Trained& t : trained_)
    if (t.variant.name == name) return {std::exp(t.val_loss), t.seconds};
  fail("GPTComparison", "no GPT named '", name, "' was trained");
}

void GPTComparison::add_metrics(nlohmann::ordered_json& metrics, harness::MetricNotes& notes, const std::string& part) const {
  for (const Trained& t : trained_) {
    metrics["gpt_val_ppl_" + t.variant.name] = std::exp(t.val_loss);
    notes["gpt_val_ppl_" + t.variant.name] =
        part + "validation perplexity of the character GPT with " + t.variant.label + " attention";
  }
}

}  // namespace ladder::lessons
