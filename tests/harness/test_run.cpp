// The lesson kit keeps runs honest: a diverging run stopped and recorded with no weights saved, a
// checkpoint that names its lesson, one run per output folder, a final printout that is rounded,
// explained and points on, the summary's order, the tracker beside each training step (its
// means, rows, curves and evaluation cadence), and a failed run for a write the disk refuses or a
// plot PLplot cannot draw.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "harness/run.h"
#include "harness/csv_writer.h"
#include "harness/run_summary.h"
#include "harness/tracker.h"
#include "harness/cli_fixtures.h"
#include "lessons/lesson_checks.h"
#include "nn/linear.h"

namespace fs = std::filesystem;
using namespace ladder;
using namespace ladder::testing;

namespace {

// A process id that no process has: a child's, after it has exited and been reaped.
pid_t dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

// Holds run.lock in `folder` as a running lesson would: flock()ed, with this process's pid in it.
struct HeldLock {
  int fd;
  explicit HeldLock(const fs::path& folder) {
    fs::create_directories(folder);
    fd = open((folder / "run.lock").c_str(), O_RDWR | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(flock(fd, LOCK_EX | LOCK_NB) == 0);
    const std::string pid = std::to_string(getpid()) + "\n";
    REQUIRE(write(fd, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size()));
  }
  ~HeldLock() { close(fd); }
};

}  // namespace

TEST_CASE("a loss that is not finite, or a perplexity that overflows, stops the run") {
  CHECK(harness::divergence(2.5, harness::LossKind::plain).empty());
  CHECK(harness::divergence(700, harness::LossKind::cross_entropy).empty());  // exp(700) is still a double
  CHECK(harness::divergence(800, harness::LossKind::plain).empty());
  CHECK(harness::divergence(800, harness::LossKind::cross_entropy) ==
        "the loss is 800 nats, so large that its perplexity exp(loss) is infinite");
  CHECK(harness::divergence(-NAN, harness::LossKind::plain) == "the loss is nan");
  CHECK(harness::divergence(INFINITY, harness::LossKind::plain, "the CNN's loss") == "the CNN's loss is inf");

  TempDir out("kit_check_loss");
  ParsedCli parsed({"--out", out.path.string()});
  {
    harness::Run run(parsed.cli);
    run.check_loss(1, 2.3);
    run.check_loss(2, 1.9, harness::LossKind::cross_entropy);
    CHECK_THROWS_WITH_AS(run.check_loss(3, NAN), doctest::Contains("99_kit: training diverged at step 3: the loss is nan; try a smaller --lr (this run: 0.5)"),
                         harness::Diverged);
  }
  const nlohmann::json summary = summary_of(out.path);
  CHECK(summary["diverged"]["step"] == 3);
  CHECK(summary["diverged"]["loss"] == "nan");
  CHECK(summary["flags"]["lr"] == 0.5);
  CHECK(summary["metrics"].empty());
  CHECK_FALSE(fs::exists(out.path / "run.lock"));  // removed when the Run ended, by an exception too
}

TEST_CASE("a checkpoint names its lesson beside the metadata given; one of weights that are not finite is refused, and not written") {
  TempDir out("kit_checkpoint");
  ParsedCli parsed({"--out", out.path.string()});
  harness::Run run(parsed.cli);
  nn::Linear layer(2, 3);
  CHECK(run.save_checkpoint(layer, {{"canvas", "28"}}) == (out.path / "model.safetensors").string());
  const std::map<std::string, std::string> metadata = io::load_safetensors((out.path / "model.safetensors").string()).metadata;
  CHECK(metadata.at("lesson") == "99_kit");
  CHECK(metadata.at("canvas") == "28");
  fs::remove(out.path / "model.safetensors");
  run.check_loss(7, 0.25);
  layer.bias.data()[1] = NAN;
  CHECK_THROWS_WITH_AS(run.save_checkpoint(layer, {}),
                       doctest::Contains("training diverged at step 7: the last update left bias with a value of nan"), harness::Diverged);
  CHECK_FALSE(fs::exists(out.path / "model.safetensors"));
  CHECK(summary_of(out.path)["diverged"]["step"] == 7);
}

TEST_CASE("a lesson at --lr 1e30 stops with status 3, says where it diverged, and saves no weights") {
  for (const std::string lesson : {"00_autograd", "03_mlp", "04_cnn", "05_rnn", "06_gated_rnn", "08_attention_pooling", "11_gpt"}) {
    TempDir out("kit_diverge");
    const Ran ran = run_lesson(lesson, "--quick --threads 1 --lr 1e30 --out " + out.path.string());
    INFO(lesson, ":\n", ran.output);
    CHECK(ran.status == 3);
    CHECK(says_all(ran.output, {lesson, "diverged at step", "smaller --lr", "1e+30"}));
    CHECK(ran.output.find("no finite points to plot") == std::string::npos);  // what 00, 05 and 06 blamed before
    const nlohmann::json summary = summary_of(out.path);
    CHECK(summary["diverged"]["step"].get<int>() >= 1);
    CHECK(summary["diverged"].contains("loss"));
    CHECK_FALSE(fs::exists(out.path / "model.safetensors"));
    CHECK_FALSE(fs::exists(out.path / "run.lock"));
  }
  // Lesson 02 studies divergence (its exercise 1's rate): the linear regression's is reported, the other parts go on.
  TempDir out("kit_diverge02");
  const Ran ran = run_lesson("02_regression", "--quick --threads 1 --lr 1.2 --out " + out.path.string());
  INFO(ran.output);
  CHECK(ran.status == 0);
  CHECK(ran.output.find("gradient descent diverged: its MSE was inf at step") != std::string::npos);
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["linear_regression_diverged_at_step"].get<int>() > 1);
  CHECK(m["test_acc"].get<double>() > 0.9);  // softmax regression survives the rate
}

