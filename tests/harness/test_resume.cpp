// Runs stopped and resumed: a run stopped after a checkpoint (--stop-after) and finished with
// --resume ends with every figure and weight of the run never interrupted (at one thread); flags
// that would change the run are refused, naming them; the kit's pieces (the flags a resumed run
// takes, truncated BPTT's carried state, the exact values a loop carries) on their own.
#include "harness/cli_fixtures.h"
#include "lessons/lesson_checks.h"
#include "file_helpers.h"

#include "core/error.h"
#include "core/ops.h"
#include "io/safetensors.h"
#include "harness/resume.h"
#include "lessons/char_rnn/truncated_bptt.h"
#include "models/char_rnn.h"
#include "harness/tracker.h"
#include "lessons/translation/task_flags.h"
#include "lessons/translation/training.h"
#include "lessons/14_transformer_vq/codebook.h"
#include "nn/dropout.h"
#include "nn/linear.h"
#include "nn/sequential.h"
#include "optim/sgd.h"

namespace fs = std::filesystem;
using namespace ladder;
using namespace ladder::testing;

namespace {

// Every column of every CSV the run wrote, but the rate (tokens per second: a timing).
std::map<std::string, std::vector<std::map<std::string, std::string>>> csv_figures(const fs::path& folder) {
  std::map<std::string, std::vector<std::map<std::string, std::string>>> out;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".csv" || entry.path().filename() == "generation_speed.csv") continue;
    auto table = rows(entry.path());
    for (auto& row : table) row.erase("tokens_per_s");
    out[entry.path().filename().string()] = table;
  }
  return out;
}

// The run stopped after `stop_after` checkpoints and resumed, against the run never stopped: the same
// CSV figures, the same metrics (timings aside), the same weights to the bit.
void check_resumed_run_is_the_same(const std::string& lesson, const std::string& flags, int stop_after,
                                   const std::vector<std::string>& timings, const std::string& resumed_line) {
  TempDir whole(lesson + "_whole"), parts(lesson + "_parts");
  const Ran uninterrupted = run_lesson(lesson, flags + " --out " + whole.path.string());
  REQUIRE_MESSAGE(uninterrupted.status == 0, uninterrupted.output);
  const Ran stopped = run_lesson(lesson, flags + " --out " + parts.path.string() + " --stop-after " + std::to_string(stop_after));
  INFO(stopped.output);
  REQUIRE(stopped.status == 0);
  CHECK(stopped.output.find("continue the run with --resume " + parts.path.string()) != std::string::npos);
  CHECK(fs::exists(parts.path / "resume" / "flags.json"));
  CHECK(summary_of(parts.path)["status"] == "interrupted");  // not finished: the checkpoint is kept
  const Ran resumed = run_lesson(lesson, "--resume " + parts.path.string());  // the flags come from the run
  INFO(resumed.output);
  REQUIRE(resumed.status == 0);
  CHECK(resumed.output.find(resumed_line) != std::string::npos);
  CHECK_FALSE(fs::exists(parts.path / "resume"));  // a finished run keeps no checkpoint

  CHECK(csv_figures(whole.path) == csv_figures(parts.path));
  CHECK(csv_figures(whole.path).size() >= 1);
  nlohmann::json a = summary_of(whole.path)["metrics"], b = summary_of(parts.path)["metrics"];
  for (const std::string& timing : timings) a.erase(timing), b.erase(timing);
  CHECK(a == b);
  CHECK(a.size() >= 5);
  const io::TensorFile x = io::load_safetensors((whole.path / "model.safetensors").string());
  const io::TensorFile y = io::load_safetensors((parts.path / "model.safetensors").string());
  REQUIRE(x.tensors.size() == y.tensors.size());
  for (const auto& [name, tensor] : x.tensors) {
    REQUIRE(y.tensors.count(name));
    CHECK_MESSAGE(tensor.to_vector() == y.tensors.at(name).to_vector(), name, " differs");
  }
}

// A small lesson 11 for the refusals, which need a run to refuse and not its figures: one layer,
// 20 steps, a checkpoint every 5.
const std::string kSmallGpt = "--quick --threads 1 --steps 20 --eval-every 5 --warmup 2 --layers 1 --embd 32 --heads 2 --context 32";

}  // namespace

