// ./ladder compare: runs of one lesson side by side; a folder that is not a run, a run without
// metrics and runs of different lessons are refused in one line, exit status 2, as are a write the
// disk refuses and an output folder that is a link.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>
#include <nlohmann/json.hpp>
#include <utility>

#include "compare.h"
#include "file_helpers.h"
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
    // One layer and 20 steps: a curve to overlay, not a result.
    const Ran ran = run_lesson("11_gpt", std::string("--quick --threads 1 --steps 20 --eval-every 5 --warmup 2 --layers 1 --embd 32 "
                                                     "--heads 2 --context 32 --lr ") + lr + " --out " + folder.string());
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

TEST_CASE("compare writes only inside its output folder: a lesson that is no lesson's name is refused, a column's name cannot climb out, a trailing slash is the folder") {
  TempDir dir("compare_paths");
  const std::string csv = "step,a/../../../../b,val_ppl\n10,2.5,9\n20,2.0,7\n";
  const fs::path a = dir.path / "runs" / "a", b = dir.path / "runs" / "b";
  write_run(a, "11_gpt", 0.001, csv);
  write_run(b, "11_gpt", 0.003, csv);
  const Ran ran = compare(a.string() + "/ " + b.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  const fs::path out = dir.path / "runs" / "compare_11_gpt";  // beside the first run, not inside it
  CHECK(fs::exists(out / "comparison.md"));
  CHECK_FALSE(fs::exists(a / "compare_11_gpt"));
  CHECK(fs::exists(out / "metrics_a_____________b.png"));
  for (const auto& entry : fs::recursive_directory_iterator(dir.path))  // no b.png anywhere above or beside
    CHECK_MESSAGE(entry.path().filename() != "b.png", entry.path().string());

  const fs::path c = dir.path / "c", d = dir.path / "d";
  write_run(c, "/../../x", 0.001, "step,val_ppl\n10,9\n");
  write_run(d, "/../../x", 0.003, "step,val_ppl\n10,8\n");
  check_refused(c.string() + " " + d.string(), {"names the lesson '/../../x'", "no lesson's name"});
  CHECK_FALSE(fs::exists(dir.path / "x"));
}

TEST_CASE("comparison.md shows a run's names, flags and metric names as text: no HTML, link or table cell comes of them") {
  TempDir dir("compare_escaping");
  const fs::path a = dir.path / "03_mlp\" onerror=\"alert(1)\" x=\"", b = dir.path / "<script>alert(2)</script>";
  for (const auto& [folder, lr] : {std::pair{a, 0.001}, std::pair{b, 0.003}}) {
    fs::create_directories(folder);
    std::ofstream(folder / "summary.json") << nlohmann::json{
        {"lesson", "03_mlp"},
        {"flags", {{"lr", lr}, {"note", "<img src=x onerror=alert(3)>"}}},
        {"metrics", {{"<b>loss</b> | x", 1.5}}}}.dump();
    std::ofstream(folder / "metrics.csv") << "step,<i>val</i>\n10,2\n20,1\n";
  }
  const Ran ran = compare("'" + a.string() + "' '" + b.string() + "' --out " + (dir.path / "out").string());  // quoted for the test's shell
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  std::ifstream in(dir.path / "out" / "comparison.md");
  const std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t at = md.find_first_of("<>|"); at != std::string::npos; at = md.find_first_of("<>|", at + 1))
    if (md[at] != '|' || md.compare(at, 3, "| x") == 0)  // no tag opens, no name's | cuts a row: each is escaped
      CHECK_MESSAGE((at > 0 && md[at - 1] == '\\'), "an unescaped ", md[at], " at ", at, " of comparison.md:\n", md);
  CHECK(md.find("\\<script\\>") != std::string::npos);
  CHECK(md.find("\\<img src=x onerror=alert\\(3\\)\\>") != std::string::npos);
  CHECK(md.find("loss\\</b\\> \\| x") != std::string::npos);  // the | of a name does not cut the table's row
}

