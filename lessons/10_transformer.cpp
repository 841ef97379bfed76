// Lesson 10: the Transformer (encoder-decoder), attention everywhere.
//
//  1. The sinusoidal positional encoding: the table (position x dimension) as a heatmap, and the
//     dot products between positions, which depend on how far apart they are;
//  2. the Transformer trained on lesson 07's task, with the same split and budget flags, a
//     learning-rate warmup then a cosine decay;
//  3. translating: greedy decoding (with the decoder's KV cache) and beam search, exact match and
//     BLEU, the same table as lessons 07 and 09; exact match by source length beside lesson 09's;
//  4. attention maps of every layer and head for a test example: encoder self attention, decoder
//     masked self attention, cross attention;
//  5. post-LN against pre-LN, each with and without warmup: four short runs of the same model and
//     budget at a higher learning rate (--norm-lr), their training-loss curves in one plot and
//     their final losses;
//  6. lesson 07's numbers in words: exact match by source length beside lessons 07 and 09, and beam
//     search with and without length normalisation.
// --attention full|linear|bigbird chooses the encoder's self attention (harness/attention_flags.h);
// the decoder's causal self attention and its cross attention stay full (its KV cache, its maps).
// Its flags and their checks are lessons/10_transformer/flags.h; the note that goes with it:
// docs/10_transformer.md.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "harness/attention_flags.h"
#include "harness/cli.h"
#include "harness/model_printout.h"
#include "harness/run.h"
#include "harness/schedule_flags.h"
#include "harness/tracker.h"
#include "lessons/10_transformer/attention_maps.h"
#include "lessons/10_transformer/flags.h"
#include "lessons/translation/report.h"
#include "lessons/translation/task_flags.h"
#include "lessons/translation/training.h"
#include "models/transformer.h"
#include "nn/attention/positional_encoding.h"
#include "optim/adam.h"
#include "optim/schedule.h"
#include "optim/train_step.h"
#include "plot/plot.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "10_transformer";
constexpr int64_t kTablePositions = 64;  // positions shown in part 1

// Part 1: the table P (positions x dimensions) and P P^T.
void show_positional_encoding(harness::Run& run, int64_t dim) {
  const Tensor table = nn::sinusoidal_encoding(kTablePositions, dim);  // (P,E)
  const Tensor dots = matmul(table, table, {.transpose_b = true});    // (P,P)
  plot::Heatmap encoding{"Sinusoidal positional encoding", "dimension", "position", "value", {}, {}, {}};
  encoding.diverging = true;
  plot::Heatmap similarity{"Dot products between positional encodings", "position", "position", "dot product", {}, {}, {}};
  for (int64_t p = 0; p < kTablePositions; ++p) {
    encoding.values.emplace_back(table.data() + p * dim, table.data() + (p + 1) * dim);
    similarity.values.emplace_back(dots.data() + p * kTablePositions, dots.data() + (p + 1) * kTablePositions);
    const std::string label = p % 8 == 0 ? std::to_string(p) : "";
    encoding.row_labels.push_back(label), similarity.row_labels.push_back(label), similarity.col_labels.push_back(label);
  }
  for (int64_t i = 0; i < dim; ++i) encoding.col_labels.push_back(i % 8 == 0 ? std::to_string(i) : "");
  run.wrote(plot::save_heatmap(run.path("positional_encoding"), encoding));
  run.wrote(plot::save_heatmap(run.path("position_dot_products"), similarity));
  auto dot = [&](int64_t a, int64_t b) { return dots.data()[a * kTablePositions + b]; };
  std::printf("P[p] . P[p+k] for p = 5, 20, 40 (each row: one k; the columns agree, the product depends on k only):\n");
  for (const int64_t k : {0, 1, 2, 5, 10, 20})
    std::printf("  k = %2lld: %7.2f %7.2f %7.2f\n", static_cast<long long>(k), dot(5, 5 + k), dot(20, 20 + k), dot(40, 40 + k));
}

// The Transformer of the flags, sized for `task`: its two vocabularies, its longest source and target.
models::TransformerConfig model_config(const lessons::TransformerFlags& flags, const data::TranslationTask& task, bool norm_first) {
  return {.src_vocab = task.tokenizers.source.vocab_size(), .tgt_vocab = task.tokenizers.target.vocab_size(),
          .d_model = flags.embed, .nhead = flags.heads, .encoder_layers = flags.layers, .decoder_layers = flags.layers,
          .dim_feedforward = flags.ff, .dropout = flags.dropout, .norm_first = norm_first,
          .max_len = std::max(task.source_width, task.longest_target + 1),  // decoder inputs: <bos> + target
          .encoder_attention = flags.encoder_attention};
}