TEST_CASE("one run per output folder: a second is refused naming the first's pid; a stale lock is taken over") {
  TempDir out("kit_lock");
  {
    HeldLock held(out.path);
    const Ran ran = run_lesson("00_autograd", "--quick --threads 1 --out " + out.path.string());
    INFO(ran.output);
    CHECK(ran.status == 2);
    CHECK(says_all(ran.output, {"another run", "pid " + std::to_string(getpid()), out.path.string(), "another --out"}));
    CHECK(std::distance(fs::directory_iterator(out.path), fs::directory_iterator()) == 1);  // nothing but the lock
  }
  {  // in one process too: a second Run on the folder of a living one
    ParsedCli parsed({"--out", out.path.string()});
    harness::Run first(parsed.cli);
    const std::string refusal = "another run (pid " + std::to_string(getpid()) + ")";
    CHECK_THROWS_WITH_AS(harness::Run(parsed.cli), doctest::Contains(refusal.c_str()), Error);
  }
  CHECK_FALSE(fs::exists(out.path / "run.lock"));
  const pid_t gone = dead_pid();
  std::ofstream(out.path / "run.lock") << gone << "\n";  // left by a run that was killed
  const Ran ran = run_lesson("00_autograd", "--quick --threads 1 --out " + out.path.string());
  INFO(ran.output);
  CHECK(ran.status == 0);
  CHECK(says_all(ran.output, {"run.lock", "pid " + std::to_string(gone), "taken over"}));
  CHECK(fs::exists(out.path / "summary.json"));
  CHECK_FALSE(fs::exists(out.path / "run.lock"));
}

