// The book (tools/book): built from the repository's notes, every pointer a link to a line of the
// code; a pointer that does not resolve stops the build, naming it. The browser test
// (browser_test.mjs) opens the pages.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "lessons/lesson_runner.h"

namespace fs = std::filesystem;
using ladder::testing::Ran;
using ladder::testing::read_text;
using ladder::testing::run_command;
using ladder::testing::says_all;

namespace {

fs::path fresh(const std::string& name) {
  const fs::path folder = fs::temp_directory_path() / ("ladder_book_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

}  // namespace

TEST_CASE("the book has a page per note, its pointers opening the code, and the code of every source file") {
  const fs::path out = fresh("out"), runs = fresh("runs");
  const Ran ran = run_command(std::string(LADDER_BOOK) + " --root " + LADDER_SOURCE_DIR + " --lessons " + LADDER_LESSON_DIR +
                              " --runs " + runs.string() + " --out " + out.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(says_all(read_text(out / "index.html"), {"href=\"06_gated_rnn.html\"", "href=\"11_gpt.html\""}));  // the README's table
  const std::string note = read_text(out / "06_gated_rnn.html");
  CHECK(note.find("<a class=\"pointer\" href=\"#code=nn/recurrent.cpp:") != std::string::npos);
  CHECK(note.find("./ladder lesson 06") != std::string::npos);  // no run yet: the command that makes one
  CHECK(fs::exists(out / "code" / "nn" / "recurrent.cpp.js"));
  CHECK(fs::exists(out / "assets" / "katex" / "katex.min.js"));
  CHECK(fs::exists(out / "assets" / "highlight" / "highlight.min.js"));
  // An exercise on its note's page: the start command, the hint, and the region folded under them.
  const std::string autograd = read_text(out / "00_autograd.html");
  CHECK(says_all(autograd, {"./ladder exercise start tanh_backward", "tanh' = 1 - tanh^2",
                            "<details><summary>the region in core/ops/unary.cpp", "return 1 - y * y;"}));
  fs::remove_all(out);
  fs::remove_all(runs);
}

TEST_CASE("a pointer that names nothing stops the book, naming the note, its line and the span") {
  const fs::path root = fresh("root");
  fs::create_directories(root / "docs");
  fs::create_directories(root / "lessons");
  std::ofstream(root / "ladder") << "cat <<'TEXT'\n  book   the book\nTEXT\n";
  std::ofstream(root / "README.md") << "# x\n";
  std::ofstream(root / "docs" / "notes.md") << "# Notes\n\nIt calls `no_such_function_anywhere`.\n";
  std::ofstream(root / "lib.cpp") << "int f() { return 1; }\n";
  const Ran ran = run_command(std::string(LADDER_BOOK) + " --root " + root.string() + " --lessons " + LADDER_LESSON_DIR + " --out " +
                              (root / "book").string());
  INFO(ran.output);
  CHECK(ran.status == 2);
  CHECK(says_all(ran.output, {"docs/notes.md:3", "no_such_function_anywhere", "not found in the sources", "the book is not built"}));
  CHECK_FALSE(fs::exists(root / "book" / "index.html"));
  fs::remove_all(root);
}

TEST_CASE("the book copies no plot that is a link: a run's or a comparison's plot pointing elsewhere stays out of it") {
  const fs::path out = fresh("links_out"), runs = fresh("links_runs"), secret = fresh("links_secret");
  std::ofstream(secret / "secret.txt") << "not for the book\n";
  fs::create_directories(runs / "06_gated_rnn");
  std::ofstream(runs / "06_gated_rnn" / "summary.json") << R"({"lesson": "06_gated_rnn", "status": "finished", "metrics": {"val_ppl": 5}})";
  fs::create_symlink(secret / "secret.txt", runs / "06_gated_rnn" / "perplexity.png");  // a plot the note names
  fs::create_directories(runs / "compare_06");
  std::ofstream(runs / "compare_06" / "comparison.md") << "# Lesson 06: 2 runs compared\n\n![loss](loss.png)\n";
  fs::create_symlink(secret / "secret.txt", runs / "compare_06" / "loss.png");
  const Ran ran = run_command(std::string(LADDER_BOOK) + " --root " + LADDER_SOURCE_DIR + " --lessons " + LADDER_LESSON_DIR +
                              " --runs " + runs.string() + " --out " + out.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK_FALSE(fs::exists(out / "runs" / "06_gated_rnn" / "perplexity.png"));
  CHECK_FALSE(fs::exists(out / "runs" / "compare_06" / "loss.png"));
  for (const auto& entry : fs::recursive_directory_iterator(out))
    if (entry.is_regular_file() && entry.path().extension() == ".png")
      CHECK_MESSAGE(read_text(entry.path()).find("not for the book") == std::string::npos, entry.path().string());
  fs::remove_all(out), fs::remove_all(runs), fs::remove_all(secret);
}

TEST_CASE("a run folder the book cannot read is a line and a box that says why, never the end of the book") {
  const fs::path out = fresh("bad_out"), runs = fresh("bad_runs");
  fs::create_directories(runs / "06_gated_rnn");
  REQUIRE(::mkfifo((runs / "06_gated_rnn" / "summary.json").c_str(), 0600) == 0);  // would block a plain read
  fs::create_directories(runs / "11_gpt");
  std::ofstream(runs / "11_gpt" / "summary.json") << "[1, 2, 3]\n";  // JSON, but no run's summary
  fs::create_directories(runs / "compare_06");
  REQUIRE(::mkfifo((runs / "compare_06" / "comparison.md").c_str(), 0600) == 0);
  const Ran ran = run_command("timeout 60 " + std::string(LADDER_BOOK) + " --root " + LADDER_SOURCE_DIR + " --lessons " +
                              LADDER_LESSON_DIR + " --runs " + runs.string() + " --out " + out.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(says_all(ran.output, {"skipped", "comparison.md", "lesson 06's run panel", "lesson 11's run panel", "not a run's summary"}));
  CHECK(read_text(out / "06_gated_rnn.html").find("named pipe") != std::string::npos);
  CHECK(read_text(out / "11_gpt.html").find("not a run's summary") != std::string::npos);
  fs::remove_all(out), fs::remove_all(runs);
}

TEST_CASE("the book shows the run in the lesson's default folder, saying whether it is the default run, a quick one or another") {
  const fs::path out = fresh("shown_out"), runs = fresh("shown_runs");
  const auto run = [&](const std::string& folder, const std::string& flags, double figure) {
    fs::create_directories(runs / folder);
    std::ofstream(runs / folder / "summary.json") << R"({"lesson": "x", "status": "finished", "flags": )" << flags
                                                  << R"(, "metrics": {"val_ppl": )" << figure << "}}";
    std::ofstream(runs / folder / "perplexity.png") << folder;  // a plot note 06 names
  };
  run("06_gated_rnn", R"({"quick": true, "steps": 40})", 14.7);
  run("06_gated_rnn_cell_rnn", R"({"cell": "rnn"})", 9.9);  // written later, in a folder of the learner's choosing
  run("05_rnn", R"({"lr": 0.5, "quick": false})", 3.5);
  run("11_gpt", R"({"quick": false})", 3.53);
  const Ran ran = run_command(std::string(LADDER_BOOK) + " --root " + LADDER_SOURCE_DIR + " --lessons " + LADDER_LESSON_DIR +
                              " --runs " + runs.string() + " --out " + out.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  const std::string six = read_text(out / "06_gated_rnn.html");
  CHECK(says_all(six, {"your --quick run: a smoke test, its figures are not the lesson's", (runs / "06_gated_rnn").string(), "14.7"}));
  CHECK(six.find("9.9") == std::string::npos);
  CHECK(read_text(out / "runs" / "06_gated_rnn" / "perplexity.png") == "06_gated_rnn");
  CHECK_FALSE(fs::exists(out / "runs" / "06_gated_rnn_cell_rnn"));
  CHECK(says_all(read_text(out / "05_rnn.html"), {"your run with --lr 0.5 (default ", "not the default run"}));
  const std::string eleven = read_text(out / "11_gpt.html");
  CHECK(eleven.find("your default run") != std::string::npos);
  CHECK(eleven.find("not the default run") == std::string::npos);
  fs::remove_all(out), fs::remove_all(runs);
}

TEST_CASE("a comparison's links run nothing (javascript:, data:), and link loops in runs/ are skipped, not the end of the book") {
  const fs::path out = fresh("hostile_out"), runs = fresh("hostile_runs");
  fs::create_directories(runs / "compare_x");
  std::ofstream(runs / "compare_x" / "comparison.md")
      << "# Lesson 03: 2 runs compared\n\n[click](javascript:alert(1)) <javascript:alert(2)> [c](JaVaScRiPt:alert(3))\n"
         "[d](data:text/html;base64,PHNjcmlwdD4=) [ok](https://example.org/a) ![loss](loss.png)\n";
  fs::create_symlink(runs / "compare_loop", runs / "compare_loop");  // a link to itself
  fs::create_directories(runs / "03_mlp");
  fs::create_symlink(runs / "03_mlp" / "summary.json", runs / "03_mlp" / "summary.json");
  const Ran ran = run_command("timeout 60 " + std::string(LADDER_BOOK) + " --root " + LADDER_SOURCE_DIR + " --lessons " +
                              LADDER_LESSON_DIR + " --runs " + runs.string() + " --out " + out.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  const std::string page = read_text(out / "compare_x.html");
  for (const char* address : {"=\"javascript:", "=\"JaVaScRiPt:", "=\"data:"})  // as text they may show; never as an address
    CHECK_MESSAGE(page.find(address) == std::string::npos, address);
  CHECK(page.find("href=\"#\"") != std::string::npos);
  CHECK(page.find("href=\"https://example.org/a\"") != std::string::npos);
  CHECK(page.find("loss.png") != std::string::npos);
  fs::remove_all(out), fs::remove_all(runs);
}

TEST_CASE("the run's box sits under the page's title and prints a whole number whole, never as 2.397e+04") {
  const fs::path out = fresh("figures_out"), runs = fresh("figures_runs");
  fs::create_directories(runs / "05_rnn");
  std::ofstream(runs / "05_rnn" / "summary.json")
      << R"({"lesson": "05_rnn", "status": "finished", "flags": {"quick": true}, "metrics": )"
      << R"({"val_tokens": 23970, "seconds": 23970.4, "tokens_per_s": 12.0, "val_ppl": 3.14159, "gap": 0.000123}})";
  const Ran ran = run_command(std::string(LADDER_BOOK) + " --root " + LADDER_SOURCE_DIR + " --lessons " + LADDER_LESSON_DIR +
                              " --runs " + runs.string() + " --out " + out.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  const std::string page = read_text(out / "05_rnn.html");
  const size_t box = page.find("<aside class=\"run-panel\">");
  REQUIRE(box != std::string::npos);
  const std::string figures = page.substr(box, page.find("</aside>", box) - box);
  CHECK(says_all(figures, {"<dd>23970</dd>", "<dd>12</dd>", "<dd>3.142</dd>", "<dd>0.000123</dd>"}));
  CHECK(figures.find("e+04") == std::string::npos);
  CHECK(figures.find("23970.4") == std::string::npos);
  CHECK(page.find("</h1>") < box);  // beside the title, the box split it in two
  fs::remove_all(out), fs::remove_all(runs);
}
