// Smoke tests: every lesson runs with --quick, writes its files and learns; and the lesson
// command line answers --help and refuses bad flags with status 2.
#include "helpers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fs = std::filesystem;

namespace {

struct Ran {
  int status;
  std::string output;  // stdout and stderr together
};

Ran run_lesson(const std::string& name, const std::string& args) {
  const std::string command = std::string(LADDER_LESSON_DIR) + "/lesson_" + name + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[4096];
  while (const size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) : path(fs::temp_directory_path() / ("ladder_" + tag + "_" + std::to_string(getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// The values of one column of metrics.csv.
std::vector<double> column(const fs::path& csv, const std::string& name) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream head(line);
  for (std::string cell; std::getline(head, cell, ',');) header.push_back(cell);
  const auto at = std::find(header.begin(), header.end(), name);
  REQUIRE(at != header.end());
  std::vector<double> values;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string cell;
    for (auto i = header.begin(); i <= at; ++i) std::getline(row, cell, ',');
    values.push_back(std::stod(cell));
  }
  return values;
}

nlohmann::json summary_of(const fs::path& folder) {
  std::ifstream in(folder / "summary.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

void check_files(const fs::path& folder, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    CHECK_MESSAGE(fs::exists(folder / name), "missing ", (folder / name).string());
    if (fs::exists(folder / name)) CHECK_MESSAGE(fs::file_size(folder / name) > 0, "empty ", (folder / name).string());
  }
}

}  // namespace

TEST_CASE("lesson 00_autograd --quick: gradients agree, the MLP learns, the checkpoint reloads") {
  TempDir out("lesson00");
  const Ran ran = run_lesson("00_autograd", "--quick --out " + out.path.string());
  INFO(ran.output);
  REQUIRE(ran.status == 0);
  CHECK(ran.output.find("largest difference between backward() and finite differences") != std::string::npos);
  CHECK(ran.output.find("reloaded: predictions identical") != std::string::npos);
  check_files(out.path, {"metrics.csv", "summary.json", "graph.dot", "loss.png", "loss.svg", "fit.png", "fit.svg",
                         "model.safetensors"});
  const std::vector<double> loss = column(out.path / "metrics.csv", "train_loss");
  REQUIRE(loss.size() >= 5);
  CHECK(loss.back() < 0.2 * loss.front());
  const nlohmann::json summary = summary_of(out.path);
  CHECK(summary["lesson"] == "00_autograd");
  CHECK(summary["flags"]["quick"] == true);
  CHECK(summary["flags"]["lr"] == 0.01);
  CHECK(summary["metrics"]["val_loss"].get<double>() < summary["metrics"]["train_loss"].get<double>() * 10);
  CHECK(summary["seconds"].get<double>() > 0);
}

TEST_CASE("lesson command line: --help shows every flag with its default; bad input exits 2") {
  const Ran help = run_lesson("00_autograd", "--help");
  CHECK(help.status == 0);
  for (const char* flag : {"--steps", "--lr", "--batch", "--seed", "--threads", "--out", "--quick", "--hidden", "3000"})
    CHECK_MESSAGE(help.output.find(flag) != std::string::npos, "--help lacks ", flag);
  const Ran unknown = run_lesson("00_autograd", "--bogus");
  CHECK(unknown.status == 2);
  CHECK(unknown.output.find("--bogus") != std::string::npos);
  const Ran negative = run_lesson("00_autograd", "--steps -5");
  CHECK(negative.status == 2);
  CHECK(negative.output.find("--steps") != std::string::npos);
  const Ran not_a_number = run_lesson("00_autograd", "--lr fast");
  CHECK(not_a_number.status == 2);
  CHECK(not_a_number.output.find("fast") != std::string::npos);
  const Ran bad_folder = run_lesson("00_autograd", "--quick --out /proc/ladder-cannot-write-here");
  CHECK(bad_folder.status == 2);
  CHECK(bad_folder.output.find("error: run: cannot create the output folder /proc/ladder-cannot-write-here") != std::string::npos);
}
