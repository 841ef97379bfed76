// ladder_check_notes: every figure a note quotes from its lesson's default run, compared with that
// run (./ladder check-notes [NN...]). Reads runs/NN_name/ when it holds a default run, else runs
// the lesson there first (recording its wall time and the machine's load in timing.json).
// --quick runs each lesson with --quick into --out and checks only that every marker names a value
// the run has (the keys of a quick run are those of a default one): the test suite's check.
// Exit status: 0 every figure agrees, 1 some drifted, 2 a marker, a key or a run failed.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "markers.h"
#include "io/small_file.h"
#include "run_folder.h"

namespace fs = std::filesystem;
using namespace ladder::check_notes;

namespace {

struct Options {
  fs::path root = ".";
  fs::path lessons;     // the built lesson executables
  fs::path runs;        // default: <root>/runs
  bool run = false;     // run the default lessons even where a default run exists
  bool quick = false;   // keys only, from --quick runs into `out`
  fs::path out;
  std::set<std::string> numbers;  // "05"; empty: every note with markers
};

const char* kUsage =
    "usage: ladder check-notes [NN...] [--runs DIR] [--run]\n"
    "       ladder check-notes --quick --out DIR [NN...]\n"
    "  compares every figure docs/NN_*.md marks (<!-- run: KEY -->) with lesson NN's default run:\n"
    "  DIR/NN_name/ (default runs/) when it holds a default run, else the lesson is run there first.\n"
    "  --run: run the lessons again (fresh times and load); --quick: check only that every marker\n"
    "  names a value that a --quick run into DIR has\n";

// A note, read bounded: a note that is a pipe or a device is refused, not waited on.
std::string read_text(const fs::path& path) { return ladder::io::read_small_file("check-notes", path.string()); }

double load_average() {
  double one_minute = 0;
  std::ifstream("/proc/loadavg") >> one_minute;
  return one_minute;
}

// The command's output, and its exit status (-1 when it did not exit).
using Environment = std::vector<std::pair<std::string, std::string>>;

// Runs `argv` as it is, each element one argument (no shell reads it), with `environment` added;
// what it prints and its errors come back through one pipe, with its exit status (-1: it did not exit).
std::pair<int, std::string> run_program(const std::vector<std::string>& argv, const Environment& environment = {}) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) ladder::fail("check-notes", "cannot make a pipe to run ", argv.front());
  const pid_t child = fork();
  if (child < 0) ladder::fail("check-notes", "cannot start ", argv.front());
  if (child == 0) {
    dup2(pipe_ends[1], STDOUT_FILENO);
    dup2(pipe_ends[1], STDERR_FILENO);
    close(pipe_ends[0]);
    close(pipe_ends[1]);
    for (const auto& [name, value] : environment) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot start %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(pipe_ends[1]);
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = read(pipe_ends[0], buf, sizeof buf)) != 0;) {
    if (n > 0) output.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR) break;
  }
  close(pipe_ends[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string joined(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) line += (line.empty() ? "" : " ") + word;
  return line;
}

// Runs lesson `name` into `folder` (lesson 16 on two processes, as ./ladder lesson 16 does) and
// records its time and the load around it. A default run's threads are pinned to the cores: left
// to itself a lesson runs fewer threads while other programs are busy, and BLAS then rounds
// differently, so its figures would depend on the load.
void run_lesson(const Options& o, const std::string& name, const fs::path& folder, const std::vector<std::string>& quick_flags) {
  std::vector<std::string> command = {(o.lessons / ("lesson_" + name)).string(), "--out", folder.string()};
  if (o.quick) {
    command.push_back("--quick");
    command.insert(command.end(), quick_flags.begin(), quick_flags.end());
  } else if (!name.starts_with("16_")) {
    command.insert(command.end(), {"--threads", std::to_string(sysconf(_SC_NPROCESSORS_ONLN))});
  }
  Environment environment;
  if (name.starts_with("16_")) {
    command.insert(command.begin(), {"mpirun", "-q", "--oversubscribe", "-np", "2"});
    command.insert(command.end(), {"--procs", "2"});
    environment = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};
  }
  std::printf("   running %s ...\n", joined(command).c_str());
  std::fflush(stdout);
  Timing timing{.load_before = load_average(), .cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))};
  const auto start = std::chrono::steady_clock::now();
  const auto [status, output] = run_program(command, environment);
  timing.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  timing.load_after = load_average();
  if (status != 0)  // the end of its output says why
    ladder::fail("check-notes", "lesson ", name, " failed (exit status ", status, "):\n",
                 output.substr(output.size() > 2000 ? output.size() - 2000 : 0));
  write_timing(folder, timing);
  std::ofstream(folder / "printed.txt") << output;  // what the lesson printed, for whoever writes its note
  std::printf("   ran in %.1f s; load %.1f before, %.1f after, on %d cores\n", timing.seconds, timing.load_before,
              timing.load_after, timing.cores);
}