TEST_CASE("compare refuses a named pipe or a device in a run folder in one line, and never waits on one") {
  TempDir dir("compare_pipes");
  const std::string csv = "step,val_ppl\n10,9\n20,7\n";
  const fs::path a = dir.path / "a", b = dir.path / "b", c = dir.path / "c";
  write_run(a, "11_gpt", 0.001, csv);
  write_run(b, "11_gpt", 0.003, "");
  make_fifo((b / "metrics.csv").string());  // a CSV that is a pipe
  fs::create_directories(c);
  make_fifo((c / "summary.json").string());  // a summary that is a pipe
  const fs::path d = dir.path / "d";
  write_run(d, "11_gpt", 0.003, "");
  fs::create_symlink("/dev/zero", d / "metrics.csv");  // a CSV without end
  for (const auto& [other, words] : {std::pair{b, std::vector<std::string>{"metrics.csv", "pipe"}},
                                     std::pair{c, std::vector<std::string>{"summary.json", "pipe"}},
                                     std::pair{d, std::vector<std::string>{"metrics.csv"}}}) {
    const Ran ran = run_command("timeout 20 " + std::string(LADDER_COMPARE) + " " + a.string() + " " + other.string());
    INFO(ran.output);
    CHECK(ran.status == 2);  // 124: it waited until timeout ended it
    CHECK(says_all(ran.output, words));
  }
}

