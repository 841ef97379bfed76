// Lesson 16: data-parallel training over MPI, for when one machine is not enough.
//
// N processes (./ladder lesson 16 --procs N, or mpirun -np N build/lessons/lesson_16_data_parallel)
// each hold the whole GPT of lesson 11 and take a shard of every batch; after backward their
// gradients are averaged with an all-reduce, so every process steps the same gradient.
//  1. the averaged gradient against the gradient one process computes of the whole batch;
//  2. training on N processes against one process with the same total batch: the loss curves;
//  3. time per step against the number of processes, split into compute and all-reduce, and the
//     all-reduce against the size of the buffer (bytes, bandwidth);
//  4. what breaks: summing instead of averaging, seeds that differ by process, no all-reduce.
// Data parallelism is dist/data_parallel.h, the ring all-reduce dist/ring_all_reduce.h; the note
// that goes with it: docs/16_data_parallel.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "core/kernels/parallel.h"
#include "dist/communicator.h"
#include "dist/data_parallel.h"
#include "lessons/char_gpt/char_gpt.h"
#include "harness/cli.h"
#include "lessons/16_data_parallel/cost.h"
#include "lessons/memory/model_memory.h"
#include "plot/plot.h"
#include "harness/resume.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "models/gpt.h"
#include "models/gpt_text.h"
#include "optim/adam.h"
#include "optim/schedule.h"
#include "optim/sgd.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr const char* kLesson = "16_data_parallel";

// What every part needs. Every process holds all of it but `run`: rank 0 alone writes files.
struct Setup {
  harness::CommonFlags flags;
  lessons::GPTTraining training;  // lesson 11's: AdamW's groups, --warmup then --decay, --clip, --eval-every
  int64_t short_steps;            // each run of part 4
  models::GPTConfig config;
  data::CharCorpus corpus;
  const dist::Communicator* processes;
  harness::Run* run;  // null on every process but rank 0
};

// The GPT every process builds from the same seed (seed_offset 0), then rank 0's weights broadcast
// anyway: the models start equal even when a seed differs by process (part 4 leaves it out).
std::unique_ptr<models::GPT> same_model(const Setup& s, const dist::Communicator& comm, uint64_t seed_offset = 0,
                                        bool broadcast = true) {
  Generator init(s.flags.seed + seed_offset);
  auto model = std::make_unique<models::GPT>(s.config, init);
  if (broadcast) dist::broadcast_parameters(*model, comm);
  return model;
}

// Every process draws the same batches (one seed) and keeps its shard's rows: together, exactly one process's batch.
struct Batches {
  data::TrainingBatches batcher;  // windows, or with --lines whole lines
  Generator gen;
  int64_t batch;
  data::Batch next() { return batcher.sample(batch, gen); }  // x, y (batch,T)
};
Batches batches(const Setup& s) { return {data::TrainingBatches(s.corpus, s.config.block_size), Generator(s.flags.seed + 1), s.flags.batch}; }

// Lesson 11's optimiser and schedule: AdamW (no decay on biases, norms, embeddings), warmup, then --decay's shape.
optim::AdamW adamw_for(models::GPT& model, const Setup& s) { return s.training.optimizer(model, s.flags.lr); }
optim::Schedule schedule_for(const Setup& s) { return s.training.schedule.schedule(s.flags.lr, s.flags.steps); }

