// Lesson 09: the encoder-decoder with Bahdanau attention.
//
//  1. The same task, split and budget as lesson 07, but before every step the decoder looks back
//     at all the encoder's outputs and takes a weighted average of them (additive attention);
//  2. translating: greedy decoding and beam search, exact match and BLEU, as in lesson 07;
//  3. attention maps: which source characters each output character looked at;
//  4. exact match by source length, beside lesson 07's when its run folder holds the same task;
//  5. the bottleneck removed: lesson 07's numbers in words, where the plain model falls on long
//     sources and this one holds; attention maps of long numbers; beam search with and without
//     length normalisation.
// With --data, a pairs file of real sentences: bucketed batches, the weights of the lowest
// validation loss kept, examples with their sentence BLEU (docs/09_attention_seq2seq.md, section 6).
// The note that goes with it: docs/09_attention_seq2seq.md.
#include <cstdio>
#include <optional>

#include "core/autograd.h"
#include "core/ops.h"
#include "harness/cli.h"
#include "lessons/memory/model_memory.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "lessons/translation/task_flags.h"
#include "lessons/translation/training.h"
#include "lessons/translation/report.h"
#include "models/seq2seq_attention.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr size_t kMaps = 4;  // test examples drawn as attention maps

// Lesson 07's training loop for the model with attention: Adam at --lr, the gradient clipped to
// norm 1, the same random batches of pairs, teacher forcing. The attention is trained through the
// same loss: nothing in the loop says where the decoder should look.
harness::Tracker train(harness::Run& run, models::Seq2SeqAttention& model, const data::TranslationTask& task,
                       const harness::CommonFlags& flags, const std::string& name, const std::string& csv,
                       lessons::NormalisationWatch* watch = nullptr) {
  optim::Adam adam(model.named_parameters(), {.lr = flags.lr});
  lessons::TranslationTracker tracker(run, task, flags, name, csv, watch);
  Generator batches(flags.seed + 11);  // lesson 07's batches
  for (int64_t step = tracker.resume(model, adam, batches); step <= flags.steps; ++step) {  // 1, or after --resume's checkpoint
    model.train();
    tracker.step(step, optim::train_step(model, adam, task.training_batch(flags.batch, batches), 1.0f), adam.lr());
    if (tracker.evaluation_due(step)) tracker.evaluate(model, step);
  }
  return tracker.finish(model);
}

// The attention weights of one greedy translation of `pair`'s source: a row per output token (the
// <eos> included), a column per source token.
plot::Heatmap attention_map(models::Seq2SeqAttention& model, const data::TranslationTask& task,
                               const data::IdPair& pair, const std::string& title) {
  NoGradGuard no_grad;
  model.eval();
  const data::Seq2SeqBatch b = task.padded({pair});
  models::DecoderState state = model.encode(b.src, b.src_mask);
  const auto S = static_cast<int64_t>(b.src.size(1)), length = static_cast<int64_t>(pair.first.size());
  plot::Heatmap map{title, "source", "output", "attention weight", {}, {}, {}};
  map.scale_min = 0, map.scale_max = 1;  // every map on the same scale: a weight of 1 is all attention on one token
  for (const int id : pair.first) map.col_labels.push_back(task.tokenizers.source.token(id));
  Tensor token = full({1}, static_cast<float>(data::Tokenizer::kBos));
  for (int64_t t = 0; t <= task.longest_target; ++t) {
    token = argmax(model.decode_step(state, token), 1);
    // The weights are over the source as the encoder read it, any padding first (pad_on_the_left):
    // the real tokens are the last `length` columns.
    const float* w = model.last_weights().data() + (S - length);
    map.values.emplace_back(w, w + length);
    const int id = static_cast<int>(token.item());
    map.row_labels.push_back(id == data::Tokenizer::kEos ? "<eos>" : task.tokenizers.target.token(id));
    if (id == data::Tokenizer::kEos) break;
  }
  return map;
}

