// ./ladder exercise (tools/exercise): the regions and their markers, the catalogue against the code
// and the notes, the learner's workspace, and for every exercise the proof that the check can
// fail: the stub fails it naming the exercise, the original passes it (its lesson too), and a
// plausible wrong answer fails it with a message naming what was compared.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "catalog.h"
#include "check.h"
#include "helpers.h"
#include "lessons/lesson_runner.h"
#include "region.h"
#include "workspace.h"

namespace fs = std::filesystem;
using namespace ladder;
using namespace ladder::testing;
using ladder::exercise::Exercise;

namespace {

const std::string kText =
    "int f(int x) {\n"
    "  // exercise: double_it\n"
    "  return 2 * x;\n"
    "  // end of exercise: double_it\n"
    "}\n";

void overwrite(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

ladder::exercise::Places places_in(const fs::path& workspace) {
  return {.root = LADDER_SOURCE_DIR, .build = LADDER_BUILD_DIR, .workspace = workspace};
}

// ./ladder exercise as the learner runs it (the tool itself: ./ladder builds it and the targets first).
Ran exercise_command(const fs::path& workspace, const std::string& args) {
  return run_command(std::string(LADDER_EXERCISE) + " --root " + LADDER_SOURCE_DIR + " --build " + LADDER_BUILD_DIR +
                     " --workspace " + workspace.string() + " " + args);
}

// For each exercise, a plausible wrong answer: the original region with one edit, and what the
// check's message must then name.
struct WrongAnswer {
  std::string original, wrong, named;
};
const std::map<std::string, WrongAnswer> kWrongAnswers = {
    // tanh' taken as 1 - tanh
    {"tanh_backward", {"return 1 - y * y;", "return 1 - y;", "tanh: input 0 element"}},
    // the denominator's delta V dropped
    {"add_delta", {"+ delta * V)", "+ delta)", "p(c, add_one, {bos}, a)"}},
    // the dampening ignored
    {"sgd_momentum", {"(1 - options_.dampening) * d", "d", "dampening 0.5: the parameter after each step"}},
    // the one-hot of the target left out: the gradient of log-sum-exp alone
    {"cross_entropy_backward", {"if (target[r] >= 0) out[target[r]] -= g;", "", "cross_entropy: input 0 element"}},
    // every gradient scaled, small or not
    {"clip_grad_norm", {"if (coef < 1)", "if (coef > 0)", "the norm, 5, is below, so it stays 3"}},
    // v's bias left uncorrected
    {"adam_update", {"std::sqrt(v[i]) / correction2_sqrt", "std::sqrt(v[i])", "the parameter after two steps"}},
    // the decay left out of the read: right ungated, wrong gated
    {"delta_rule_step", {"v[t * E + e] - alpha * read", "v[t * E + e] - read", "gated true out element"}},
};

}  // namespace

TEST_CASE("a region is the code between its markers; it is read and replaced, the markers kept") {
  const exercise::Region region = exercise::find_region(kText, "double_it", "f.cpp");
  CHECK(exercise::region_code(kText, region) == "  return 2 * x;\n");
  CHECK(region.indent == "  ");
  CHECK(exercise::with_region(kText, region, "return x + x;\n") ==
        "int f(int x) {\n  // exercise: double_it\n  return x + x;\n  // end of exercise: double_it\n}\n");
  CHECK(exercise::marked_names(kText) == std::vector<std::string>{"double_it"});
}

TEST_CASE("a region whose marker is missing, doubled or out of order is refused, naming the file and the marker") {
  check_error([] { exercise::find_region("int x;\n", "double_it", "f.cpp"); },
              {"f.cpp", "// exercise: double_it", "holds 0 and 0", "was a marker deleted?"});
  check_error([] { exercise::find_region(kText + kText, "double_it", "f.cpp"); }, {"holds 2 and 2"});
  check_error([] { exercise::find_region("// end of exercise: a\n// exercise: a\n", "a", "f.cpp"); },
              {"'// end of exercise: a' comes before '// exercise: a'"});
}

TEST_CASE("every exercise's region is in its file and its hint in its lesson's note; every marker in the library is an exercise") {
  const exercise::Places places = places_in("unused");
  CHECK(exercise::catalog().size() >= 4);
  std::set<std::string> names;
  for (const Exercise& e : exercise::catalog()) {
    INFO(e.name);
    CHECK(names.insert(e.name).second);
    CHECK_FALSE(exercise::solution(places, e).empty());
    CHECK(exercise::hint(places, e).find("`./ladder exercise start " + e.name + "`") != std::string::npos);
    CHECK(exercise::stub_code(e).find("not written yet") != std::string::npos);
    CHECK(kWrongAnswers.count(e.name));
    CHECK(exercise::targets(e).back() == "lessons/lesson_" + e.lesson);
  }
  std::set<std::string> marked;
  for (const char* folder : {"core", "nn", "optim", "io", "data", "models", "dist"})
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(LADDER_SOURCE_DIR) / folder))
      if (entry.path().extension() == ".cpp" || entry.path().extension() == ".h")
        for (const std::string& name : exercise::marked_names(read_text(entry.path()))) marked.insert(name);
  CHECK(marked == names);
}

