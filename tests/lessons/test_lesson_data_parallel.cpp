// Lesson 16 on 2 processes (mpirun, as root too, as CI runs it): the --quick smoke test, and the
// inputs that cannot work, each refused in one line with status 2, by the lesson or by ./ladder.
#include <filesystem>
#include <fstream>

#include "lessons/lesson_checks.h"
#include "lessons/note_keys.h"

namespace fs = std::filesystem;
using namespace ladder::testing;

namespace {

// mpirun allows root only when told (CI runs as root); -q leaves out its notices when a process
// fails, as ./ladder lesson 16 does.
Ran run_on(int processes, const std::string& args) {
  Ran ran = run_command("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + std::string(LADDER_MPIRUN) +
                        " -q --oversubscribe -np " + std::to_string(processes) + " " + LADDER_LESSON_DIR +
                        "/lesson_16_data_parallel " + args);
  check_plain_lines("lesson 16 under mpirun", ran.output);  // its processes write to mpirun's pseudo-terminals
  return ran;
}

size_t lines_of(const std::string& text) {
  size_t lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines += line.empty() ? 0 : 1;
  return lines;
}

}  // namespace

TEST_CASE("lesson 16_data_parallel --quick on 2 processes: one gradient, one model, one run folder; the loss fell") {
  TempDir out("lesson16");
  const Ran ran = run_on(2, "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  check_note_keys(out.path);  // every figure its note marks is in this run
  check_files(out.path, {"metrics.csv", "metrics_one_process.csv", "losses.csv", "loss.png", "loss.svg",
                         "step_time.csv", "step_time.png", "all_reduce.csv", "all_reduce.png", "summed.png", "spread.png",
                         "summary.json"});
  const std::vector<double> val = column(out.path / "metrics.csv", "val_loss");
  REQUIRE(val.size() == 4);
  CHECK(val.back() < val.front() - 0.3);
  // Rank 0 alone speaks and writes: one summary, printed once.
  const std::string done = "== 16_data_parallel done in";
  CHECK(ran.output.find(done) == ran.output.rfind(done));
  const nlohmann::json m = summary_of(out.path)["metrics"];
  CHECK(m["processes"] == 2);
  CHECK(m["gradient_max_difference"].get<double>() < 1e-5);
  CHECK(m["loss_difference_10_steps"].get<double>() < 1e-5);
  CHECK(m["val_loss"].get<double>() == doctest::Approx(m["val_loss_one_process"].get<double>()).epsilon(1e-4));
  CHECK(m["spread_after_training"].get<double>() == 0);
  CHECK(m["spread_own_seeds"].get<double>() > 0.01);
  CHECK(m["spread_no_all_reduce"].get<double>() > 0);
  CHECK(m["sgd_summed_vs_lr_times_n"].get<double>() == 0);  // summing is averaging at twice the lr, bit for bit
  CHECK(rows(out.path / "step_time.csv").size() == 2);     // 1 and 2 processes
  CHECK(rows(out.path / "losses.csv").size() == 40);
  check_ending(ran.output, out.path, {{"gradient_max_difference", "part 1"}, {"spread_after_training", "part 4"}});
}

TEST_CASE("lesson 16 started as ./ladder lesson 16 starts it, its output into a file: plain lines, no escape code") {
  TempDir out("lesson16_log");
  fs::create_directories(out.path);
  const fs::path log = out.path / "log.txt";
  const Ran ran = run_command(std::string(LADDER_SOURCE_DIR) + "/harness/run_processes.sh 2 " + LADDER_LESSON_DIR +
                              "/lesson_16_data_parallel --quick --layers 1 --embd 32 --heads 2 --out " + (out.path / "run").string() +
                              " > " + log.string());
  const std::string written = read_text(log);
  INFO(written);
  REQUIRE(ran.status == 0);
  CHECK(written.find("step 40/40 | loss") != std::string::npos);  // the progress, as plain lines
  check_plain_lines("run_processes.sh into a file", written);
}

TEST_CASE("lesson 16 --lines on 2 processes: each keeps its rows of a batch of lines, weighted by their targets; validation over every line") {
  TempDir out("lesson16_lines");
  std::string names;  // 600 made-up names of 2 to 9 letters, one a line
  for (int i = 0; i < 600; ++i, names += '\n')
    for (int j = 0; j < 2 + (i * 7) % 8; ++j) names += static_cast<char>('a' + (i * 11 + j * 5 + j * j) % 26);
  const Ran ran = run_on(2, "--quick --lines --data " + write_file("names16.txt", names) + " --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(ran.output.find("training lines") != std::string::npos);
  const nlohmann::json m = summary_of(out.path)["metrics"];
  // Shards of padded lines hold different numbers of targets: weighted by their rows, the gradient differed by 7e-3.
  CHECK(m["gradient_max_difference"].get<double>() < 1e-5);
  CHECK(m["loss_difference_all_steps"].get<double>() < 1e-5);
  CHECK(m["val_loss"].get<double>() == doctest::Approx(m["val_loss_one_process"].get<double>()).epsilon(1e-5));
}

TEST_CASE("lesson 16: more processes than windows per batch, or another count than --procs, refused in one line") {
  TempDir out("lesson16_bad");
  const std::pair<std::string, std::string> cases[] = {
      {"--batch 2", "3 processes share a batch of 2 examples: each needs at least one; give a --batch of at least 3"},
      {"--procs 2", "--procs 2 but mpirun started 3 processes"},
  };
  for (const auto& [args, expected] : cases) {
    const Ran ran = run_on(3, "--quick " + args + " --out " + out.path.string());
    INFO(args, "\n", ran.output);
    CHECK(ran.status == 2);
    CHECK(ran.output.find(expected) != std::string::npos);
    CHECK(lines_of(ran.output) == 1);  // rank 0's line, once
  }
  CHECK_FALSE(fs::exists(out.path));
}

TEST_CASE("./ladder lesson 16: --procs 0 and a missing mpirun refused in one line, before anything runs") {
  const std::string ladder = std::string(LADDER_SOURCE_DIR) + "/ladder lesson 16 ";
  for (const char* procs : {"--procs 0", "--procs two", "--procs"}) {
    const Ran ran = run_command(ladder + procs);
    INFO(procs, "\n", ran.output);
    CHECK(ran.status == 2);
    CHECK(ran.output.find("--procs must be a positive whole number of processes") != std::string::npos);
    CHECK(lines_of(ran.output) == 1);
  }
  // A PATH with every program of the usual one but mpirun (and mpiexec, orterun: its other names).
  TempDir bin("lesson16_path");
  fs::create_directories(bin.path);
  for (const char* folder : {"/usr/local/bin", "/usr/bin", "/bin"})
    for (const auto& entry : fs::directory_iterator(folder)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("mpi") || name.starts_with("orte") || fs::exists(bin.path / name)) continue;
      fs::create_symlink(entry.path(), bin.path / name);
    }
  const Ran ran = run_command("PATH=" + bin.path.string() + " " + ladder + "--quick");
  INFO(ran.output);
  CHECK(ran.status == 2);
  CHECK(ran.output.find("mpirun, which is not on PATH; run ./ladder setup (it installs openmpi-bin)") != std::string::npos);
  CHECK(lines_of(ran.output) == 1);
}

TEST_CASE("lesson 16 stopped on 2 processes resumes on 2 only: on 3 it is refused naming the count, and the run is left to resume") {
  TempDir out("lesson16_resume_count");
  const Ran stopped = run_on(2, "--quick --layers 1 --embd 32 --heads 2 --stop-after 1 --out " + out.path.string());  // a run to refuse
  INFO(stopped.output);
  REQUIRE(stopped.status == 0);
  const Ran three = run_on(3, "--resume " + out.path.string());
  INFO(three.output);
  CHECK(three.status == 2);
  CHECK(three.output.find("ran on 2 processes, not on the 3 started now") != std::string::npos);
  const Ran two = run_on(2, "--resume " + out.path.string());
  INFO(two.output);
  CHECK(two.status == 0);
  CHECK(summary_of(out.path)["status"] == "finished");
}