// Draws the attention maps of test pairs `rows` as attention_map_NAME_1.png, ...
void save_maps(harness::Run& run, models::Seq2SeqAttention& model, const data::TranslationTask& task,
               const std::vector<size_t>& rows, const std::string& name) {
  for (size_t k = 0; k < rows.size(); ++k) {
    const std::string title = "Attention while translating \"" + task.test_text[rows[k]].source + "\"";
    run.wrote(plot::save_heatmap(run.path(name + std::to_string(k + 1)), attention_map(model, task, task.test[rows[k]], title)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("09_attention_seq2seq",
                           "Lesson 09: the encoder-decoder with Bahdanau attention on lesson 07's task; attention maps.",
                           {.steps = 600, .lr = 3e-3f, .batch = 64});
    lessons::TranslationFlags task_flags{.number_steps = 1200};
    lessons::add_translation_options(cli, task_flags);
    models::Seq2SeqConfig config{.embed = 32, .hidden = 128, .layers = 2, .dropout = 0};
    lessons::add_model_options(cli, config);
    std::string compare = "runs/07_seq2seq";
    cli.option("--compare", compare, "lesson 07's run folder, whose exact match by length parts 4 and 5 plot beside ours");
    cli.parse(argc, argv);
    lessons::shorten_for_quick(task_flags, cli.common);

    const data::TranslationTask task = lessons::load_translation_task(task_flags, cli.common, "09_attention_seq2seq");
    const std::optional<data::TranslationTask> numbers = lessons::load_number_task(task_flags, cli.common, "09_attention_seq2seq");
    config = lessons::sized_for(config, task);
    models::check_config("09_attention_seq2seq", config);
    harness::check_memory("09_attention_seq2seq", lessons::seq2seq_memory(config, cli.common.batch, task.source_width, task.longest_target));
    const lessons::OtherRun lesson07 = lessons::read_other_run("--compare", compare, "lesson 07");
    harness::Run run(cli);
    lessons::print_task(task);

    std::printf("\n== 1. the encoder-decoder with attention, teacher forcing: %lld steps of %lld pairs ==\n",
                static_cast<long long>(cli.common.steps), static_cast<long long>(cli.common.batch));
    Generator init(cli.common.seed + 1);
    models::Seq2SeqAttention model(config, init);
    std::printf("%s", model.summary().c_str());
    lessons::print_time_estimate<models::Seq2SeqAttention>(config, task, cli.common);
    const harness::Tracker tracker = train(run, model, task, cli.common, "attention", "metrics.csv");
    run.save_checkpoint(model, task.tokenizers.metadata());
    std::vector<plot::Series> losses = {tracker.curve("val_loss")};
    std::string why_not;  // lesson 07's curve goes beside ours when its run translated the same task
    if (auto theirs = lessons::other_run_loss(lesson07, cli, "without attention (lesson 07)", why_not)) losses.insert(losses.begin(), *theirs);
    else std::printf("lesson 07's loss is not beside it: %s\n", why_not.c_str());
    run.wrote(plot::save_line_chart(run.path("loss"), {"Validation loss per target token", "step", "validation loss (nats, log scale)",
                                                          losses, /*log_y=*/true}));

    std::printf("\n== 2. translating the %zu test sources: greedy and beam search ==\n", task.test.size());
    const lessons::DecoderComparison decoders = lessons::compare_decoders(run, model, task);

    std::printf("\n== 3. attention maps of %zu test translations ==\n", std::min(kMaps, task.test.size()));
    save_maps(run, model, task, lessons::first_test_pairs(task, kMaps), "attention_map_");
    std::printf("each row: one output token; each column: one source token; a row sums to 1\n");

    std::printf("\n== 4. greedy exact match by source length ==\n");
    lessons::report_exact_match_by_length(run, cli, lessons::main_task_chart(), task, decoders.greedy,
                                          "with attention (lesson 09)", lesson07);

    lessons::TranslationSummary summary = lessons::translation_summary(task, tracker, decoders);
    if (numbers) {
      std::printf("\n== 5. the bottleneck removed: numbers in words to digits, %lld steps of %lld pairs ==\n",
                  static_cast<long long>(task_flags.number_steps), static_cast<long long>(cli.common.batch));
      lessons::print_task(*numbers);
      Generator number_init(cli.common.seed + 1);
      models::Seq2SeqAttention number_model(lessons::sized_for(config, *numbers), number_init);
      harness::CommonFlags budget = cli.common;
      budget.steps = task_flags.number_steps;
      lessons::NormalisationWatch watch(budget.steps);
      const harness::Tracker counted = train(run, number_model, *numbers, budget, "numbers", "metrics_numbers.csv", &watch);
      summary.add(lessons::report_number_task(run, cli, number_model, *numbers, counted, watch,
                                              "with attention (lesson 09)", lesson07));
      save_maps(run, number_model, *numbers, lessons::longest_test_pairs(*numbers, 2), "attention_numbers_");
      std::printf("attention maps of the two longest test numbers: attention_numbers_1.png, attention_numbers_2.png\n");
    }
    run.finish(summary.metrics, summary.notes,
               "docs/09_attention_seq2seq.md, section 4 (Reading the attention maps); then exercise 2: lessons 07 and 09\n"
               "      with --pad-words 8");
  });
}
