// ./ladder check-notes (tools/check_notes): the markers a note puts after its figures, the values a
// run folder gives them, the default flags a run must have, and the tool's refusals. The check of
// the real notes against --quick runs is the CTest check_notes_keys.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "lessons/lesson_runner.h"
#include "file_helpers.h"
#include "markers.h"
#include "run_folder.h"

namespace fs = std::filesystem;
using namespace ladder::check_notes;
using ladder::testing::Ran;
using ladder::testing::run_command;
using ladder::testing::says_all;
using ladder::testing::TempDir;

namespace {

Markers read(const std::string& text) { return read_markers("docs/02_regression.md", text); }

std::string problems_of(const std::string& text) {
  std::string all;
  for (const std::string& p : read(text).problems) all += p + "\n";
  return all;
}

}  // namespace

TEST_CASE("a marker gives the figure before it, its key and its tolerance") {
  const Markers m = read("accuracy 0.935<!-- run: logistic_test_acc -->, and 97%<!-- run: test_acc ±1% -->\n"
                         "it took 62 s<!-- run: seconds ±50% -->; 11,520<!-- run: metrics.csv:lr@step=400, kind=full -->\n"
                         "about 285k<!-- run: metrics.csv:tokens_per_s@last ±0.05 --> and 3e-5<!-- run: exact_match.greedy -->\n");
  REQUIRE(m.problems.empty());
  REQUIRE(m.found.size() == 6);
  CHECK(m.found[0].figure == doctest::Approx(0.935));
  CHECK(m.found[0].tolerance == doctest::Approx(0.0005));
  CHECK(m.found[0].source.key == "logistic_test_acc");
  CHECK(m.found[1].figure == doctest::Approx(0.97));
  CHECK((m.found[1].relative && m.found[1].tolerance == doctest::Approx(0.01)));
  CHECK(m.found[2].figure == doctest::Approx(62));
  CHECK(m.found[2].line == 2);
  CHECK(m.found[3].figure == doctest::Approx(11520));
  CHECK(m.found[3].source.file == "metrics.csv");
  CHECK(m.found[3].source.key == "lr");
  CHECK(m.found[3].source.where == std::vector<std::pair<std::string, std::string>>{{"step", "400"}, {"kind", "full"}});
  CHECK(m.found[4].figure == doctest::Approx(285000));
  CHECK(m.found[4].source.where.empty());
  CHECK(m.found[5].tolerance == doctest::Approx(5e-6));
}

TEST_CASE("a note's run-quick lines give the flags its --quick twin adds") {
  const Markers m = read("text\n<!-- run-quick: --capacity-pairs 4,8 -->\n0.9<!-- run: acc -->\n<!-- run-quick: --circuit-steps 3 -->\n");
  CHECK(m.problems.empty());
  CHECK(m.found.size() == 1);
  CHECK(m.quick_flags == std::vector<std::string>{"--capacity-pairs", "4,8", "--circuit-steps", "3"});
  CHECK(read("0.9<!-- run: acc -->\n").quick_flags.empty());
}

TEST_CASE("a run-quick line that is not flags and plain values is a problem and gives no argument") {
  for (const char* line : {"; touch /tmp/ladder_pwned ;", "--steps 3 && touch x", "--data $(id)", "--out `id`",
                                  "--prompt 'a b'", "--steps 3 | cat", "touch x", "--data \"x y\""}) {
    const Markers m = read(std::string("<!-- run-quick: ") + line + " -->\n0.9<!-- run: acc -->\n");
    INFO(line);
    REQUIRE(m.problems.size() == 1);
    CHECK(m.problems.front().find("docs/02_regression.md:1: run-quick") == 0);
    CHECK(m.quick_flags.empty());
  }
  const Markers fine = read("<!-- run-quick: --kinds full,linear --lr=0.003 --data /tmp/a_b.txt -->\n0.9<!-- run: acc -->\n");
  CHECK(fine.problems.empty());
  CHECK(fine.quick_flags.size() == 5);
}

