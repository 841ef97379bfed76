// --part N on the lessons with numbered parts (12 to 15, 17): that part alone runs, summary.json holds
// its metrics only, and a part the lesson does not have is refused before any work.
#include "lessons/lesson_checks.h"

namespace fs = std::filesystem;
using namespace ladder::testing;

namespace {

// The metrics of a --quick run of `lesson` with `args` (--part or --tasks), and its output; fails
// unless it ran.
std::pair<nlohmann::json, std::string> run_part(const std::string& lesson, const std::string& args) {
  TempDir out("part_" + lesson);
  const Ran ran = run_lesson(lesson, "--quick --threads 2 " + args + " --out " + out.path.string());
  INFO(lesson, " ", args, "\n", ran.output);
  REQUIRE(ran.status == 0);
  return {summary_of(out.path)["metrics"], ran.output};
}

std::vector<std::string> keys(const nlohmann::json& metrics) {
  std::vector<std::string> names;
  for (const auto& [name, value] : metrics.items()) names.push_back(name);
  return names;
}

}  // namespace

TEST_CASE("lesson 12 --part 1: the three ways alone, not the maps, ranks, GPTs or costs") {
  const auto [metrics, output] = run_part("12_linear_attention", "--part 1");
  INFO(output);
  std::vector<std::string> names = keys(metrics);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"chunked_vs_quadratic", "recurrent_vs_quadratic", "state_floats"});
  CHECK(output.find("== 1. Transformers are RNNs") != std::string::npos);
  for (const char* later : {"== 2.", "== 3.", "== 4.", "== 5."}) CHECK(output.find(later) == std::string::npos);
}

TEST_CASE("lesson 13 --part 2: the task alone") {
  const auto [metrics, output] = run_part("13_bigbird", "--part 2");
  INFO(output);
  CHECK(metrics.contains("task_chance"));
  for (const auto& name : keys(metrics)) CHECK((name.starts_with("task_") || name == "window_layers_needed"));
  CHECK(output.find("== 2. the task") != std::string::npos);
  for (const char* other : {"== 1.", "== 3.", "== 4."}) CHECK(output.find(other) == std::string::npos);
}

TEST_CASE("lesson 14 --part 1: the small VQ layer alone") {
  const auto [metrics, output] = run_part("14_transformer_vq", "--part 1");
  INFO(output);
  CHECK(keys(metrics) == std::vector<std::string>{"blockwise_vs_quadratic", "blockwise_vs_quadratic_grad", "exact_codebook_vs_full"});
  for (const char* later : {"== 2.", "== 3."}) CHECK(output.find(later) == std::string::npos);
}

TEST_CASE("lesson 15 --part 5: the circuit alone; --part 1 the tasks, with no metrics") {
  const auto [metrics, output] = run_part("15_long_range", "--part 5 --kinds full");
  INFO(output);
  CHECK(keys(metrics) == std::vector<std::string>{"circuit_acc_full"});
  CHECK(output.find("== 5. the circuit") != std::string::npos);
  for (const char* other : {"== 3. results", "== 4."}) CHECK(output.find(other) == std::string::npos);
  for (const char* task : {"== 1a. ListOps", "== 1b."}) CHECK(output.find(task) == std::string::npos);
  const auto [none, tasks] = run_part("15_long_range", "--part 1");
  CHECK((none.is_object() && none.empty()));
  CHECK(tasks.find("== 1a. ListOps") != std::string::npos);
  CHECK(tasks.find("== 1b. multi-query associative recall") != std::string::npos);
}

TEST_CASE("lesson 15 --tasks listops describes ListOps alone among the tasks") {
  const auto [metrics, output] = run_part("15_long_range", "--tasks listops --kinds full");
  INFO(output);
  CHECK(metrics.contains("test_acc_listops_full"));
  CHECK(!metrics.contains("test_acc_recall_full"));
  CHECK(output.find("== 1a. ListOps") != std::string::npos);
  CHECK(output.find("== 1b.") == std::string::npos);
}

TEST_CASE("lesson 17 --part 1: the state as a memory alone, no layer, recall or GPT") {
  const auto [metrics, output] = run_part("17_delta_rule", "--part 1");
  INFO(output);
  for (const auto& name : keys(metrics))
    CHECK((name.starts_with("memory_") || name.starts_with("overwrite_") || name.starts_with("untouched_") ||
           name.starts_with("forget_")));
  CHECK(metrics.contains("overwrite_delta"));
  CHECK(output.find("== 1. The state as a memory") != std::string::npos);
  for (const char* later : {"== 2.", "== 3.", "== 4."}) CHECK(output.find(later) == std::string::npos);
}

TEST_CASE("a part the lesson does not have is refused, naming its parts; lesson 15 takes --part or --tasks") {
  check_refused("12_linear_attention", "--quick --part 6", {"--part", "from 0 to 5", "6"});
  check_refused("13_bigbird", "--quick --part 5", {"--part", "from 0 to 4"});
  check_refused("14_transformer_vq", "--quick --part 4", {"--part", "from 0 to 3"});
  check_refused("15_long_range", "--quick --part -1", {"--part", "from 0 to 5"});
  check_refused("15_long_range", "--quick --part 4 --tasks capacity", {"--part", "--tasks", "give one"});
  check_refused("17_delta_rule", "--quick --part 5", {"--part", "from 0 to 4"});
}