// ---- 1. the averaged gradient equals the whole batch's ----
double gradient_check(const Setup& s) {
  const dist::Communicator& all = *s.processes;
  std::printf("== 1. the averaged gradient: %d processes against one process with the whole batch ==\n", all.size());
  auto model = same_model(s, all);
  const data::Batch batch = batches(s).next();
  const dist::BatchShare mine = dist::share_of(batch, dist::shard_of(s.flags.batch, all.rank(), all.size()));
  model->loss(mine.rows).backward();  // this process's rows only
  dist::all_reduce_gradients(*model, all, mine.share);
  std::vector<float> averaged;  // every gradient, end to end
  for (const Tensor& p : model->parameters()) for (const float g : p.grad().to_vector()) averaged.push_back(g);
  if (!s.run) return 0;
  model->zero_grad();
  model->loss(batch).backward();  // rank 0 alone, every row: what one process would compute
  double difference = 0, largest = 0;
  size_t i = 0;
  for (const Tensor& p : model->parameters())
    for (const float g : p.grad().to_vector()) {
      difference = std::max(difference, static_cast<double>(std::fabs(g - averaged[i++])));
      largest = std::max(largest, static_cast<double>(std::fabs(g)));
    }
  std::printf("a batch of %lld windows, %lld on process 0 (its share %.3f); %s gradients. Their largest difference from\n"
              "the gradient one process computes of the whole batch: %.2g (the largest gradient: %.3g)\n\n", static_cast<long long>(s.flags.batch),
              static_cast<long long>(mine.rows.x.size(0)), mine.share, nn::with_commas(model->num_parameters()).c_str(), difference, largest);
  return difference;
}

// ---- 2. training: N processes against one ----
struct Trained {
  std::vector<double> losses;  // the whole batch's training loss at every step
  plot::Series val{"validation"};
  double step_seconds = 0;
};

// flags.steps steps on the processes of `comm`, each on its shard; rank 0 of comm tracks (when it
// is the run's rank 0) and writes `csv`.
Trained train(const Setup& s, models::GPT& model, const dist::Communicator& comm, const std::string& name, const std::string& csv) {
  optim::AdamW adamw = adamw_for(model, s);
  const optim::Schedule schedule = schedule_for(s);
  Batches data = batches(s);
  const dist::Shard shard = dist::shard_of(s.flags.batch, comm.rank(), comm.size());
  std::optional<harness::Tracker> tracker;
  if (s.run)
    tracker.emplace(*s.run, harness::TrackerOptions{.steps = s.flags.steps, .eval_every = s.training.eval_every, .csv = csv,
                                                    .items_per_step = s.flags.batch * s.config.block_size, .name = name});
  Trained out;
  // Every process restores the same model, AdamW, batches and losses: rank 0 through its Tracker, the others from its file.
  int64_t processes = comm.size();  // a checkpoint's, after resuming: its shares of a batch are those of this many
  const harness::LoopState state{model, adamw, {&data.gen},
                                 harness::carried_together({harness::carried_values("losses", out.losses),
                                                            harness::carried_integer("processes", processes)})};
  const int64_t first = tracker ? tracker->resume(state) : harness::resume_without_run(s.flags.resume, kLesson, csv, state);
  if (processes != comm.size())
    fail(kLesson, "--resume: ", name, " ran on ", processes, " processes, not on the ", comm.size(), " started now; resume it on ",
         processes, ": ./ladder lesson 16 --procs ", processes, " --resume ", s.flags.resume);
  for (int64_t step = first; step <= s.flags.steps; ++step) {
    adamw.set_lr(schedule(step - 1));
    const dist::BatchShare mine = dist::share_of(data.next(), shard);  // its targets' share: with --lines, not its rows'
    optim::StepResult result = optim::train_step(model, adamw, mine.rows, s.training.clip, [&] { dist::all_reduce_gradients(model, comm, mine.share); });
    result.loss = comm.sum(mine.share * result.loss);  // the whole batch's loss, the same on every process
    out.losses.push_back(result.loss);
    harness::stop_together(comm, s.run, [&] { if (tracker) tracker->step(step, result, adamw.lr()); });
    if (step % s.training.eval_every != 0 && step != s.flags.steps) continue;  // evaluation_due's rule, on every process
    // each process scores its share of the validation text; the sums over all of them give the whole's mean
    const models::SummedLoss scored = models::validation_loss(model, s.corpus, {comm.rank(), comm.size()});
    const double val_loss = comm.sum(scored.total) / comm.sum(static_cast<double>(scored.targets));
    if (tracker) tracker->evaluated(step, {val_loss});
  }
  harness::stop_together(comm, s.run, [&] { if (tracker) tracker->finish(); });
  if (!tracker) return out;
  out.val = tracker->curve("val_loss");
  out.step_seconds = tracker->mean_step_seconds();
  return out;
}