TEST_CASE("lesson 11: stopped after its third checkpoint and resumed, it ends as the run never stopped, to the bit") {
  check_resumed_run_is_the_same("11_gpt", "--quick --threads 1", 3, {"cached_tokens_per_s", "uncached_tokens_per_s"},
                                "resumed after step 30");
}

TEST_CASE("lesson 06: stopped inside its second model, resumed, the first restored whole and the rest trained, as never stopped") {
  // 20 evaluations per model at --quick: the 25th checkpoint is the GRU's 5th, at step 15.
  check_resumed_run_is_the_same("06_gated_rnn", "--quick --threads 1", 25, {}, "(GRU: resumed after step 15");
}

TEST_CASE("--resume refuses flags that change the run, a folder without a checkpoint and another --out, in one line") {
  TempDir run("resume_refusals");
  const std::string folder = run.path.string();
  REQUIRE(run_lesson("11_gpt", kSmallGpt + " --out " + folder + " --stop-after 1").status == 0);
  check_refused("11_gpt", "--resume " + folder + " --layers 2 --lr 0.002",
                {"--resume", folder, "--layers 2 (the run: 1)", "--lr 0.002 (the run: 0.001)", "leave these flags out"});
  check_refused("11_gpt", "--resume " + folder + " --stream --attention linear", {"--attention linear (the run: full)"});
  check_refused("11_gpt", "--resume " + folder + " --out " + folder + "_elsewhere", {"--out", "_elsewhere", "leave --out out"});
  TempDir empty("resume_empty");
  fs::create_directories(empty.path);
  check_refused("06_gated_rnn", "--resume " + empty.path.string(), {"--resume", empty.path.string(), "no checkpoint to resume from"});
  // The refusals left the run as it was: it still resumes, --threads may change.
  const Ran resumed = run_lesson("11_gpt", "--resume " + folder + " --threads 2");
  INFO(resumed.output);
  CHECK(resumed.status == 0);
  CHECK(resumed.output.find("resumed after step 5") != std::string::npos);
}

TEST_CASE("--resume refuses another lesson's run, flags edited after the stop (with the checkpoint's record of them removed too) and a checkpoint whose step no run reaches, by name") {
  TempDir run("resume_guards");
  const std::string folder = run.path.string();
  REQUIRE(run_lesson("11_gpt", kSmallGpt + " --out " + folder + " --stop-after 1").status == 0);
  check_refused("04_cnn", "--resume " + folder, {"is a run of lesson 11_gpt, not of 04_cnn", "./ladder lesson 11 --resume"});
  CHECK(fs::exists(run.path / "resume" / "metrics.safetensors"));  // another lesson's refusal touched nothing

  const fs::path flags = run.path / "resume" / "flags.json";
  const std::string recorded = read_text(flags);
  nlohmann::json edited = nlohmann::json::parse(recorded);
  CHECK(edited["lesson"] == "11_gpt");
  edited["flags"]["lr"] = 0.003;  // as if by hand, after the stop
  std::ofstream(flags) << edited.dump(2);
  check_refused("11_gpt", "--resume " + folder, {"saved with other flags", "flags.json", "edited"});
  make_fifo(flags.string());  // a pipe would block a plain read forever
  check_refused("11_gpt", "--resume " + folder, {"flags.json", "is a named pipe (FIFO), not a regular file"});
  fs::remove(flags);
  fs::create_directory(flags);
  check_refused("11_gpt", "--resume " + folder, {"flags.json", "is a folder, not a regular file"});
  fs::remove(flags);
  std::ofstream(flags) << recorded;

  const fs::path checkpoint = run.path / "resume" / "metrics.safetensors";
  const io::TensorFile saved = io::load_safetensors(checkpoint.string());
  // Flags edited, and the checkpoint's record of them taken out (its checksum valid): every
  // checkpoint a run saves has that record, so one without it is no run's.
  std::map<std::string, std::string> unrecorded = saved.metadata;
  unrecorded.erase("flags_crc32");
  io::save_safetensors(checkpoint.string(), saved.tensors, unrecorded);
  std::ofstream(flags) << edited.dump(2);
  check_refused("11_gpt", "--resume " + folder, {checkpoint.string(), "has no 'flags_crc32'", "not a checkpoint of a training loop"});
  std::ofstream(flags) << recorded;
  for (const char* step : {"0", "1e5", "-3", "99999999"}) {
    std::map<std::string, std::string> metadata = saved.metadata;
    metadata["step"] = step;  // a crafted checkpoint, its checksum valid
    io::save_safetensors(checkpoint.string(), saved.tensors, metadata);
    check_refused("11_gpt", "--resume " + folder, {std::string(step) == "99999999" ? "no checkpoint of this run" : "is not a step"});
  }
  // A step the loop reaches, but not the checkpoint's own evaluation: its records end later.
  std::map<std::string, std::string> earlier = saved.metadata;
  earlier["step"] = std::to_string(std::stoll(saved.metadata.at("step")) - 1);
  io::save_safetensors(checkpoint.string(), saved.tensors, earlier);
  check_refused("11_gpt", "--resume " + folder, {"says step " + earlier["step"], "but its last evaluation is at step",
                                                  "no checkpoint of this run"});
  std::map<std::string, std::string> garbled = saved.metadata;
  garbled["records"] = R"({"rows": [["x"]]})";
  io::save_safetensors(checkpoint.string(), saved.tensors, garbled);
  check_refused("11_gpt", "--resume " + folder, {"its records of the evaluations are not what a run writes", "was the checkpoint changed"});
  io::save_safetensors(checkpoint.string(), saved.tensors, saved.metadata);
  const Ran resumed = run_lesson("11_gpt", "--resume " + folder);
  INFO(resumed.output);
  CHECK(resumed.status == 0);
}

