// Character GPTs that differ only in their attention, trained side by side on the same text and
// budget (lessons 12, 14 and 17): their shape as flags, and their results side by side, a table of
// their validation perplexities and one plot of their curves. Each lesson trains them in its own
// loop, one GPT per kind, from the same initial weights on the same batches.
#pragma once

#include <string>
#include <vector>

#include "lessons/char_gpt/char_gpt.h"
#include "harness/cli.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "harness/tracker.h"
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

// --layers, --heads, --embd and --context of the GPTs, their help starting with `part` ("part 3: ").
void add_gpt_shape_options(harness::LessonCli& cli, models::GPTConfig& config, const std::string& part);
// The line that says what every compared GPT is and what it trains on.
void print_compared_gpts(const models::GPTConfig& config, const harness::CommonFlags& flags, const data::CharCorpus& corpus);

// The trained GPTs, one per variant in the order they trained.
class GPTComparison {
 public:
  // After the variant's loop: its last validation loss, its time and its validation perplexity curve.
  void add(const AttentionVariant& variant, const harness::Tracker& tracker);
  // Prints the table and draws gpt_perplexity: every validation curve on one plot.
  void report(harness::Run& run) const;
  // The variant named `name`: its last validation perplexity and its training time; fails for a name not added.
  struct Result {
    double perplexity = 0, seconds = 0;
  };
  Result result(const std::string& name) const;
  // gpt_val_ppl_NAME for each variant, noted as "<part>validation perplexity of ...".
  void add_metrics(nlohmann::ordered_json& metrics, harness::MetricNotes& notes, const std::string& part) const;

 private:
  struct Trained {
    AttentionVariant variant;
    double val_loss = 0, seconds = 0;
    plot::Series val_ppl;  // against step, named by the variant's label
  };
  std::vector<Trained> trained_;
};

}  // namespace ladder::lessons