// The largest |a - b| over the first `steps` steps; a step where both runs have diverged (NaN) counts as equal.
double largest_difference(const std::vector<double>& a, const std::vector<double>& b, size_t steps) {
  double largest = 0;
  for (size_t i = 0; i < std::min({steps, a.size(), b.size()}); ++i)
    if (!std::isnan(a[i]) || !std::isnan(b[i])) largest = std::isnan(a[i] - b[i]) ? INFINITY : std::max(largest, std::fabs(a[i] - b[i]));
  return largest;
}

// Part 2: the N processes, then rank 0 alone with the whole batch while the others wait.
Trained train_both(const Setup& s, models::GPT& model, nlohmann::ordered_json& metrics) {
  const dist::Communicator& all = *s.processes;
  std::printf("== 2. training: %d processes of %lld windows against one process of %lld ==\n", all.size(),
              static_cast<long long>(s.flags.batch / all.size()), static_cast<long long>(s.flags.batch));
  const Trained shared = train(s, model, all, cat(all.size(), " processes"), "metrics.csv");
  const dist::Communicator alone = all.first(1);
  Trained one;
  harness::stop_together(all, s.run, [&] { if (all.rank() == 0) one = train(s, *same_model(s, alone), alone, "1 process", "metrics_one_process.csv"); });
  if (!s.run) return shared;
  const size_t steps = shared.losses.size();
  const double first10 = largest_difference(shared.losses, one.losses, 10), every = largest_difference(shared.losses, one.losses, steps);
  std::printf("validation loss %.4f on %d processes, %.4f on one; %.1f and %.1f ms per step\n", shared.val.y.back(), all.size(),
              one.val.y.back(), 1e3 * shared.step_seconds, 1e3 * one.step_seconds);
  std::printf("largest difference of the training losses: %.2g over the first 10 steps, %.2g over all %zu\n", first10, every, steps);
  harness::CsvWriter csv(s.run->file("losses.csv"), {"step", "loss_processes", "loss_one_process"});
  for (size_t i = 0; i < steps; ++i) csv.row({static_cast<double>(i + 1), shared.losses[i], one.losses[i]});
  s.run->wrote(plot::save_line_chart(s.run->path("loss"), {"Training loss: N processes and one, the same batches", "step", "training loss (log scale)",
                                                               {lessons::per_step(cat(all.size(), " processes"), shared.losses),
                                                                lessons::per_step("1 process, the whole batch", one.losses)}, true}));
  metrics.update({{"processes", all.size()}, {"val_loss", shared.val.y.back()}, {"val_loss_one_process", one.val.y.back()},
                  {"loss_difference_10_steps", first10}, {"loss_difference_all_steps", every}});
  return shared;
}

// ---- 3. time per step against the number of processes ----
// The batch shared by the first n processes, n = 1, 2, 4, ... and all of them, timed a few steps each.
void step_times(const Setup& s, int64_t model_floats, nlohmann::ordered_json& metrics) {
  const dist::Communicator& all = *s.processes;
  std::printf("\n== 3. time per step against the number of processes, the batch of %lld shared ==\n", static_cast<long long>(s.flags.batch));
  std::vector<int> counts;
  for (int n = 1; n < all.size(); n *= 2) counts.push_back(n);
  counts.push_back(all.size());
  std::vector<lessons::StepTime> times;
  for (const int n : counts) {
    const dist::Communicator group = all.first(n);
    times.emplace_back();
    if (all.rank() < n) {
      auto model = same_model(s, group);
      optim::AdamW adamw = adamw_for(*model, s);
      Batches data = batches(s);
      const dist::Shard shard = dist::shard_of(s.flags.batch, group.rank(), n);
      times.back() = lessons::time_steps(
          group, s.flags.quick ? 3 : 20,
          [&](const std::function<void()>& exchange) { optim::train_step(*model, adamw, dist::take_shard(data.next(), shard), 1.0f, exchange); },
          [&] { dist::all_reduce_gradients(*model, group, shard.share); });
    }
    all.barrier();  // the processes left out wait here
  }
  lessons::report_step_times(s.run, counts, times, s.flags.batch, metrics);
  if (all.size() > 1) lessons::report_all_reduce(s.run, all, model_floats, s.flags.quick ? 1 << 18 : 1 << 22, metrics);
}