// The training loop of parts 2, 5 and 6: lesson 07's (Adam, the gradient clipped to norm 1, the same
// random batches for every model) with the Transformer's learning-rate schedule: a warmup, then a
// decay, step s (from 1) at rate lr(s - 1).
harness::Tracker train(harness::Run& run, models::Transformer& model, const data::TranslationTask& task,
                       const harness::CommonFlags& flags, const harness::ScheduleFlags& schedule, const std::string& name,
                       const std::string& csv, lessons::NormalisationWatch* watch = nullptr) {
  const optim::Schedule lr = schedule.schedule(flags.lr, flags.steps);  // warmup, then down to lr / 10
  optim::Adam adam(model.named_parameters(), {.lr = flags.lr});
  lessons::TranslationTracker tracker(run, task, flags, name, csv, watch);
  Generator batches(flags.seed + 11);  // lesson 07's batches
  for (int64_t step = tracker.resume(model, adam, batches); step <= flags.steps; ++step) {  // 1, or after --resume's checkpoint
    model.train();
    const std::vector<data::Seq2SeqBatch> batch = task.training_batch(flags.batch, batches);
    adam.set_lr(lr(step - 1));
    tracker.step(step, optim::train_step(model, adam, batch, 1.0f), adam.lr());
    if (tracker.evaluation_due(step)) tracker.evaluate(model, step);
  }
  return tracker.finish(model);
}

struct NormRun {
  std::string name, key, csv;  // key: its metric in summary.json
  bool norm_first;
  harness::ScheduleFlags schedule;
  double train_loss = 0, val_loss = 0;
};

