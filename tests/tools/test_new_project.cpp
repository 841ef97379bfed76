// ./ladder new: the refusals, each in one line with status 2 and nothing written; the project it
// writes, configured against this build folder, built, trained and passing its own test; and the
// same project against ladder installed by cmake --install (cmake/package.cmake).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>

#include "lessons/lesson_runner.h"

namespace fs = std::filesystem;
using namespace ladder::testing;

namespace {

const fs::path kSource = LADDER_SOURCE_DIR;

Ran ladder_new(const fs::path& from, const std::string& args) {
  return run_command("cd '" + from.string() + "' && '" + (kSource / "ladder").string() + "' new " + args);
}

// ladder's own warnings (CMakeLists.txt), errors as in CI.
const std::string kWarnings = "-Wall -Wextra -Wpedantic -Wno-missing-field-initializers -Wno-restrict -Werror";

// Configures and builds the project in `folder`, with `find` telling CMake where ladder is.
Ran build(const fs::path& folder, const std::string& find) {
  const std::string build_dir = (folder / "build").string();
  const Ran configured = run_command(std::string(LADDER_CMAKE) + " -S '" + folder.string() + "' -B '" + build_dir + "' -G '" +
                                     LADDER_GENERATOR + "' -DCMAKE_CXX_COMPILER='" + LADDER_CXX +
                                     "' -DCMAKE_CXX_FLAGS='" + kWarnings + "' " + find);
  if (configured.status != 0) return configured;
  return run_command(std::string(LADDER_CMAKE) + " --build '" + build_dir + "'");
}

// CMake's messages, their lines joined: it wraps them at its own width.
std::string one_line(const std::string& text) {
  std::string joined;
  for (const char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) joined += c;
    else if (!joined.empty() && joined.back() != ' ') joined += ' ';
  return joined;
}

void check_new_refused(const fs::path& from, const std::string& args, const std::string& message) {
  const Ran ran = ladder_new(from, args);
  INFO("./ladder new ", args, "\n", ran.output);
  CHECK(ran.status == 2);
  CHECK(ran.output == "ladder: " + message + "\n");
}

}  // namespace

TEST_CASE("./ladder new refuses a missing or bad name, a folder in use and a place inside ladder, writing nothing") {
  const TempDir temp("new_refusals");
  fs::create_directories(temp.path / "used");
  std::ofstream(temp.path / "used" / "notes.txt") << "mine\n";
  std::ofstream(temp.path / "afile") << "a file\n";
  check_new_refused(temp.path, "", "new needs the project's name, e.g. ./ladder new mymodel");
  check_new_refused(temp.path, "one two", "new takes one name, not 'one two'");
  const std::string bad_name = "cannot name a project: it names the folder, the program and its CMake project, so it "
                               "takes letters, digits and _, and starts with a letter";
  check_new_refused(temp.path, "my-model", "'my-model' " + bad_name);
  check_new_refused(temp.path, "2model", "'2model' " + bad_name);
  check_new_refused(temp.path, "test", "'test' cannot name a project: CMake keeps the name for a target of its own");
  check_new_refused(temp.path, "used", "used exists and is not empty; choose another name, or remove it");
  check_new_refused(temp.path, "afile", "afile exists and is not a folder");
  check_new_refused(temp.path, "afile/mymodel", "cannot create the folder afile/mymodel");
  const fs::path inside = kSource / "docs" / "mymodel";
  check_new_refused(temp.path, inside.string(),
                inside.string() + " is inside ladder's own folder (" + fs::canonical(kSource).string() +
                    "), where the project would be mixed with ladder's sources; write it beside ladder: ./ladder new ../mymodel");
  CHECK_FALSE(fs::exists(inside));
  CHECK_FALSE(fs::exists(temp.path / "mymodel"));
  CHECK(std::distance(fs::directory_iterator(temp.path / "used"), fs::directory_iterator()) == 1);
}

TEST_CASE("./ladder new run inside ladder's folder writes the project beside it") {
  // A copy of what the command reads stands in for ladder's folder, so that beside it is temporary.
  const TempDir temp("new_beside");
  const fs::path copy = temp.path / "ladder";
  fs::create_directories(copy / "tools");
  fs::copy_file(kSource / "ladder", copy / "ladder");
  fs::copy(kSource / "tools" / "new_project", copy / "tools" / "new_project");
  const Ran ran = run_command("cd '" + (copy / "tools").string() + "' && ../ladder new mymodel");
  INFO(ran.output);
  CHECK(ran.status == 0);
  CHECK(says_all(ran.output, {"wrote " + (temp.path / "mymodel").string() + "/ (beside ladder"}));
  CHECK(fs::exists(temp.path / "mymodel" / "mymodel.cpp"));
  CHECK_FALSE(fs::exists(copy / "tools" / "mymodel"));
}