// ---- 4. what breaks ----
enum class Exchange { average, sum, none };  // sum: every gradient at full weight, the forgotten 1/N
struct ShortRun {
  std::vector<double> losses, spreads;  // per step: the batch's loss, the parameters' spread across processes
};

ShortRun short_run(const Setup& s, models::GPT& model, optim::Optimizer& optimizer, const optim::Schedule& schedule,
                   Exchange exchange, float clip) {
  const dist::Communicator& all = *s.processes;
  Batches data = batches(s);
  const dist::Shard shard = dist::shard_of(s.flags.batch, all.rank(), all.size());
  dist::BatchShare mine;  // this step's rows and their share of the loss
  std::function<void()> exchanged;
  if (exchange != Exchange::none) exchanged = [&] { dist::all_reduce_gradients(model, all, exchange == Exchange::sum ? 1.0f : mine.share); };
  ShortRun out;
  for (int64_t step = 1; step <= s.short_steps; ++step) {
    optimizer.set_lr(schedule(step - 1));
    mine = dist::share_of(data.next(), shard);
    out.losses.push_back(all.sum(mine.share * optim::train_step(model, optimizer, mine.rows, clip, exchanged).loss));
    out.spreads.push_back(dist::parameter_spread(model, all));
  }
  return out;
}

// Lesson 11's AdamW and schedule, clipped at --clip, as in part 2: only the exchange differs.
ShortRun adamw_run(const Setup& s, models::GPT& model, Exchange exchange) {
  optim::AdamW adamw = adamw_for(model, s);
  return short_run(s, model, adamw, schedule_for(s), exchange, s.training.clip);
}