// The run folder to read for lesson `name`: a default run, run first when needed (or a --quick run
// given `quick_flags`).
fs::path default_run(const Options& o, const std::string& name, const std::vector<std::string>& quick_flags) {
  if (o.quick) {
    const fs::path folder = o.out / name;
    fs::remove_all(folder);
    run_lesson(o, name, folder, quick_flags);
    return folder;
  }
  const fs::path folder = o.runs / name;
  if (fs::exists(folder / "summary.json")) {
    const RunFolder earlier(folder);
    const nlohmann::json status_value = earlier.summary().value("status", nlohmann::json());
    const std::string run_status = status_value.is_string() ? status_value.get<std::string>() : "";
    if (run_status != "finished")
      ladder::fail("check-notes", folder.string(), " holds a run that did not finish (status ", run_status.empty() ? "none" : run_status,
                   "): its figures are no default run's; finish it (./ladder lesson ", name.substr(0, 2), " --resume ", folder.string(),
                   ") or move it away, and check-notes runs the default there");
    const auto [status, help] = run_program({(o.lessons / ("lesson_" + name)).string(), "--help"});
    if (status != 0) ladder::fail("check-notes", "lesson_", name, " --help failed:\n", help);
    if (!earlier.summary().value("flags", nlohmann::json()).is_object())
      ladder::fail("check-notes", folder.string(), " holds a run whose summary.json records no flags: nothing tells it for a default run;",
                   " move it away (check-notes then runs the default there), or give --runs another folder");
    const std::vector<std::string> differ = non_default_flags(earlier.summary(), help);
    if (!differ.empty()) {
      std::string list;
      for (const std::string& flag : differ) list += "\n     " + flag;
      ladder::fail("check-notes", folder.string(), " is not a default run, its flags differ:", list,
                   "\n   move it away (check-notes then runs the default there), or give --runs another folder");
    }
    if (!o.run) {
      std::printf("   reading %s (a default run)\n", folder.string().c_str());
      return folder;
    }
  }
  run_lesson(o, name, folder, {});
  return folder;
}

struct Tally {
  int agree = 0, drifted = 0, failed = 0;
  int context = 0;  // the wall time, load and cores of a run check-notes did not start: nothing to check them against
};

void check_note(const Options& o, const fs::path& note, Tally& tally) {
  const std::string note_path = fs::relative(note, o.root).generic_string();
  const std::string name = note.stem().string();
  const Markers markers = read_markers(note_path, read_text(note));
  std::printf("== %s: %zu marked figures\n", note_path.c_str(), markers.found.size());
  for (const std::string& problem : markers.problems) std::printf("   marker: %s\n", problem.c_str()), ++tally.failed;
  if (markers.found.empty()) return;
  try {
    const RunFolder run(default_run(o, name, markers.quick_flags));
    for (const Marker& m : markers.found) {
      if (measured_around_run(m.source) && !run.has_timing()) {
        ++tally.context;
        continue;
      }
      try {
        if (o.quick) {
          run.check_exists(m.source);
          ++tally.agree;
          continue;
        }
        const double value = run.value(m.source);
        if (!drifted(m, value)) {
          ++tally.agree;
          continue;
        }
        ++tally.drifted;
        std::printf("   drifted: %s:%d: %s<!-- run: %s --> but the run has %.6g (tolerance ±%.3g%s)\n", note_path.c_str(), m.line,
                    m.figure_text.c_str(), m.key_text.c_str(), value, m.relative ? m.tolerance * 100 : m.tolerance, m.relative ? "%" : "");
      } catch (const ladder::Error& e) {
        ++tally.failed;
        std::printf("   key: %s:%d: %s\n", note_path.c_str(), m.line, e.what());
      }
    }
  } catch (const ladder::Error& e) {
    tally.failed += static_cast<int>(markers.found.size());
    std::printf("   %s\n", e.what());
  }
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&] {
      if (i + 1 >= argc) ladder::fail("check-notes", arg, " needs a value\n", kUsage);
      return std::string(argv[++i]);
    };
    if (arg == "--root") o.root = value();
    else if (arg == "--lessons") o.lessons = value();
    else if (arg == "--runs") o.runs = value();
    else if (arg == "--out") o.out = value();
    else if (arg == "--run") o.run = true;
    else if (arg == "--quick") o.quick = true;
    else if (arg.size() == 2 && std::isdigit(static_cast<unsigned char>(arg[0])) && std::isdigit(static_cast<unsigned char>(arg[1]))) o.numbers.insert(arg);
    else ladder::fail("check-notes", "'", arg, "' is neither a lesson number (05) nor a flag\n", kUsage);
  }
  if (o.lessons.empty()) o.lessons = o.root / "build" / "lessons";
  if (o.runs.empty()) o.runs = o.root / "runs";
  if (o.quick && o.out.empty()) ladder::fail("check-notes", "--quick needs --out DIR, the folder for its quick runs");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::printf("%s", kUsage);
    return 0;
  }
  try {
    const Options o = parse(argc, argv);
    std::vector<fs::path> notes;
    for (const auto& entry : fs::directory_iterator(o.root / "docs")) {
      const std::string stem = entry.path().stem().string();
      const bool lesson_note = entry.path().extension() == ".md" && stem.size() > 3 && std::isdigit(static_cast<unsigned char>(stem[0])) && stem[2] == '_';
      if (lesson_note && (o.numbers.empty() || o.numbers.contains(stem.substr(0, 2)))) notes.push_back(entry.path());
    }
    std::sort(notes.begin(), notes.end());
    for (const std::string& number : o.numbers)
      if (std::none_of(notes.begin(), notes.end(), [&](const fs::path& n) { return n.stem().string().starts_with(number + "_"); }))
        ladder::fail("check-notes", "there is no note docs/", number, "_*.md");
    Tally tally;
    for (const fs::path& note : notes) check_note(o, note, tally);
    std::printf("check-notes: %d figures %s, %d drifted, %d could not be checked", tally.agree,
                o.quick ? "name a value of the run" : "agree with the runs", tally.drifted, tally.failed);
    if (tally.context > 0) std::printf("; %d of time and load left out (runs check-notes did not start)", tally.context);
    std::printf("\n");
    return tally.failed > 0 ? 2 : tally.drifted > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
