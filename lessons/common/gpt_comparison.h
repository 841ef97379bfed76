// Character GPTs that differ only in their attention, trained side by side on the same text and
// budget (lessons 12 and 14): the same initial weights (the attention kinds' own state aside), the
// same batches, the same steps. A table of their validation perplexities and one plot of their curves.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lessons/common/char_gpt.h"
#include "lessons/common/cli.h"
#include "lessons/common/run.h"
#include "models/gpt.h"

namespace ladder::lessons {

struct AttentionVariant {
  std::string name;   // in file and metric names: gpt_NAME.csv, gpt_val_ppl_NAME
  std::string label;  // in the table and the legend: "linear elu+1"
  nn::AttentionSettings attention;
};

// The GPTs compared by default: 2 layers, 4 heads, 64 wide, context 64, no dropout (the
// vocabulary comes from the text); evaluated every 50 steps, after 50 steps of warmup.
models::GPTConfig compared_gpt();
GPTTraining compared_gpt_training();

// --layers, --heads, --embd and --block of the GPTs, their help starting with `part` ("part 3: ").
void add_gpt_shape_options(LessonCli& cli, models::GPTConfig& config, const std::string& part);
// After parse(): refuses --lines (the GPTs read one stream) and --heads that does not divide --embd.
void check_gpt_shape(const std::string& lesson, const TextFlags& text, const models::GPTConfig& config);

// Trains one GPT of `config` per variant with train_char_gpt, each from a generator seeded with
// flags.seed, writing gpt_NAME.csv; then prints the table and writes gpt_perplexity. `trained`, when
// given, sees each model once it is trained. Returns the reports by variant name.
std::map<std::string, GPTTrainingReport> train_per_attention(
    Run& run, const CommonFlags& flags, const CharCorpus& corpus, models::GPTConfig config, const GPTTraining& training,
    const std::vector<AttentionVariant>& variants,
    const std::function<void(const AttentionVariant&, models::GPT&)>& trained = {});

// gpt_val_ppl_NAME for each variant, noted as "<part>validation perplexity of ...".
void add_perplexity_metrics(nlohmann::ordered_json& metrics, MetricNotes& notes,
                            const std::map<std::string, GPTTrainingReport>& reports,
                            const std::vector<AttentionVariant>& variants, const std::string& part);

}  // namespace ladder::lessons