void what_breaks(const Setup& s, const Trained& averaged, float trained_spread, nlohmann::ordered_json& metrics) {
  const dist::Communicator& all = *s.processes;
  const int64_t K = s.short_steps;
  std::printf("\n== 4. what breaks, %lld steps each ==\n", static_cast<long long>(K));
  std::printf("(a) summing the gradients instead of averaging them (a share of 1 instead of rows / batch):\n");
  const float sgd_lr = 0.5f;  // stable for the averaged gradient over these steps; twice it is not
  const std::tuple<const char*, float, Exchange> sgd_runs[] = {{"SGD, averaged", sgd_lr, Exchange::average}, {"SGD, summed", sgd_lr, Exchange::sum},
                                                               {"SGD, averaged, N times the lr", sgd_lr * all.size(), Exchange::average}};
  std::vector<ShortRun> sgd;
  std::vector<plot::Series> curves;
  for (const auto& [name, lr, exchange] : sgd_runs) {
    auto model = same_model(s, all);
    optim::SGD optimizer(model->named_parameters(), {.lr = lr});
    sgd.push_back(short_run(s, *model, optimizer, optim::constant_lr(lr), exchange, 0));
    const std::vector<double>& loss = sgd.back().losses;
    curves.push_back(lessons::per_step(name, loss));
    const auto diverged = std::find_if(loss.begin(), loss.end(), [](double l) { return !std::isfinite(l); });
    std::printf("  %-30s lr %.2f: loss %.4f at step 1, ", name, lr, loss.front());
    if (diverged == loss.end()) std::printf("%.4f at step %lld\n", loss.back(), static_cast<long long>(K));
    else std::printf("diverged at step %lld\n", static_cast<long long>(diverged - loss.begin() + 1));
  }
  const double sgd_sum_vs_lr = largest_difference(sgd[1].losses, sgd[2].losses, K);
  std::printf("  summed against averaged at %d times the lr: largest loss difference %.2g\n", all.size(), sgd_sum_vs_lr);
  const ShortRun adam_summed = adamw_run(s, *same_model(s, all), Exchange::sum);
  const double adam_difference = largest_difference(adam_summed.losses, averaged.losses, K);
  std::printf("  AdamW (clipped at %g), summed, against part 2's averaged run: largest loss difference %.2g over %lld steps\n",
              s.training.clip, adam_difference, static_cast<long long>(K));

  std::printf("(b) models that are not one model: the parameters' spread (largest difference across processes)\n");
  std::printf("  part 2's models after %lld steps (rank 0's weights broadcast, every gradient averaged): %.3g\n",
              static_cast<long long>(s.flags.steps), trained_spread);
  const ShortRun seeds = adamw_run(s, *same_model(s, all, all.rank(), /*broadcast=*/false), Exchange::average);  // seed + rank
  const ShortRun apart = adamw_run(s, *same_model(s, all), Exchange::none);
  std::printf("  a seed per process, no broadcast:     spread %.3g after step 1, %.3g after step %lld\n", seeds.spreads.front(),
              seeds.spreads.back(), static_cast<long long>(K));
  std::printf("  one start, no all-reduce (each its own gradient): spread %.3g after step 1, %.3g after step %lld\n",
              apart.spreads.front(), apart.spreads.back(), static_cast<long long>(K));
  metrics.update({{"sgd_summed_vs_lr_times_n", sgd_sum_vs_lr}, {"adamw_summed_vs_averaged", adam_difference},
                  {"spread_after_training", trained_spread}, {"spread_own_seeds", seeds.spreads.back()},
                  {"spread_no_all_reduce", apart.spreads.back()}});
  if (!s.run) return;
  s.run->wrote(plot::save_line_chart(s.run->path("summed"), {"Summing instead of averaging, plain SGD", "step", "training loss (log scale)", curves, true}));
  if (all.size() == 1) return;  // one process has no spread: all zeros, nothing on a log scale
  s.run->wrote(plot::save_line_chart(s.run->path("spread"), {"Parameters' spread across processes", "step", "largest difference (log scale)",
                                                                 {lessons::per_step("a seed per process, no broadcast", seeds.spreads),
                                                                  lessons::per_step("no all-reduce", apart.spreads)}, true}));
}

}  // namespace

