// ./ladder compare: runs of one lesson side by side; a folder that is not a run, a run without
// metrics and runs of different lessons are refused in one line, exit status 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "lessons/lesson_runner.h"

namespace fs = std::filesystem;
using namespace ladder::testing;

namespace {

Ran compare(const std::string& args) { return run_command(std::string(LADDER_COMPARE) + " " + args); }

// A run folder as a lesson leaves it: summary.json, and metrics.csv unless `csv` is empty.
void write_run(const fs::path& folder, const std::string& lesson, double lr, const std::string& csv) {
  fs::create_directories(folder);
  std::ofstream(folder / "summary.json") << R"({"lesson": ")" << lesson << R"(", "flags": {"lr": )" << lr
                                         << R"(, "steps": 20, "out": ")" << folder.string() << R"("}, "metrics": {"val_ppl": )" << 5 - lr << "}}\n";
  if (!csv.empty()) std::ofstream(folder / "metrics.csv") << csv;
}

void check_refused(const std::string& args, const std::vector<std::string>& words) {
  const Ran ran = compare(args);
  INFO("compare ", args, "\n", ran.output);
  CHECK(ran.status == 2);
  CHECK(says_all(ran.output, words));
  CHECK(std::count(ran.output.begin(), ran.output.end(), '\n') == 1);  // one line
}

}  // namespace

TEST_CASE("compare refuses a folder that is not a run, a run without metrics and runs of different lessons") {
  TempDir dir("compare_refusals");
  const fs::path a = dir.path / "a", b = dir.path / "b", other = dir.path / "other", bare = dir.path / "bare", empty = dir.path / "empty";
  const std::string csv = "step,train_loss,val_ppl\n10,2.5,9\n20,2.0,7\n";
  write_run(a, "11_gpt", 0.001, csv);
  write_run(b, "11_gpt", 0.003, csv);
  write_run(other, "06_gated_rnn", 0.001, csv);
  write_run(bare, "11_gpt", 0.001, "");
  fs::create_directories(empty);
  check_refused(a.string() + " " + empty.string(), {empty.string(), "is not a run", "no summary.json"});
  check_refused(a.string() + " " + bare.string(), {bare.string(), "has no metrics", "metrics.csv"});
  check_refused(a.string() + " " + other.string(), {"different lessons", "11_gpt", "06_gated_rnn"});
  check_refused(a.string(), {"two or more run folders"});
  check_refused(a.string() + " " + (dir.path / "missing").string(), {"missing", "is not a folder"});
}

TEST_CASE("compare on two runs of lesson 11 overlays their perplexity curves and tables their summaries, the flags that differ marked") {
  TempDir dir("compare_gpt");
  const fs::path slow = dir.path / "11_lr1", fast = dir.path / "11_lr3", out = dir.path / "compared";
  for (const auto& [folder, lr] : {std::pair{slow, "0.001"}, std::pair{fast, "0.003"}}) {
    const Ran ran = run_lesson("11_gpt", std::string("--quick --threads 1 --lr ") + lr + " --out " + folder.string());
    REQUIRE_MESSAGE(ran.status == 0, ran.output);
  }
  const Ran ran = compare(slow.string() + " " + fast.string() + " --out " + out.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  for (const char* plot : {"metrics_val_ppl.png", "metrics_val_ppl.svg", "metrics_val_loss.png", "metrics_train_loss.png"})
    CHECK_MESSAGE(fs::file_size(out / plot) > 1000, plot);
  const std::string page = read_text(out / "comparison.md");
  CHECK(says_all(page, {"| | 11_lr1 | 11_lr3 |", "| **--lr** (differs) | **0.001** | **0.003** |", "| --steps |", "| val_ppl |",
                        "![val_ppl](metrics_val_ppl.png)"}));
  CHECK(page.find("--out") == std::string::npos);  // where a run went is no difference between runs
  CHECK(ran.output.find("| **--lr** (differs) |") != std::string::npos);  // the table on the terminal too
}