TEST_CASE("the default tolerance is the figure's rounding; drift is a larger difference") {
  CHECK(rounding_tolerance("0.935") == doctest::Approx(0.0005));
  CHECK(rounding_tolerance("21.7") == doctest::Approx(0.05));
  CHECK(rounding_tolerance("5,178") == doctest::Approx(0.5));
  CHECK(rounding_tolerance("3.58e-07") == doctest::Approx(0.005e-7));
  CHECK(rounding_tolerance("16.6%") == doctest::Approx(0.0005));
  const Marker m = read("0.935<!-- run: a -->").found.at(0);
  CHECK_FALSE(drifted(m, 0.93549));
  CHECK_FALSE(drifted(m, 0.9345));
  CHECK(drifted(m, 0.9356));
  CHECK(drifted(m, std::nan("")));
  const Marker relative = read("62 s<!-- run: seconds ±50% -->").found.at(0);
  CHECK_FALSE(drifted(relative, 100));
  CHECK(drifted(relative, 30));
}

TEST_CASE("a marker that follows no figure, names no key, or sits in a code block is a problem with its line") {
  CHECK(says_all(problems_of("the accuracy<!-- run: test_acc -->\n"), {"docs/02_regression.md:1", "must follow its figure"}));
  CHECK(says_all(problems_of("0.9<!-- run: results.json:acc@last -->\n"), {"not a key"}));
  CHECK(says_all(problems_of("0.9<!-- run: metrics.csv:acc -->\n"), {"not a key"}));  // a CSV names its row
  CHECK(says_all(problems_of("0.9<!-- run: acc ±much -->\n"), {"tolerance", "±much"}));
  CHECK(says_all(problems_of("0.9<!-- run: acc\n"), {"close on its line"}));
  CHECK(says_all(problems_of("text\n\n```\n0.9<!-- run: acc -->\n```\n"), {"docs/02_regression.md:4", "fenced block"}));
  CHECK(problems_of("0.9<!-- a comment, not a marker -->\n").empty());
}

TEST_CASE("a key names a file inside the run folder: a path up out of it or an absolute one is a problem naming the note and the key") {
  for (const char* key : {"../../../outside/secret.csv:x@last", "/tmp/outside/secret.csv:x@last", "sub/../../secret.csv:x@step=1"}) {
    INFO(key);
    const std::string problems = problems_of(std::string("The figure 42<!-- run: ") + key + " -->\n");
    CHECK(says_all(problems, {"docs/02_regression.md:1", key, "a file outside the run folder"}));
    CHECK(std::count(problems.begin(), problems.end(), '\n') == 1);
  }
  CHECK(problems_of("42<!-- run: metrics.csv:x@last -->\n").empty());
}

TEST_CASE("a run folder gives a metric, a CSV cell by its row, the time; and says what is missing") {
  TempDir dir("check_notes_folder");
  fs::create_directories(dir.path);
  std::ofstream(dir.path / "summary.json")
      << R"({"lesson": "07_seq2seq", "seconds": 12.5, "flags": {"steps": 20}, "metrics": {"exact_match": {"greedy": 0.988}, "bleu": [0.5, 0.7]}})";
  std::ofstream(dir.path / "metrics.csv") << "step,kind,val_loss\n100,full,2.5\n200,full,2.1\n200,linear,2.3\n";
  const RunFolder run(dir.path);
  const auto value = [&](const std::string& marker) { return run.value(read("1" + marker).found.at(0).source); };
  CHECK(value("<!-- run: exact_match.greedy -->") == doctest::Approx(0.988));
  CHECK(value("<!-- run: bleu.1 -->") == doctest::Approx(0.7));
  CHECK(value("<!-- run: seconds -->") == doctest::Approx(12.5));
  CHECK(value("<!-- run: metrics.csv:val_loss@step=200 -->") == doctest::Approx(2.1));
  CHECK(value("<!-- run: metrics.csv:val_loss@step=200,kind=linear -->") == doctest::Approx(2.3));
  CHECK(value("<!-- run: metrics.csv:val_loss@last -->") == doctest::Approx(2.3));
  const auto refused = [&](const std::string& marker, const std::vector<std::string>& words) {
    try {
      value(marker);
      FAIL("no error for ", marker);
    } catch (const ladder::Error& e) {
      INFO(e.what());
      CHECK(says_all(e.what(), words));
    }
  };
  refused("<!-- run: exact_match.beam -->", {"no metric", "exact_match.beam"});
  refused("<!-- run: metrics.csv:bleu@last -->", {"metrics.csv", "no column", "bleu"});
  refused("<!-- run: metrics.csv:val_loss@step=300 -->", {"no row", "step = 300"});
  refused("<!-- run: train.csv:val_loss@last -->", {"wrote no", "train.csv"});
  refused("<!-- run: load -->", {"timing.json", "load"});
  write_timing(dir.path, {.seconds = 14, .load_before = 1.5, .load_after = 2, .cores = 2});
  const RunFolder timed(dir.path);
  CHECK(timed.value(read("1<!-- run: seconds -->").found.at(0).source) == doctest::Approx(14));
  CHECK(timed.value(read("1<!-- run: load -->").found.at(0).source) == doctest::Approx(1.5));
  CHECK_THROWS_AS(RunFolder(dir.path / "nothing"), ladder::Error);
}