int main(int argc, char** argv) {
  dist::World world(argc, argv);
  world.only_rank_0_prints();
  return world.end(harness::lesson_main([&] {
    harness::LessonCli cli(kLesson, "Lesson 16: lesson 11's GPT trained on several processes over MPI, data-parallel.",
                           {.steps = 400, .lr = 1e-3f, .batch = 24});
    harness::TextFlags text;
    cli.text_options(text, "/usr/share/common-licenses", /*default_lines=*/false);
    models::GPTConfig config{.block_size = 64, .n_layer = 4, .n_head = 4, .n_embd = 128, .dropout = 0};
    lessons::GPTTraining training{.schedule = {.warmup = 40}, .eval_every = 50};
    int procs = 2;
    cli.option("--procs", procs, "processes: ./ladder lesson 16 starts this many with mpirun; under mpirun -np N, N must match", {1, 1024});
    cli.option("--layers", config.n_layer, "Transformer blocks", {1, 48});
    cli.option("--heads", config.n_head, "attention heads per block, dividing --embd", {1, 64});
    cli.option("--embd", config.n_embd, "width of the residual stream", {1, 4096});
    lessons::heads_divide_embd(cli, config);
    cli.option("--context", config.block_size, "context length: the positions the model learns", {1, 4096});
    training.add_to(cli);
    cli.parse(argc, argv);
    const dist::Communicator& processes = world.processes();
    if (cli.given("--procs") && procs != processes.size())
      fail(kLesson, "--procs ", procs, " but mpirun started ", processes.size(), " processes; give mpirun -np ", procs, " or leave --procs out");
    dist::shard_of(cli.common.batch, 0, processes.size());  // refuses more processes than windows in a batch
    // Processes that share a machine share its cores: one thread each on 2 cores and 2 processes.
    const int here = world.processes_on_this_machine();
    if (!cli.given("--threads")) set_num_threads(std::max(1, omp_get_num_procs() / here));
    if (cli.common.quick) {  // shorter than lesson 11's --quick: the smoke test starts two processes several times
      cli.common.steps = std::min<int64_t>(cli.common.steps, 40);
      training.schedule.warmup = std::min<int64_t>(training.schedule.warmup, 5);
      training.eval_every = std::min<int64_t>(training.eval_every, 10);
    }
    training.schedule.check_after_quick(kLesson, cli);
    data::CharCorpus corpus = lessons::load_char_corpus(kLesson, cli.common, text, config.block_size, cli.given("--context"));
    config.vocab_size = corpus.tokenizer.vocab_size();
    harness::check_memory(kLesson, lessons::data_parallel_memory(config, cli.common.batch, processes.size(), lessons::gpt_flags_text(config)));
    const harness::StopSignals signals;  // on every process: a signal stops them all at one step (stop_together), none killed
    std::optional<harness::Run> run;
    if (processes.rank() == 0) run.emplace(cli);
    const Setup s{cli.common, training, cli.common.quick ? 10 : 40, config, std::move(corpus), &processes, run ? &*run : nullptr};
    std::printf("%d processes, %d of them on this machine, %d thread%s each; data: %s, %s\n\n", processes.size(), here, num_threads(),
                num_threads() == 1 ? "" : "s", s.corpus.source.c_str(), lessons::training_extent(s.corpus).c_str());

    nlohmann::ordered_json metrics;
    metrics["gradient_max_difference"] = gradient_check(s);
    auto model = same_model(s, processes);
    const Trained trained = train_both(s, *model, metrics);
    const float spread = dist::parameter_spread(*model, processes);
    step_times(s, model->num_parameters(), metrics);
    what_breaks(s, trained, spread, metrics);
    harness::MetricNotes notes = {{"gradient_max_difference", "part 1: the averaged gradient against one process's of the whole batch"},
                                   {"processes", "the processes mpirun started"},
                                   {"val_loss", "part 2: the model trained on every process, nats per character"},
                                   {"val_loss_one_process", "part 2: one process with the whole batch"},
                                   {"loss_difference_10_steps", "part 2: largest training-loss difference, N processes against one"},
                                   {"loss_difference_all_steps", "part 2: the same over every step"},
                                   {"all_reduce_share", "part 3: the all-reduce's part of a step on every process"},
                                   {"ring_gb_per_s", "part 3: our ring on the model's gradient, bytes each process sends per second"},
                                   {"sgd_summed_vs_lr_times_n", "part 4: SGD summed against averaged at N times the lr (loss)"},
                                   {"adamw_summed_vs_averaged", "part 4: AdamW summed against part 2's averaged run (loss)"},
                                   {"spread_after_training", "part 4: the parameters' spread across processes after part 2"},
                                   {"spread_own_seeds", "part 4: the spread with a seed per process and no broadcast"},
                                   {"spread_no_all_reduce", "part 4: the spread when each process steps its own gradient"}};
    for (const auto& [name, value] : metrics.items())
      if (name.starts_with("step_ms_")) notes[name] = cat("part 3: milliseconds per step on ", name.substr(8), " of the processes");
    if (run) run->finish(metrics, notes, "docs/16_data_parallel.md; then --procs 4: four processes on two cores, and what the waiting does");
  }));
}
