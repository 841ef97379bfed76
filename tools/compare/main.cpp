// ladder_compare: runs of one lesson side by side (./ladder compare RUN_DIR RUN_DIR... [--out DIR]).
// Exit status 2 with one line when a folder is not a run, has no metrics, or the runs are of
// different lessons.
#include <cstdio>
#include <string>
#include <vector>

#include "compare.h"
#include "core/error.h"

int main(int argc, char** argv) {
  std::vector<std::string> folders;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--out" && i + 1 < argc) out = argv[++i];
    else if (arg == "--help" || arg == "-h" || arg.starts_with("--")) {
      std::printf("usage: ladder compare RUN_DIR RUN_DIR... [--out DIR]   (DIR: compare_<lesson> beside the first run)\n");
      return arg.starts_with("--h") || arg == "-h" ? 0 : 2;
    } else folders.push_back(arg);
  }
  try {
    const std::vector<ladder::compare::RunFolder> runs = ladder::compare::read_runs(folders);
    const std::filesystem::path folder = out.empty() ? ladder::compare::default_output(runs) : std::filesystem::path(out);
    std::printf("%s\n", ladder::compare::write_comparison(runs, folder).c_str());
    std::printf("compare: the plots and comparison.md are in %s (./ladder book adds the page)\n", folder.string().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
