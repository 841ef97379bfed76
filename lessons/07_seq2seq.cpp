// Lesson 07: the encoder-decoder (sequence to sequence learning).
//
//  1. A GRU encoder reads a date as people write it ("Tuesday, March 3, 1998"), a GRU decoder writes
//     it in ISO form ("1998-03-03"), character by character, trained with teacher forcing;
//  2. translating: greedy decoding and beam search (widths 1, 2, 4, 8), scored by exact match and
//     BLEU, with examples;
//  3. training without teacher forcing, the decoder reading its own predictions: the two curves;
//  4. exact match by source length: everything the decoder knows passes through one fixed-size
//     vector, but a date holds as much however long it is written;
//  5. the bottleneck: numbers written in words to digits, where every word adds information. Exact
//     match falls as the sources grow (lesson 09 removes the bottleneck), and beam search with and
//     without length normalisation, on outputs of every length.
// The note that goes with it: docs/07_seq2seq.md.
#include <cstdio>
#include <optional>

#include "harness/cli.h"
#include "lessons/memory/model_memory.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "lessons/translation/task_flags.h"
#include "lessons/translation/training.h"
#include "lessons/translation/report.h"
#include "models/seq2seq.h"
#include "models/translate.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

// The training loop of parts 1, 3 and 5: Adam at --lr, --steps random batches of pairs, the gradient
// clipped to norm 1. The model's loss feeds its decoder as model.feeding says: with teacher forcing
// (parts 1 and 5) the decoder reads the true previous target token, in part 3 its own prediction.
harness::Tracker train(harness::Run& run, models::Seq2Seq& model, const data::TranslationTask& task,
                       const harness::CommonFlags& flags, const std::string& name, const std::string& csv,
                       lessons::NormalisationWatch* watch = nullptr) {
  optim::Adam adam(model.named_parameters(), {.lr = flags.lr});
  lessons::TranslationTracker tracker(run, task, flags, name, csv, watch);
  Generator batches(flags.seed + 11);  // the same batches for every model
  for (int64_t step = tracker.resume(model, adam, batches); step <= flags.steps; ++step) {  // 1, or after --resume's checkpoint
    model.train();
    const std::vector<data::Seq2SeqBatch> batch = task.training_batch(flags.batch, batches);
    tracker.step(step, optim::train_step(model, adam, batch, 1.0f), adam.lr());
    if (tracker.evaluation_due(step)) tracker.evaluate(model, step);
  }
  return tracker.finish(model);  // a pairs file's model ends with the weights of its lowest validation loss
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("07_seq2seq", "Lesson 07: a GRU encoder-decoder translates dates; greedy and beam search, BLEU.",
                           {.steps = 600, .lr = 3e-3f, .batch = 64});
    lessons::TranslationFlags task_flags{.number_steps = 1200};
    lessons::add_translation_options(cli, task_flags);
    models::Seq2SeqConfig config{.embed = 32, .hidden = 128, .layers = 2, .dropout = 0};
    bool skip_own_predictions = false;
    lessons::add_model_options(cli, config);
    cli.flag("--no-part3", skip_own_predictions, "skip part 3 (training again without teacher forcing)");
    cli.parse(argc, argv);
    lessons::shorten_for_quick(task_flags, cli.common);

    const data::TranslationTask task = lessons::load_translation_task(task_flags, cli.common, "07_seq2seq");
    const std::optional<data::TranslationTask> numbers = lessons::load_number_task(task_flags, cli.common, "07_seq2seq");
    config = lessons::sized_for(config, task);
    models::check_config("07_seq2seq", config);
    harness::check_memory("07_seq2seq", lessons::seq2seq_memory(config, cli.common.batch, task.source_width, task.longest_target));
    harness::Run run(cli);
    lessons::print_task(task);

    std::printf("\n== 1. the encoder-decoder, trained with teacher forcing: %lld steps of %lld pairs ==\n",
                static_cast<long long>(cli.common.steps), static_cast<long long>(cli.common.batch));
    Generator init(cli.common.seed + 1);
    models::Seq2Seq model(config, init);
    std::printf("%s", model.summary().c_str());
    lessons::print_time_estimate<models::Seq2Seq>(config, task, cli.common);
    const harness::Tracker taught = train(run, model, task, cli.common, "teacher forcing", "metrics.csv");
    run.save_checkpoint(model, task.tokenizers.metadata());

    std::printf("\n== 2. translating the %zu test sources: greedy and beam search ==\n", task.test.size());
    const lessons::DecoderComparison decoders = lessons::compare_decoders(run, model, task);
    run.wrote(plot::save_line_chart(run.path("beam_seconds"),
                                       {"Seconds to translate the test set against beam width", "beam width", "seconds",
                                        {decoders.seconds}}));

    std::vector<plot::Series> curves = {taught.curve("val_loss")};
    nlohmann::ordered_json own_json;
    if (!skip_own_predictions) {
      std::printf("\n== 3. the same model trained on its own predictions (no teacher forcing) ==\n");
      Generator same_init(cli.common.seed + 1);
      models::Seq2Seq free_running(config, same_init);
      free_running.feeding = models::Feeding::own_predictions;  // its loss: the decoder reads what it predicted
      const harness::Tracker own = train(run, free_running, task, cli.common, "own predictions", "metrics_own_predictions.csv");
      const models::TranslationScores s = models::score(models::translate(free_running, task, task.test, 0), task.test);
      std::printf("validation loss %.4f (teacher forcing: %.4f); greedy test exact match %.3f (teacher forcing: %.3f)\n",
                  own.last("val_loss"), taught.last("val_loss"), s.exact_match, decoders.greedy_scores.exact_match);
      curves.push_back(own.curve("val_loss"));
      own_json = {{"own_predictions_val_loss", own.last("val_loss")}, {"own_predictions_exact_match", s.exact_match}};
    }
    run.wrote(plot::save_line_chart(run.path("loss"), {"Validation loss per target character", "step",
                                                          "validation loss (nats, log scale)", curves, /*log_y=*/true}));

    std::printf("\n== 4. greedy exact match by source length ==\n");
    lessons::report_exact_match_by_length(run, cli, lessons::main_task_chart(), task, decoders.greedy,
                                          "encoder-decoder (lesson 07)", std::nullopt);

    lessons::TranslationSummary summary = lessons::translation_summary(task, taught, decoders);
    if (!own_json.is_null()) summary.metrics.update(own_json);
    summary.notes["own_predictions_val_loss"] = "part 3: the model trained on its own predictions, teacher-forced validation loss";
    summary.notes["own_predictions_exact_match"] = "part 3: that model's greedy test exact match";

    if (numbers) {
      std::printf("\n== 5. the bottleneck: numbers in words to digits, %lld steps of %lld pairs ==\n",
                  static_cast<long long>(task_flags.number_steps), static_cast<long long>(cli.common.batch));
      lessons::print_task(*numbers);
      Generator number_init(cli.common.seed + 1);
      models::Seq2Seq number_model(lessons::sized_for(config, *numbers), number_init);
      harness::CommonFlags budget = cli.common;
      budget.steps = task_flags.number_steps;
      lessons::NormalisationWatch watch(budget.steps);
      const harness::Tracker counted = train(run, number_model, *numbers, budget, "numbers", "metrics_numbers.csv", &watch);
      summary.add(lessons::report_number_task(run, cli, number_model, *numbers, counted, watch,
                                              "encoder-decoder (lesson 07)", std::nullopt));
    }
    run.finish(summary.metrics, summary.notes,
               "docs/07_seq2seq.md, section 5 (Beam search); then exercise 3: --pad-words 8, and lesson 09 with\n"
               "      the same flags, to compare the two on long sources");
  });
}
