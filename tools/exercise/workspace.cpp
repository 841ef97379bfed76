#include "workspace.h"

#include <fstream>
#include <sstream>

#include "command.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/small_file.h"
#include "region.h"

namespace fs = std::filesystem;

namespace ladder::exercise {

namespace {

constexpr const char* kLastCheck = "last_check";

std::string read(const fs::path& path) { return io::read_small_file("exercise", path.string()); }

void write(const fs::path& path, const std::string& text) { io::write_atomically("exercise", path.string(), {text}); }

}  // namespace

fs::path exercise_folder(const Places& places, const Exercise& exercise) { return places.workspace / exercise.name; }

fs::path learner_file(const Places& places, const Exercise& exercise) {
  return exercise_folder(places, exercise) / fs::path(exercise.file).filename();
}

std::string original_text(const Places& places, const Exercise& exercise) { return read(places.root / exercise.file); }

std::string solution(const Places& places, const Exercise& exercise) {
  const std::string text = original_text(places, exercise);
  return region_code(text, find_region(text, exercise.name, exercise.file));
}

std::string learner_region(const Places& places, const Exercise& exercise) {
  const fs::path file = learner_file(places, exercise);
  if (!fs::exists(file))
    fail("exercise", exercise.name, " is not started: ./ladder exercise start ", exercise.name, " writes ", file.string());
  const std::string text = read(file);
  return region_code(text, find_region(text, exercise.name, file.string()));
}

std::string hint(const Places& places, const Exercise& exercise) {
  const fs::path note = places.root / "docs" / (exercise.lesson + ".md");
  std::istringstream lines(read(note));
  const std::string command = "`./ladder exercise start " + exercise.name + "`";
  std::string item;
  for (std::string line; std::getline(lines, line);) {
    if (item.empty()) {
      if (line.find(command) != std::string::npos) item = line.substr(line.find_first_not_of("- ")) + "\n";
    } else if (line.starts_with("  ") && line.find_first_not_of(' ') != std::string::npos) {
      item += line.substr(line.find_first_not_of(' ')) + "\n";  // the item's next lines
    } else {
      break;
    }
  }
  if (item.empty()) fail("exercise", note.string(), " has no item with ", command, ": the exercise's hint is missing");
  return item;
}

std::string status(const Places& places, const Exercise& exercise) {
  if (!fs::exists(learner_file(places, exercise))) return "not started";
  const fs::path last = exercise_folder(places, exercise) / kLastCheck;
  return fs::exists(last) ? read(last) : "started";
}

void record_check(const Places& places, const Exercise& exercise, bool passed) {
  write(exercise_folder(places, exercise) / kLastCheck, passed ? "passed" : "failed");
}

std::string start(const Places& places, const Exercise& exercise) {
  const fs::path file = learner_file(places, exercise);
  if (fs::exists(file))
    fail("exercise", exercise.name, " is started already: ", file.string(), " holds your version (./ladder exercise reset ",
         exercise.name, " starts it again, and loses it)");
  const std::string original = original_text(places, exercise);
  std::string text = with_region(original, find_region(original, exercise.name, exercise.file), stub_code(exercise));
  if (text.find("#include \"core/error.h\"") == std::string::npos) {  // the stub's ladder::fail, after the first include
    const size_t first = text.find("#include ");
    if (first == std::string::npos) fail("exercise", exercise.file, " includes nothing: the stub has no ladder::fail");
    text.insert(text.find('\n', first) + 1, "#include \"core/error.h\"\n");
  }
  const std::string advice = hint(places, exercise);
  fs::create_directories(exercise_folder(places, exercise));
  write(file, text);
  write(exercise_folder(places, exercise) / "HINT.md", "# " + exercise.name + "\n\n" + advice);
  return cat("exercise ", exercise.name, " started:\n  ", file.string(), "  ", exercise.file,
             " with the region between '// exercise: ", exercise.name, "' and its end for you to write\n  ",
             (exercise_folder(places, exercise) / "HINT.md").string(), "  the note's hint:\n\n", advice,
             "\nthen: ./ladder exercise check ", exercise.name, "\n");
}

std::string reset(const Places& places, const Exercise& exercise) {
  const fs::path folder = exercise_folder(places, exercise);
  if (!fs::exists(folder)) return cat("exercise ", exercise.name, " was not started: nothing to reset\n");
  fs::remove_all(folder);
  return cat("exercise ", exercise.name, " reset: ", folder.string(), " removed\n");
}

std::string diff(const Places& places, const Exercise& exercise) {
  const std::string yours = learner_region(places, exercise);
  const fs::path folder = exercise_folder(places, exercise) / "build";
  fs::create_directories(folder);
  write(folder / "original_region", solution(places, exercise));
  write(folder / "your_region", yours);
  const Ran ran = run_command("diff -u --label original --label yours " + shell_quoted(folder / "original_region") + " " +
                              shell_quoted(folder / "your_region"));
  if (ran.status > 1) fail("exercise", "diff failed: ", ran.output);
  return ran.output;
}

}  // namespace ladder::exercise