TEST_CASE("a run folder's files that are not what a run writes are refused in one line, never waited on") {
  TempDir dir("check_notes_hostile");
  fs::create_directories(dir.path);
  const auto refused = [&](const std::vector<std::string>& words) {
    try {
      const RunFolder run(dir.path);
      run.value(read("1<!-- run: metrics.csv:loss@last -->").found.at(0).source);
      FAIL("no error");
    } catch (const ladder::Error& e) {
      INFO(e.what());
      CHECK(says_all(e.what(), words));
    }
  };
  for (const char* text : {"[1, 2]", "7", "\"x\""}) {
    std::ofstream(dir.path / "summary.json") << text;
    refused({"summary.json", "not what a run writes (a JSON object)"});
  }
  fs::remove(dir.path / "summary.json");
  fs::create_directory(dir.path / "summary.json");
  refused({"summary.json", "is a folder"});
  fs::remove(dir.path / "summary.json");
  ladder::testing::make_fifo((dir.path / "summary.json").string());
  refused({"summary.json", "named pipe"});
  fs::remove(dir.path / "summary.json");
  std::ofstream(dir.path / "summary.json") << R"({"flags": {}})";
  ladder::testing::make_fifo((dir.path / "metrics.csv").string());
  refused({"metrics.csv", "named pipe"});
  ladder::testing::make_fifo((dir.path / "timing.json").string());
  refused({"timing.json", "named pipe"});
  fs::remove(dir.path / "timing.json");
  std::ofstream(dir.path / "timing.json") << "[]";
  refused({"timing.json", "not what a run writes"});
  fs::remove(dir.path / "timing.json");
  fs::remove(dir.path / "metrics.csv");
  const fs::path outside = dir.path.string() + "_outside.csv";  // a link out of the run folder: not read
  std::ofstream(outside) << "step,loss\n1,0.5\n";
  fs::create_symlink(outside, dir.path / "metrics.csv");
  refused({(dir.path / "metrics.csv").string(), "a link out of the run folder"});
  fs::remove(outside);
  const RunFolder run(dir.path);  // a summary without metrics, and an index past any size
  try {
    run.value(read("1<!-- run: deep.99999999999999999999 -->").found.at(0).source);
    FAIL("no error");
  } catch (const ladder::Error& e) {
    CHECK(says_all(e.what(), {"summary.json has no 'metrics'"}));
  }
}

TEST_CASE("a run's flags against the defaults its lesson's --help states") {
  const std::string help =
      "Options:\n  -h,--help                   Print this help message and exit\n"
      "  --steps INT>0=500           training steps\n  --lr FLOAT>0=0.5            learning rate\n"
      "  --threads INT in [0, 1024]=0\n                              threads\n"
      "  --quick                     shrink everything\n  --data TEXT                 training text file\n"
      "  --lines,--stream{false}     --lines: each line\n  --level TEXT:{char,word}=char\n"
      "  --warmup INT>=0=5           warmup\n  --examples-to-print-in-part-two INT in [0, 20]=2 part 2: sequences printed\n";
  const auto flags = [](const std::string& json) { return nlohmann::json::parse(R"({"flags": )" + json + "}"); };
  CHECK(non_default_flags(flags(R"({"steps": 500, "lr": 0.5, "threads": 1, "quick": false, "data": "x", "lines": true, "out": "a"})"), help).empty());
  // A long flag leaves one space before its help: the default still ends there; ">=" is part of the type.
  CHECK(non_default_flags(flags(R"({"warmup": 5, "examples-to-print-in-part-two": 2})"), help).empty());
  CHECK(non_default_flags(flags(R"({"warmup": 6, "examples-to-print-in-part-two": 3})"), help).size() == 2);
  const std::vector<std::string> differ = non_default_flags(flags(R"({"steps": 200, "lr": 0.5, "quick": true, "level": "word"})"), help);
  CHECK(differ == std::vector<std::string>{"--level word (default char)", "--quick true (default false)", "--steps 200 (default 500)"});
}