TEST_CASE("a resumed run takes the flags the run recorded where they differ from the defaults, the command line's first") {
  const nlohmann::json defaults = {{"steps", 1000}, {"lr", 0.001}, {"lines", false}, {"quick", false}, {"data", "a.txt"},
                                   {"val", ""}, {"out", "runs/x"}, {"threads", 0}, {"resume", ""}, {"stop-after", 0}};
  nlohmann::json recorded = defaults;
  recorded["lr"] = 0.003, recorded["lines"] = true, recorded["quick"] = true, recorded["threads"] = 1;
  recorded["out"] = "elsewhere", recorded["stop-after"] = 2, recorded["val"] = "v.txt";
  const std::vector<std::string> args = harness::arguments_for(recorded, defaults, {"resume", "val"});
  CHECK(args == std::vector<std::string>{"--lines", "--lr", "0.003", "--quick", "--threads", "1"});
  nlohmann::json now = recorded;
  now["threads"] = 2, now["out"] = "o", now["stop-after"] = 0, now["resume"] = "r";  // free to change
  CHECK(harness::changed_flags(recorded, now).empty());
  now["lr"] = 0.01, now["new"] = 3;
  CHECK(harness::changed_flags(recorded, now) ==
        std::vector<std::string>{"--lr 0.01 (the run: 0.003)", "--new 3 (the run had no such flag)"});
}

TEST_CASE("truncated BPTT's carried state and stream position go into a checkpoint and come back") {
  Generator init(1);
  models::CharRNN model(10, 4, 6, nn::CellKind::lstm, {}, init);
  std::vector<int> ids(200);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i * 7 % 10);
  data::ContiguousBatcher windows(ids, 2, 8);
  for (int i = 0; i < 3; ++i) model.loss(windows.next());
  const harness::Carried carried = lessons::bptt_carried(model, windows);
  const std::map<std::string, Tensor> saved = carried.save();
  CHECK(saved.at("position").item() == 3);
  const auto [h, c] = model.carried_state();
  REQUIRE(h.defined());
  REQUIRE(c.defined());
  const float next_loss = model.loss(windows.next()).item();  // from the carried state, window 3

  models::CharRNN other(10, 4, 6, nn::CellKind::lstm, {}, init);
  other.load_state_dict(model.state_dict());
  data::ContiguousBatcher fresh(ids, 2, 8);
  model.reset_state();
  const harness::Carried put_back = lessons::bptt_carried(other, fresh);
  put_back.restore(saved);
  CHECK(fresh.position() == 3);
  CHECK(other.loss(fresh.next()).item() == next_loss);
  CHECK_THROWS_WITH_AS(fresh.seek(windows.windows()), doctest::Contains("out of range"), Error);
}