TEST_CASE("a new run clears the files an earlier summary lists only inside its folder: never through a link, never the lock") {
  TempDir out("kit_clear");
  TempDir elsewhere("kit_clear_elsewhere");
  fs::create_directories(out.path / "plots");
  fs::create_directories(elsewhere.path);
  for (const fs::path& file : {out.path / "loss.png", out.path / "plots" / "a.svg", elsewhere.path / "data.txt"})
    std::ofstream(file) << "kept?\n";
  fs::create_directory_symlink(elsewhere.path, out.path / "link");
  fs::create_symlink(elsewhere.path / "data.txt", out.path / "data_link.txt");
  const nlohmann::json files = {"loss.png", "plots/a.svg", "link/data.txt", "data_link.txt", "run.lock",
                                "../kit_clear_elsewhere/data.txt", (elsewhere.path / "data.txt").string()};
  std::ofstream(out.path / "summary.json") << nlohmann::json{{"status", "finished"}, {"files", files}}.dump();
  CHECK(harness::files_listed(out.path / "summary.json") == std::vector<fs::path>{"loss.png", "plots/a.svg"});

  ParsedCli parsed({"--out", out.path.string()});
  {
    harness::Run run(parsed.cli);
    CHECK(fs::exists(out.path / "run.lock"));  // listed, and still the new run's own
  }
  CHECK_FALSE(fs::exists(out.path / "loss.png"));
  CHECK_FALSE(fs::exists(out.path / "plots" / "a.svg"));
  CHECK(fs::exists(elsewhere.path / "data.txt"));  // reached through a folder link or a file link: left alone
  // The links themselves are gone (a run writes through none), what they pointed at stays.
  CHECK_FALSE(fs::exists(fs::symlink_status(out.path / "data_link.txt")));
  CHECK_FALSE(fs::exists(fs::symlink_status(out.path / "link")));
  CHECK(fs::is_directory(elsewhere.path));
}

TEST_CASE("the final printout: rounded figures under aligned names, each with its note; files; where to go next") {
  TempDir out("kit_finish");
  ParsedCli parsed({"--out", out.path.string()});
  harness::Run run(parsed.cli);
  const std::string file = run.file("metrics.csv");
  std::ofstream(file) << "step\n";
  const std::string printed = captured_stdout([&] {
    run.finish({{"val_loss", 1.702505554274454}, {"test_acc", 0.95}, {"gap", 3.5762786865234375e-07}, {"steps", 300},
                {"best", "GRU"}, {"reached", false}},
               {{"val_loss", "nats per character"}, {"test_acc", "softmax regression, 300 test points"}},
               "docs/99_kit.md, section 1; then exercise 2");
  });
  const std::string expected = "  val_loss  1.7025     nats per character\n"
                               "  test_acc  0.9500     softmax regression, 300 test points\n"
                               "  gap       3.576e-07\n"
                               "  steps     300\n"
                               "  best      GRU\n"
                               "  reached   false\n"
                               "files:\n  " + file + "\n  " + (out.path / "summary.json").string() + "\n"
                               "next: docs/99_kit.md, section 1; then exercise 2\n";
  CHECK(printed.find("== 99_kit done in ") == 1);
  CHECK(printed.substr(printed.find('\n', 1) + 1) == expected);
  CHECK(summary_of(out.path)["metrics"]["val_loss"] == 1.702505554274454);  // full precision in the file
  std::ifstream in(out.path / "summary.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"val_loss\"") < text.find("\"test_acc\""));  // in the order given
}