TEST_CASE("check-notes refuses an unknown argument, a note that does not exist, and --quick without --out") {
  const auto refused = [](const std::string& args, const std::vector<std::string>& words) {
    const Ran ran = run_command(std::string(LADDER_CHECK_NOTES) + " --root " + LADDER_SOURCE_DIR + " " + args);
    INFO(args, "\n", ran.output);
    CHECK(ran.status == 2);
    CHECK(says_all(ran.output, words));
  };
  refused("--fast", {"--fast", "neither a lesson number"});
  refused("42", {"no note", "docs/42_"});
  refused("--quick 02", {"--quick needs --out"});
}

TEST_CASE("a figure no run gives is a marker problem, never a crash: 60,000 digits, 1e400, a tolerance of ±inf; a typeset minus is a sign") {
  const Markers huge = read(std::string(60000, '7') + "<!-- run: acc -->\n");
  REQUIRE(huge.problems.size() == 1);
  CHECK(huge.problems.front().find("longer than 40 characters") != std::string::npos);
  const Markers overflow = read("1e400<!-- run: acc -->\n");
  REQUIRE(overflow.problems.size() == 1);
  CHECK(overflow.problems.front().find("not a finite number") != std::string::npos);
  const Markers infinite = read("0.5<!-- run: acc ±inf -->\n");
  REQUIRE(infinite.problems.size() == 1);
  CHECK(infinite.problems.front().find("is not a number") != std::string::npos);
  const Markers minus = read("a slope of \xE2\x88\x92" "0.25<!-- run: slope -->\n");
  REQUIRE(minus.found.size() == 1);
  CHECK(minus.found.front().figure == -0.25);
  CHECK(rounding_tolerance("1e99999") > 0);  // saturates instead of throwing
}

TEST_CASE("check-notes on runs it did not start: an unfinished one or one without flags is refused as such, a finished one agrees with its time and load left out") {
  const fs::path runs = fs::temp_directory_path() / ("ladder_check_notes_runs_" + std::to_string(::getpid()));
  fs::remove_all(runs);
  const Ran made = run_command(std::string(LADDER_LESSON_DIR) + "/lesson_00_autograd --out " + (runs / "00_autograd").string());
  REQUIRE(made.status == 0);
  const std::string check = std::string(LADDER_CHECK_NOTES) + " --root " + LADDER_SOURCE_DIR + " --lessons " + LADDER_LESSON_DIR +
                            " --runs " + runs.string() + " 00";
  const Ran agreed = run_command(check);
  INFO(agreed.output);
  CHECK(agreed.status == 0);  // 1 only when a figure drifted; the time and load of this run are context
  CHECK(says_all(agreed.output, {"reading", "0 drifted", "0 could not be checked", "of time and load left out"}));

  nlohmann::json summary = nlohmann::json::parse(ladder::testing::read_text(runs / "00_autograd" / "summary.json"));
  summary["status"] = "interrupted";
  std::ofstream(runs / "00_autograd" / "summary.json") << summary.dump();
  const Ran unfinished = run_command(check);
  INFO(unfinished.output);
  CHECK(unfinished.status == 2);
  CHECK(says_all(unfinished.output, {"did not finish (status interrupted)", "--resume", "move it away"}));

  summary["status"] = "finished";
  summary.erase("flags");  // a summary that cannot say whether it is the default run is not taken for one
  std::ofstream(runs / "00_autograd" / "summary.json") << summary.dump();
  const Ran unflagged = run_command(check);
  INFO(unflagged.output);
  CHECK(unflagged.status == 2);
  CHECK(says_all(unflagged.output, {"records no flags", "move it away"}));
  fs::remove_all(runs);
}