// Part 5: post-LN and pre-LN, with and without warmup, from the same initial weights and batches.
std::vector<NormRun> compare_norms(harness::Run& run, const lessons::TransformerFlags& flags, const data::TranslationTask& task,
                                   const harness::CommonFlags& common) {
  harness::CommonFlags budget = common;
  budget.steps = flags.norm_steps;
  budget.lr = flags.norm_lr;
  std::vector<NormRun> runs = {{"post-LN with warmup", "val_loss_post_ln_warmup", "metrics_post_ln_warmup.csv", false, flags.schedule},
                               {"post-LN without warmup", "val_loss_post_ln_no_warmup", "metrics_post_ln_no_warmup.csv", false, {.warmup = 0}},
                               {"pre-LN with warmup", "val_loss_pre_ln_warmup", "metrics_pre_ln_warmup.csv", true, flags.schedule},
                               {"pre-LN without warmup", "val_loss_pre_ln_no_warmup", "metrics_pre_ln_no_warmup.csv", true, {.warmup = 0}}};
  std::vector<plot::Series> curves;
  for (NormRun& r : runs) {
    std::printf("%s:\n", r.name.c_str());
    Generator init(common.seed + 1);
    models::Transformer model(model_config(flags, task, r.norm_first), init);
    const harness::Tracker tracker = train(run, model, task, budget, r.schedule, r.name, r.csv);
    r.train_loss = tracker.train_loss(), r.val_loss = tracker.last("val_loss");
    curves.push_back(tracker.curve("train_loss"));
  }
  run.wrote(plot::save_line_chart(run.path("norm_first"),
                                     {"Training loss: post-LN and pre-LN, with and without warmup", "step",
                                      "training loss (nats per target token, log scale)", curves, /*log_y=*/true}));
  std::printf("\n%-24s %12s %12s\n", "run", "train loss", "val loss");
  const NormRun* best = &runs.front();
  for (const NormRun& r : runs) {
    std::printf("%-24s %12.4f %12.4f\n", r.name.c_str(), r.train_loss, r.val_loss);
    if (r.val_loss < best->val_loss) best = &r;
  }
  std::printf("lowest validation loss after %lld steps: %s; warmup changed post-LN's by %+.4f and pre-LN's by %+.4f\n",
              static_cast<long long>(budget.steps), best->name.c_str(), runs[0].val_loss - runs[1].val_loss,
              runs[2].val_loss - runs[3].val_loss);
  return runs;
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli(kLesson, "Lesson 10: the encoder-decoder Transformer on lesson 07's task; attention maps, post-LN vs pre-LN.",
                           {.steps = 600, .lr = 3e-3f, .batch = 64});
    lessons::TranslationFlags task_flags{.number_steps = 1200};
    lessons::add_translation_options(cli, task_flags);
    lessons::TransformerFlags flags;
    flags.add_to(cli);
    std::string compare = "runs/09_attention_seq2seq";
    cli.option("--compare", compare, "lesson 09's run folder, whose exact match by length part 3 plots beside ours");
    harness::ModelPrintout printout;
    printout.add_to(cli);
    cli.parse(argc, argv);
    flags.settle(cli, task_flags);  // the warmup against every part's steps; --quick shortens the parts

    const data::TranslationTask task = lessons::load_translation_task(task_flags, cli.common, kLesson);
    const std::optional<data::TranslationTask> numbers = lessons::load_number_task(task_flags, cli.common, kLesson);
    const models::TransformerConfig config = model_config(flags, task, flags.pre_ln);
    lessons::check_model_fits(kLesson, config, cli.common.batch, task, numbers);
    const lessons::OtherRun lesson09 = lessons::read_other_run("--compare", compare, "lesson 09");
    harness::Run run(cli);
    lessons::print_task(task);

    std::printf("\n== 1. the sinusoidal positional encoding (%lld positions, %lld dimensions) ==\n",
                static_cast<long long>(kTablePositions), static_cast<long long>(flags.embed));
    show_positional_encoding(run, flags.embed);

    std::printf("\n== 2. the Transformer (%s), teacher forcing: %lld steps of %lld pairs, %lld of warmup ==\n",
                flags.pre_ln ? "pre-LN" : "post-LN", static_cast<long long>(cli.common.steps),
                static_cast<long long>(cli.common.batch), static_cast<long long>(flags.schedule.warmup));
    Generator init(cli.common.seed + 1);
    models::Transformer model(config, init);
    std::printf("encoder self attention: %s; the decoder's attention: full\n",
                harness::describe_attention(config.encoder_attention, /*causal=*/false).c_str());
    printout.print(model);
    lessons::print_time_estimate<models::Transformer>(config, task, cli.common);
    const harness::Tracker tracker = train(run, model, task, cli.common, flags.schedule, "transformer", "metrics.csv");
    run.save_checkpoint(model, task.tokenizers.metadata());
    run.wrote(plot::save_line_chart(run.path("loss"), {"Validation loss per target token", "step", "validation loss (nats, log scale)",
                                                          {tracker.curve("val_loss")}, /*log_y=*/true}));

    std::printf("\n== 3. translating the %zu test sources: greedy and beam search ==\n", task.test.size());
    const lessons::DecoderComparison decoders = lessons::compare_decoders(run, model, task);
    std::printf("\ngreedy exact match by source length:\n");
    lessons::report_exact_match_by_length(run, cli, lessons::main_task_chart(), task, decoders.greedy, "Transformer (lesson 10)",
                                          lesson09);

    std::printf("\n== 4. attention maps of every layer and head, test example \"%s\" ==\n",
                task.test_text.front().source.c_str());
    lessons::show_attention_maps(run, model, task);

    lessons::TranslationSummary summary = lessons::translation_summary(task, tracker, decoders);
    summary.metrics["encoder_attention"] = config.encoder_attention.kind_name();
    summary.notes["encoder_attention"] = "the attention kind of the encoder's self attention (--attention)";
    if (flags.norm_steps > 0) {
      std::printf("\n== 5. post-LN and pre-LN, with and without %lld steps of warmup: %lld steps each at --norm-lr %g ==\n",
                  static_cast<long long>(flags.schedule.warmup), static_cast<long long>(flags.norm_steps), flags.norm_lr);
      for (const NormRun& r : compare_norms(run, flags, task, cli.common)) {
        summary.metrics[r.key] = r.val_loss;
        summary.notes[r.key] = "part 5, " + r.name + ": validation loss after --norm-steps steps";
      }
    }
    if (numbers) {
      std::printf("\n== 6. numbers in words to digits, %lld steps of %lld pairs ==\n",
                  static_cast<long long>(task_flags.number_steps), static_cast<long long>(cli.common.batch));
      lessons::print_task(*numbers);
      Generator number_init(cli.common.seed + 1);
      models::Transformer number_model(model_config(flags, *numbers, flags.pre_ln), number_init);
      harness::CommonFlags budget = cli.common;
      budget.steps = task_flags.number_steps;
      lessons::NormalisationWatch watch(budget.steps);
      const harness::Tracker counted =
          train(run, number_model, *numbers, budget, flags.schedule, "numbers", "metrics_numbers.csv", &watch);
      summary.add(lessons::report_number_task(run, cli, number_model, *numbers, counted, watch,
                                              "Transformer (lesson 10)", lesson09));
    }
    run.finish(summary.metrics, summary.notes, "docs/10_transformer.md, section 7 (Reading the attention maps); then lesson 11, a GPT");
  });
}
