#include "lessons/common/gpt_comparison.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "lessons/common/plot.h"

namespace ladder::lessons {

models::GPTConfig compared_gpt() { return {.block_size = 64, .n_layer = 2, .n_head = 4, .n_embd = 64, .dropout = 0}; }

GPTTraining compared_gpt_training() { return {.warmup = 50, .eval_every = 50}; }

void add_gpt_shape_options(LessonCli& cli, models::GPTConfig& config, const std::string& part) {
  cli.option("--layers", config.n_layer, part + "Transformer blocks of each GPT", {1, 12});
  cli.option("--heads", config.n_head, part + "attention heads per block, dividing --embd", {1, 16});
  cli.option("--embd", config.n_embd, part + "width of each GPT's residual stream", {1, 1024});
  cli.option("--block", config.block_size, part + "context length of each GPT", {2, 1024});
}

void check_gpt_shape(const std::string& lesson, const TextFlags& text, const models::GPTConfig& config) {
  if (text.lines) fail(lesson.c_str(), "the GPTs read one character stream; --lines does not apply");
  if (config.n_embd % config.n_head != 0)
    fail(lesson.c_str(), "--heads ", config.n_head, " does not divide --embd ", config.n_embd,
         "; each head takes --embd / --heads features: choose --heads dividing --embd");
}

std::map<std::string, GPTTrainingReport> train_per_attention(
    Run& run, const CommonFlags& flags, const CharCorpus& corpus, models::GPTConfig config, const GPTTraining& training,
    const std::vector<AttentionVariant>& variants,
    const std::function<void(const AttentionVariant&, models::GPT&)>& trained) {
  std::printf("  %lld layers, %lld heads, %lld wide, context %lld; %lld steps of batch %lld on %s\n",
              static_cast<long long>(config.n_layer), static_cast<long long>(config.n_head),
              static_cast<long long>(config.n_embd), static_cast<long long>(config.block_size),
              static_cast<long long>(flags.steps), static_cast<long long>(flags.batch), corpus.source.c_str());
  std::map<std::string, GPTTrainingReport> reports;
  std::vector<Series> curves;
  for (const AttentionVariant& variant : variants) {
    std::printf("-- %s\n", variant.label.c_str());
    config.attention = variant.attention;
    Generator init(flags.seed);
    models::GPT model(config, init);
    const GPTTrainingReport& report = reports[variant.name] =
        train_char_gpt(run, flags, model, corpus, training, "gpt_" + variant.name + ".csv");
    curves.push_back(report.val_curve);
    curves.back().name = variant.label;
    if (trained) trained(variant, model);
  }
  std::printf("  %-24s %16s %14s %10s\n", "attention", "validation ppl", "nats per char", "seconds");
  for (const AttentionVariant& variant : variants) {
    const GPTTrainingReport& r = reports.at(variant.name);
    std::printf("  %-24s %16.2f %14.4f %10.1f\n", variant.label.c_str(), std::exp(r.val_loss), r.val_loss, r.seconds);
  }
  run.wrote(save_line_chart(run.path("gpt_perplexity"), {"Character GPTs: validation perplexity by attention", "step",
                                                          "validation perplexity (log scale)", curves, /*log_y=*/true}));
  return reports;
}

void add_perplexity_metrics(nlohmann::ordered_json& metrics, MetricNotes& notes,
                            const std::map<std::string, GPTTrainingReport>& reports,
                            const std::vector<AttentionVariant>& variants, const std::string& part) {
  for (const AttentionVariant& variant : variants) {
    metrics["gpt_val_ppl_" + variant.name] = std::exp(reports.at(variant.name).val_loss);
    notes["gpt_val_ppl_" + variant.name] =
        part + "validation perplexity of the character GPT with " + variant.label + " attention";
  }
}

}  // namespace ladder::lessons