TEST_CASE("what a loop carries comes back bit for bit: doubles, integers past 2^24, the codebook history, empty too") {
  const std::vector<double> values = {0.1, -1.0 / 3.0, 16777217.0, 1e300, 0.0};  // 2^24 + 1: a float32 would round it
  const Tensor pieces = harness::exact_tensor(values);
  CHECK(pieces.shape() == Shape{5, 4});
  CHECK(harness::exact_values(pieces) == values);
  CHECK_THROWS_WITH_AS(harness::exact_values(zeros({2, 3})), doctest::Contains("(n, 4) pieces"), Error);

  int64_t peak = (int64_t{1} << 40) + 3, back = 0;
  const std::map<std::string, Tensor> saved = harness::carried_integer("peak_bytes", peak).save();
  harness::carried_integer("peak_bytes", back).restore(saved);
  CHECK(back == peak);
  CHECK_THROWS_WITH_AS(harness::carried_integer("other", back).restore(saved), doctest::Contains("no 'other'"), Error);
  std::vector<double> losses = values, losses_back = {7.0};
  harness::carried_values("losses", losses_back).restore(harness::carried_values("losses", losses).save());
  CHECK(losses_back == values);
  CHECK_THROWS_WITH_AS(harness::carried_values("other", losses_back).restore(saved), doctest::Contains("no 'other'"), Error);

  lessons::CodebookHistory history{.steps = {10, 20}, .layers = {{{1.5, 2.25, 0.1}, {3, 4, 0.2}}, {{5, 6, 0.3}, {7, 8, 0.4}}}};
  lessons::CodebookHistory restored{.steps = {99}, .layers = {{{9, 9, 9}}}};
  lessons::codebook_carried(restored).restore(lessons::codebook_carried(history).save());
  CHECK(restored.steps == history.steps);
  REQUIRE(restored.layers.size() == 2);
  CHECK(restored.layers[1][1].perplexity == 8);
  CHECK(restored.layers[0][0].error == 0.1);
  // An empty history (a loop before the VQ model's has recorded none) goes through a checkpoint file as a
  // zero-element tensor and comes back empty.
  TempDir out("resume_codebook");
  fs::create_directories(out.path);
  const std::string path = (out.path / "loop.safetensors").string();
  Generator init(1);
  nn::Linear model(3, 2, {}, init);
  optim::SGD sgd(model.named_parameters(), {.lr = 0.1f});
  lessons::CodebookHistory none;
  harness::save_loop_checkpoint(path, "99_kit", {model, sgd, {}, lessons::codebook_carried(none)}, 1, nlohmann::json::object());
  CHECK(io::load_safetensors(path).tensors.at("carried.codebook.steps").shape() == Shape{0, 4});
  harness::LoopState state{model, sgd, {}, lessons::codebook_carried(restored)};
  harness::load_loop_checkpoint(path, "99_kit", state);
  CHECK(restored.steps.empty());
  CHECK(restored.layers.empty());
}

TEST_CASE("the best weights a pairs file's loop keeps go into its checkpoint and come back, with their step and loss") {
  data::TranslationTask task =
      lessons::load_number_task({.number_steps = 1}, {.quick = true}, "test").value();  // any task: the kept weights are the model's
  task.keep_best = true;
  Generator init(1);
  nn::Linear model(3, 2, {}, init);
  const float at_step_4 = model.weight.data()[0];
  lessons::BestWeights best(task);
  best.offer(model, 4, 0.75);
  const std::map<std::string, Tensor> saved = best.carried().save();
  model.weight.data()[0] += 1;  // training moves on

  lessons::BestWeights resumed(task);
  resumed.carried().restore(saved);
  resumed.offer(model, 6, 0.80);  // worse than step 4's: not taken
  resumed.restore(model);
  CHECK(model.weight.data()[0] == at_step_4);
  CHECK_THROWS_WITH_AS(resumed.carried().restore({}), doctest::Contains("no best weights"), Error);
}