TEST_CASE("the tracker: the mean loss since the last evaluation, a CSV row and a curve point per evaluation, the last step evaluated") {
  TempDir out("kit_tracker");
  ParsedCli parsed({"--out", out.path.string()});
  harness::Run run(parsed.cli);
  harness::Tracker tracker(run, {.steps = 5, .eval_every = 2, .figures = {"val_loss"}, .unit = "ex", .items_per_step = 3,
                                 .loss_kind = harness::LossKind::plain, .name = "toy"});
  std::vector<int64_t> evaluated;
  const std::string printed = captured_stdout([&] {
    for (int64_t step = 1; step <= 5; ++step) {
      tracker.step(step, {.loss = static_cast<double>(step), .grad_norm = 0.5f * static_cast<float>(step)}, 0.1);
      if (!tracker.evaluation_due(step)) continue;
      evaluated.push_back(step);
      tracker.evaluated(step, {10.0 * static_cast<double>(step)});
    }
    tracker.finish();
  });
  CHECK(evaluated == std::vector<int64_t>{2, 4, 5});
  CHECK(printed.find("step 5/5 | loss 5") != std::string::npos);
  CHECK(tracker.train_loss() == 5);  // the last evaluation's mean: step 5 alone
  CHECK(tracker.last("val_loss") == 50);
  const plot::Series& train = tracker.curve("train_loss");
  CHECK(train.name == "toy");
  CHECK(train.x == std::vector<double>{2, 4, 5});
  CHECK(train.y == std::vector<double>{1.5, 3.5, 5});  // (1 + 2) / 2, (3 + 4) / 2, 5
  CHECK(tracker.curve("val_loss").y == std::vector<double>{20, 40, 50});
  const auto table = rows(out.path / "metrics.csv");
  REQUIRE(table.size() == 3);
  CHECK(table[1].at("step") == "4");
  CHECK(table[1].at("train_loss") == "3.5");
  CHECK(table[1].at("val_loss") == "40");
  CHECK(table[1].at("lr") == "0.1");
  CHECK(table[1].at("grad_norm") == "2");  // the evaluated step's
  CHECK(std::stod(table[1].at("examples_per_s")) > 0);
  CHECK_THROWS_WITH_AS(tracker.evaluated(5, {1, 2}), doctest::Contains("2 figures for the 1 named"), Error);
  CHECK_THROWS_WITH_AS(tracker.last("bleu"), doctest::Contains("no figure 'bleu' is tracked"), Error);
  CHECK_THROWS_WITH_AS(harness::Tracker(run, {.steps = 5, .eval_every = 0}), doctest::Contains("eval_every must be >= 1"), Error);
}

TEST_CASE("the tracker: without progress it prints nothing; a diverged loss stops the run unless the run shows divergence") {
  TempDir out("kit_tracker_quiet");
  ParsedCli parsed({"--out", out.path.string()});
  harness::Run run(parsed.cli);
  harness::Tracker quiet(run, {.steps = 2, .eval_every = 1, .figures = {}, .csv = "", .name = "MLP", .progress = false,
                               .stop_if_diverged = false});
  const std::string printed = captured_stdout([&] {
    quiet.step(1, {.loss = NAN}, 0.1);
    quiet.step(2, {.loss = 3}, 0.1);
    quiet.finish();
  });
  CHECK(printed.empty());
  CHECK_FALSE(fs::exists(out.path / "metrics.csv"));  // csv "": no file
  harness::Tracker stopping(run, {.steps = 2, .eval_every = 1, .csv = "", .name = "CNN", .progress = false});
  CHECK_THROWS_WITH_AS(stopping.step(1, {.loss = NAN}, 0.1), doctest::Contains("diverged at step 1: the CNN's loss is nan"),
                       harness::Diverged);
}

TEST_CASE("a summary keeps its metrics in the order reported, each with its note") {
  harness::Summary summary;
  summary.report("zeta", 1, "the first");
  summary.report("alpha", 0.5, "the second");
  CHECK(summary.metrics.dump() == R"({"zeta":1,"alpha":0.5})");
  CHECK(summary.notes.at("alpha") == "the second");
}

TEST_CASE("text that is not UTF-8 reaches JSON written out: a summary, its error and the flags stay readable") {
  const nlohmann::ordered_json bad = {{"path\xff", "/tmp/a\xfe" "b"}, {"list", {"ok", "\xc3"}}, {"n", 3}};
  const nlohmann::ordered_json fixed = harness::utf8_json(bad);
  CHECK(fixed.dump() == R"({"path\\xff":"/tmp/a\\xfeb","list":["ok","\\xc3"],"n":3})");

  TempDir out("kit_utf8");
  ParsedCli parsed({"--out", out.path.string()});
  const int status = harness::lesson_main([&] {
    harness::Run run(parsed.cli);
    fail("kit_utf8", "a line of the text reads 'caf\xe9'");  // Latin-1: no UTF-8
  });
  CHECK(status == 2);  // an error's exit, not an abort
  const nlohmann::json summary = summary_of(out.path);
  CHECK(summary["status"] == "failed");
  CHECK(summary["error"] == "kit_utf8: a line of the text reads 'caf\\xe9'");
}