TEST_CASE("compare's table says how each run ended, and its curves keep every number a CSV holds and no cell that is not one") {
  TempDir dir("compare_status");
  const fs::path a = dir.path / "a", b = dir.path / "b";
  write_run(a, "11_gpt", 0.001, "step,val_ppl\n10,9\n20,1e-310\n30,7abc\n");
  write_run(b, "11_gpt", 0.003, "step,val_ppl\n10,8\n20,6\n");
  nlohmann::json failed = nlohmann::json::parse(read_text(b / "summary.json"));
  failed["status"] = "failed";
  std::ofstream(b / "summary.json") << failed.dump();
  nlohmann::json finished = nlohmann::json::parse(read_text(a / "summary.json"));
  finished["status"] = "finished";
  std::ofstream(a / "summary.json") << finished.dump();
  const Ran ran = compare(a.string() + " " + b.string() + " --out " + (dir.path / "out").string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(ran.output.find("| **status** (differs) | **finished** | **failed** |") != std::string::npos);
  const std::vector<ladder::compare::RunFolder> runs = ladder::compare::read_runs({a.string(), b.string()});
  const ladder::compare::Curves& curves = runs.front().csvs.at("metrics.csv");
  REQUIRE(curves.rows.size() == 2);  // 10 and 20: "7abc" is no number, 1e-310 (a denormal) is one
  CHECK(curves.rows[1][1] == 1e-310);
}

TEST_CASE("compare takes a cell as a number only in decimal and within a double: a row of 0x1A, 1e400 or -1e400 is no point") {
  TempDir dir("compare_cells");
  const fs::path a = dir.path / "a", b = dir.path / "b";
  write_run(a, "11_gpt", 0.001, "step,val_ppl\n10,9\n20,7\n");
  for (const char* cell : {"0x1A", "1e400", "-1e400"}) {  // strtod reads hexadecimal, and makes 1e400 infinite
    write_run(b, "11_gpt", 0.003, std::string("step,val_ppl\n") + cell + "," + cell + "\n");
    INFO(cell);
    check_refused(a.string() + " " + b.string() + " --out " + (dir.path / "out").string(), {b.string(), "has no metrics"});
  }
}

TEST_CASE("compare run from inside the first run ('.', or '..' from a folder in it) writes beside the run, under its name") {
  TempDir dir("compare_dot");
  const fs::path a = dir.path / "runs" / "a", b = dir.path / "runs" / "b", out = dir.path / "runs" / "compare_11_gpt";
  write_run(a, "11_gpt", 0.001, "step,val_ppl\n10,9\n20,7\n");
  write_run(b, "11_gpt", 0.003, "step,val_ppl\n10,8\n20,6\n");
  fs::create_directories(a / "sub");
  for (const auto& [from, first, second] : {std::tuple{a, ".", "../b"}, std::tuple{a / "sub", "..", "../../b"}}) {
    const Ran ran = run_command("cd " + from.string() + " && " + LADDER_COMPARE + " " + first + " " + second);
    INFO("compare ", first, " ", second, " in ", from.string(), "\n", ran.output);
    REQUIRE(ran.status == 0);
    CHECK(says_all(ran.output, {"are in " + out.string()}));
    CHECK(read_text(out / "comparison.md").find("| | a | b |") != std::string::npos);  // the run's name, not "."
    CHECK_FALSE(fs::exists(from / "compare_11_gpt"));
    fs::remove_all(out);
  }
}

TEST_CASE("compare on a disk that refuses its writes exits 2 naming the file, never 0 with plots empty or cut short") {
  TempDir dir("compare_full");
  const fs::path a = dir.path / "a", b = dir.path / "b";
  write_run(a, "11_gpt", 0.001, "step,val_ppl\n10,9\n20,7\n");
  write_run(b, "11_gpt", 0.003, "step,val_ppl\n10,8\n20,6\n");
  // Files of 16 KiB at most, a third of the plot (PLplot's own list of its drivers fits): each write
  // past it fails as on a full disk, and the plot is cut short.
  const fs::path out = dir.path / "out";
  const Ran ran = run_command("ulimit -f 16; trap '' XFSZ; " + std::string(LADDER_COMPARE) + " " + a.string() + " " + b.string() +
                              " --out " + out.string());
  INFO(ran.output);
  CHECK(ran.status == 2);
  CHECK(says_all(ran.output, {"cannot write " + (out / "metrics_val_ppl.png").string(), "File too large"}));
  CHECK(std::count(ran.output.begin(), ran.output.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(out / "metrics_val_ppl.png"));  // no plot cut short left behind
  CHECK_FALSE(fs::exists(out / "comparison.md"));
}

TEST_CASE("compare writes through no link: an output folder that is a link is refused, a link at a file it writes is replaced, what it points at kept") {
  TempDir dir("compare_links");
  const fs::path a = dir.path / "runs" / "a", b = dir.path / "runs" / "b", outside = dir.path / "outside";
  write_run(a, "11_gpt", 0.001, "step,val_ppl\n10,9\n20,7\n");
  write_run(b, "11_gpt", 0.003, "step,val_ppl\n10,8\n20,6\n");
  fs::create_directories(outside / "folder");
  std::ofstream(outside / "page.txt") << "keep\n";
  std::ofstream(outside / "plot.txt") << "keep\n";
  const fs::path linked = dir.path / "runs" / "compare_11_gpt";
  fs::create_directory_symlink(outside / "folder", linked);
  check_refused(a.string() + " " + b.string(), {linked.string(), "is a link", "never through a link"});
  check_refused(a.string() + " " + b.string() + " --out " + linked.string() + "/", {linked.string(), "is a link"});
  CHECK(fs::is_empty(outside / "folder"));

  const fs::path out = dir.path / "out";
  fs::create_directories(out);
  fs::create_symlink(outside / "page.txt", out / "comparison.md");
  fs::create_symlink(outside / "plot.txt", out / "metrics_val_ppl.png");
  const Ran ran = compare(a.string() + " " + b.string() + " --out " + out.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(says_all(ran.output, {"compare: removed from " + out.string(), "comparison.md (a link)", "metrics_val_ppl.png (a link)"}));
  CHECK(read_text(outside / "page.txt") == "keep\n");
  CHECK(read_text(outside / "plot.txt") == "keep\n");
  CHECK(fs::is_regular_file(fs::symlink_status(out / "comparison.md")));
  CHECK(fs::file_size(out / "metrics_val_ppl.png") > 1000);
}