TEST_CASE("the tracker rewrites its loop's checkpoint at each evaluation, which a process without a Run finds, keeps none when told not to, and a finished run none at all") {
  TempDir out("resume_kit");
  ParsedCli parsed({"--out", out.path.string(), "--steps", "4"});
  harness::Run run(parsed.cli);
  Generator init(1);
  const auto model = nn::mlp({2, 1}, {}, init);
  optim::SGD sgd(model->named_parameters(), {.lr = 0.1f});
  const auto train = [&](harness::Tracker& tracker) {
    for (int64_t step = tracker.resume({*model, sgd}); step <= 4; ++step) {
      tracker.step(step, {.loss = 1.0 / static_cast<double>(step)}, 0.1);
      if (tracker.evaluation_due(step)) tracker.evaluated(step, {2.0});
    }
  };
  harness::Tracker kept(run, {.steps = 4, .eval_every = 2, .progress = false});
  train(kept);
  const fs::path checkpoint = out.path / "resume" / "metrics.safetensors";
  REQUIRE(fs::exists(checkpoint));
  CHECK(fs::exists(out.path / "resume" / "flags.json"));
  CHECK(io::load_safetensors(checkpoint.string()).metadata.at("step") == "4");
  CHECK(io::load_safetensors(checkpoint.string()).tensors.count("model.0.weight") == 1);
  // A process without a Run (lesson 16's others) finds the same checkpoint by the loop's CSV.
  CHECK(harness::resume_without_run(out.path.string(), run.lesson(), "metrics.csv", {*model, sgd}) == 5);
  CHECK(harness::resume_without_run(out.path.string(), run.lesson(), "other.csv", {*model, sgd}) == 1);
  CHECK(harness::resume_without_run("", run.lesson(), "metrics.csv", {*model, sgd}) == 1);
  harness::Tracker skipped(run, {.steps = 4, .eval_every = 1, .csv = "", .name = "demo", .progress = false, .checkpoints = false});
  train(skipped);
  CHECK_FALSE(fs::exists(out.path / "resume" / "demo.safetensors"));
  harness::Tracker twin(run, {.steps = 4, .eval_every = 2, .csv = "", .name = "metrics", .progress = false});
  CHECK_THROWS_WITH_AS(twin.resume({*model, sgd}), doctest::Contains("two training loops keep their checkpoints as 'metrics'"), Error);
  run.finish({{"loss", 0.25}}, {}, "");
  CHECK_FALSE(fs::exists(out.path / "resume"));
}

TEST_CASE("a loop's checkpoint keeps the model's own generators: after resuming, dropout draws the masks it would have") {
  TempDir out("resume_dropout");
  fs::create_directories(out.path);
  Generator init(3);
  nn::Sequential model{std::make_shared<nn::Linear>(4, 8, nn::LinearOptions{}, init), std::make_shared<nn::Dropout>(0.5f, init),
                       std::make_shared<nn::Dropout>(0.5f, init)};
  REQUIRE(model.generators().size() == 2);  // each dropout layer's own
  optim::SGD sgd(model.named_parameters(), {.lr = 0.1f});
  const Tensor x = ones({3, 4});
  const auto values = [](const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.numel()); };
  model.forward(x);  // the masks have moved on from their seeds
  const std::string path = (out.path / "loop.safetensors").string();
  harness::save_loop_checkpoint(path, "99_kit", {model, sgd}, 1, nlohmann::json::object());
  const std::vector<float> masked = values(model.forward(x));  // what the uninterrupted run draws next
  model.forward(x);                                              // draws past it
  harness::LoopState state{model, sgd};
  harness::load_loop_checkpoint(path, "99_kit", state);
  CHECK(values(model.forward(x)) == masked);
  // A model with another number of generators than the checkpoint's is refused, naming both.
  nn::Sequential fewer{std::make_shared<nn::Linear>(4, 8, nn::LinearOptions{}, init), std::make_shared<nn::Dropout>(0.5f, init)};
  fewer.load_state_dict(model.state_dict());
  harness::LoopState other{fewer, sgd};
  CHECK_THROWS_WITH_AS(harness::load_loop_checkpoint(path, "99_kit", other), doctest::Contains("2 generators of the model, the model has 1"),
                       Error);
}