TEST_CASE("the first failure of a doctest run, in words: the logged message, else the values, else the exception") {
  const std::string logged =
      "[doctest] ...\n===\n/x/test_gradcheck.cpp:331:\nTEST CASE:  every op\n  tanh\n\n"
      "/x/test_gradcheck.cpp:335: ERROR: CHECK( result.ok ) is NOT correct!\n  values: CHECK( false )\n"
      "  logged: tanh: input 0 element 1: backward gives 0.8, finite differences give 0.4\n\n===\n";
  CHECK(exercise::first_failure(logged) ==
        "/x/test_gradcheck.cpp:335: tanh: input 0 element 1: backward gives 0.8, finite differences give 0.4");
  CHECK(exercise::first_failure("/x/t.cpp:5: ERROR: CHECK( a == 2 ) is NOT correct!\n  values: CHECK( 3 == 2 )\n\n") ==
        "/x/t.cpp:5: CHECK( a == 2 ), which was CHECK( 3 == 2 )");
  CHECK(exercise::first_failure("/x/t.cpp:5: ERROR: test case THREW exception: exercise e: not written yet\n") ==
        "/x/t.cpp:5: test case THREW exception: exercise e: not written yet");
  CHECK(exercise::first_failure("[doctest] Status: SUCCESS!\n").empty());
  // An exception in a subcase is named in a later block; the case's logged context goes beside it.
  CHECK(exercise::first_failure("/x/t.cpp:5: ERROR: test case THREW exception: exception thrown in subcase - will translate later "
                                "when the whole test case has been exited\n\n===\n"
                                "/x/t.cpp:5: ERROR: test case THREW exception: exercise e: not written yet\n"
                                "  logged: op tanh\n\n") ==
        "/x/t.cpp:5: test case THREW exception: exercise e: not written yet (op tanh)");
}

TEST_CASE("start writes the learner's copy with the stub and the hint, refuses to start twice; diff and reset") {
  TempDir workspace("exercise_workspace");
  const Ran started = exercise_command(workspace.path, "start tanh_backward");
  INFO(started.output);
  REQUIRE(started.status == 0);
  const fs::path copy = workspace.path / "tanh_backward" / "unary.cpp";
  const std::string text = read_text(copy);
  CHECK(text.find("exercise tanh_backward\", \"not written yet") != std::string::npos);
  CHECK(text.find("return 1 - y * y;") == std::string::npos);
  CHECK(read_text(workspace.path / "tanh_backward" / "HINT.md").find("tanh' = 1 - tanh^2") != std::string::npos);
  CHECK(exercise_command(workspace.path, "list").output.find("tanh_backward      core/ops/unary.cpp                   started") !=
        std::string::npos);
  const Ran again = exercise_command(workspace.path, "start tanh_backward");
  CHECK(again.status == 2);
  CHECK(says_all(again.output, {"is started already", "reset tanh_backward"}));
  CHECK(read_text(copy) == text);  // the refusal left the learner's work alone
  CHECK(says_all(exercise_command(workspace.path, "diff tanh_backward").output,
                 {"--- original", "+++ yours", "-                  [](float, float y) { return 1 - y * y; }", "+", "not written yet"}));
  CHECK(exercise_command(workspace.path, "solution tanh_backward").output.find("return 1 - y * y;") != std::string::npos);
  const Ran unknown = exercise_command(workspace.path, "check no_such_exercise");
  CHECK(unknown.status == 2);
  CHECK(says_all(unknown.output, {"there is no exercise 'no_such_exercise'", "tanh_backward"}));
  CHECK(exercise_command(workspace.path, "reset tanh_backward").status == 0);
  CHECK_FALSE(fs::exists(copy));
  CHECK(says_all(exercise_command(workspace.path, "check tanh_backward").output, {"is not started", "start tanh_backward"}));
}

TEST_CASE("for every exercise the check can fail: the stub fails it, the original passes it, a wrong answer fails it naming the quantity") {
  TempDir workspace("exercise_checks");
  const exercise::Places places = places_in(workspace.path);
  for (const Exercise& e : exercise::catalog()) {
    INFO(e.name);
    REQUIRE(exercise_command(workspace.path, "start " + e.name).status == 0);
    const Ran stub = exercise_command(workspace.path, "check " + e.name);
    INFO(stub.output);
    CHECK(stub.status == 1);
    CHECK(stub.output.find("exercise " + e.name + ": not written yet") != std::string::npos);
    size_t failed_checks = 0;  // every check holds the region: none passes without it
    for (size_t at = stub.output.find("FAILED\n"); at != std::string::npos; at = stub.output.find("FAILED\n", at + 1)) ++failed_checks;
    CHECK(failed_checks == e.checks.size());

    const fs::path copy = exercise::learner_file(places, e);
    const std::string original = exercise::original_text(places, e);
    overwrite(copy, original);
    const Ran passed = exercise_command(workspace.path, "check " + e.name);
    INFO(passed.output);
    CHECK(passed.status == 0);
    CHECK(passed.output.find("lesson " + e.lesson + " --quick, with your code") != std::string::npos);
    CHECK(passed.output.find("check " + e.name + ": passed") != std::string::npos);

    const WrongAnswer& wrong = kWrongAnswers.at(e.name);
    const size_t at = original.find(wrong.original, exercise::find_region(original, e.name, e.file).begin);
    REQUIRE(at != std::string::npos);
    overwrite(copy, std::string(original).replace(at, wrong.original.size(), wrong.wrong));
    const Ran failed = exercise_command(workspace.path, "check " + e.name + " --no-lesson");
    INFO(failed.output);
    CHECK(failed.status == 1);
    CHECK(failed.output.find(wrong.named) != std::string::npos);
    CHECK(failed.output.find("FAILED") != std::string::npos);
  }
}