TEST_CASE("the project ./ladder new writes builds against this build folder, trains and passes its own test") {
  const TempDir temp("new_project");
  fs::create_directories(temp.path);
  const Ran written = ladder_new(temp.path, "mymodel");
  INFO(written.output);
  REQUIRE(written.status == 0);
  const fs::path project = temp.path / "mymodel";
  CHECK(says_all(written.output, {"wrote " + project.string() + "/", "mymodel.cpp", "CMakeLists.txt", "cmake -B build"}));
  for (const char* file : {"mymodel.cpp", "CMakeLists.txt"})
    CHECK_MESSAGE(read_text(project / file).find("@") == std::string::npos, file, " keeps a placeholder of the template");

  const Ran built = build(project, "-Dladder_DIR='" LADDER_BUILD_DIR "'");
  INFO(built.output);
  REQUIRE(built.status == 0);
  const Ran tested = run_command(std::string(LADDER_CTEST) + " --test-dir '" + (project / "build").string() + "' --output-on-failure");
  INFO(tested.output);
  CHECK(tested.status == 0);
  const nlohmann::json summary = summary_of(project / "build" / "test_run");
  CHECK(summary["status"] == "finished");
  CHECK(summary["metrics"]["test_acc"].get<double>() >= 0.9);
  for (const char* file : {"metrics.csv", "loss.png", "regions.png", "model.safetensors"})
    CHECK_MESSAGE(fs::exists(project / "build" / "test_run" / file), file);

  const std::string program = (project / "build" / "mymodel").string();
  CHECK(run_command(program + " --help").output.find("Usage: mymodel [OPTIONS]") != std::string::npos);
  const Ran short_run = run_command(program + " --steps 20 --expect-accuracy 1 --out '" + (temp.path / "short").string() + "'");
  CHECK(short_run.status == 2);
  CHECK(says_all(short_run.output, {"error: mymodel: test accuracy ", " is below --expect-accuracy 1"}));
  CHECK(summary_of(temp.path / "short")["status"] == "failed");
}

TEST_CASE("after cmake --install, find_package(ladder) finds it in the prefix, and refuses it without its libraries") {
  const TempDir temp("new_install");
  const fs::path prefix = temp.path / "prefix";
  const Ran installed = run_command(std::string(LADDER_CMAKE) + " --install '" LADDER_BUILD_DIR "' --prefix '" + prefix.string() + "'");
  INFO(installed.output);
  REQUIRE(installed.status == 0);
  CHECK(fs::exists(prefix / "include" / "ladder" / "harness" / "run.h"));
  REQUIRE(ladder_new(temp.path, "mymodel").status == 0);
  const fs::path project = temp.path / "mymodel";

  const Ran built = build(project, "-DCMAKE_PREFIX_PATH='" + prefix.string() + "'");
  INFO(built.output);
  REQUIRE(built.status == 0);
  CHECK(says_all(read_text(project / "build" / "CMakeCache.txt"), {"ladder_DIR:PATH=" + (prefix / "lib" / "cmake" / "ladder").string()}));
  const Ran trained = run_command((project / "build" / "mymodel").string() + " --steps 20 --out '" + (temp.path / "run").string() + "'");
  INFO(trained.output);
  CHECK(trained.status == 0);

  // The same prefix on a machine without the OpenBLAS ladder was built with.
  const fs::path config = prefix / "lib" / "cmake" / "ladder" / "ladderConfig.cmake";
  std::string text = read_text(config);
  const size_t at = text.find("libopenblas");
  REQUIRE(at != std::string::npos);
  text.replace(at, 3, "gone_");
  std::ofstream(config) << text;
  fs::remove_all(project / "build");
  const Ran refused = build(project, "-DCMAKE_PREFIX_PATH='" + prefix.string() + "'");
  INFO(refused.output);
  CHECK(refused.status != 0);
  CHECK(says_all(one_line(refused.output), {"ladder was built with ", "gone_openblas.so, which is missing: run ladder's ./ladder setup"}));
}