TEST_CASE("a write the disk refuses ends the run failed, naming the file: a CSV row to a full disk, a listed file left empty") {
  CHECK_THROWS_WITH_AS(harness::CsvWriter("/dev/full", {"step", "loss"}), doctest::Contains("/dev/full: its header could not be written"), Error);
  TempDir out("kit_full");
  ParsedCli parsed({"--out", out.path.string()});
  const int status = harness::lesson_main([&] {
    harness::Run run(parsed.cli);
    std::ofstream(run.file("plot.png"));  // 0 bytes: what PLplot leaves on a full disk
    run.finish({{"loss", 1.0}}, {{"loss", "a figure"}}, "nothing");
  });
  CHECK(status == 2);
  const nlohmann::json summary = summary_of(out.path);
  CHECK(summary["status"] == "failed");
  CHECK(says_all(summary["error"].get<std::string>(), {"plot.png was not written (it is empty)", "disk full"}));
}

TEST_CASE("a plot PLplot cannot draw ends the run failed, naming the file: no drivers (as on a full /tmp), no folder of them, no pngcairo") {
  // PLplot lists its drivers in a temporary file: a full /tmp leaves it the empty list of an empty
  // folder, "No device drivers found", and PLplot ended the process (exit 1, summary.json running).
  // With no folder of drivers, or none that draws PNG, it asked the terminal for a device instead.
  TempDir drivers("kit_no_drivers");
  fs::create_directories(drivers.path / "empty");
  fs::create_directories(drivers.path / "other");
  std::ofstream(drivers.path / "other" / "other.driver_info") << "other:A device that is no PNG:0:other:1:other\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty", "No device drivers found"}, {"missing", "Could not open drivers directory"}, {"other", "PLplot has no pngcairo device"}};
  for (const auto& [folder, words] : cases) {
    TempDir out("kit_no_drivers_run");
    const Ran ran = run_command("PLPLOT_DRV_DIR=" + (drivers.path / folder).string() + " " + LADDER_LESSON_DIR +
                                "/lesson_01_ngram --quick --threads 1 --out " + out.path.string() + " < /dev/null");
    INFO(folder, ":\n", ran.output);
    CHECK(ran.status == 2);
    const std::string png = (out.path / "val_ppl_by_order.png").string();  // the lesson's first plot
    CHECK(says_all(ran.output, {"save_line_chart: cannot draw " + png, words, "plplot-driver-cairo", "/tmp"}));
    CHECK(ran.output.find("Plotting Options") == std::string::npos);  // PLplot's question to the terminal
    const nlohmann::json summary = summary_of(out.path);
    CHECK(summary["status"] == "failed");
    CHECK(says_all(summary["error"].get<std::string>(), {"cannot draw " + png, words}));
  }
}

TEST_CASE("a --quick run says at its start and its end that its figures are a smoke test; a full run does not") {
  TempDir out("kit_quick_says");
  const std::string warning = "--quick: a smoke test";
  const Ran quick = run_lesson("00_autograd", "--quick --threads 1 --out " + out.path.string());
  INFO(quick.output);
  REQUIRE(quick.status == 0);
  const size_t first = quick.output.find(warning), last = quick.output.rfind(warning);
  REQUIRE(first != std::string::npos);
  CHECK(first < quick.output.find("== 00_autograd done"));
  CHECK(last > quick.output.find("next:"));
  const Ran full = run_lesson("00_autograd", "--threads 1 --out " + out.path.string());
  INFO(full.output);
  REQUIRE(full.status == 0);
  CHECK(full.output.find(warning) == std::string::npos);
}
