// A lesson's run folder as check-notes reads it: summary.json, the CSVs beside it, and timing.json,
// which check-notes writes after a run it started (the wall time and the machine's load).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "markers.h"

namespace ladder::check_notes {

// What check-notes measured around a run it started.
struct Timing {
  double seconds = 0;      // wall time of the process, start to exit
  double load_before = 0;  // 1-minute load average just before it started
  double load_after = 0;   // and just after it ended
  int cores = 0;
};

void write_timing(const std::filesystem::path& folder, const Timing& timing);

class RunFolder {
 public:
  // Throws ladder::Error when the folder has no summary.json.
  explicit RunFolder(std::filesystem::path folder);

  const nlohmann::json& summary() const { return summary_; }
  // Whether check-notes started this run and wrote its timing.json (its time, load and cores).
  bool has_timing() const { return !timing_.is_null(); }
  // The value `source` names: a metric of summary.json (dots go into objects and lists), "seconds"
  // (timing.json's, else summary.json's), "load" (timing.json's load before the run), "cores" (timing.json's), or a cell
  // of a CSV. Throws ladder::Error saying what is missing: the file, the column, the row, the key.
  double value(const Source& source) const;
  // For a CSV source, only that the file and every column it names exist (a --quick run has other
  // rows); for any other, value(). Throws as value() does.
  void check_exists(const Source& source) const;

 private:
  std::string csv_text(const Source& source) const;
  double csv_value(const Source& source) const;
  std::vector<std::string> csv_columns(const Source& source) const;
  std::filesystem::path folder_;
  nlohmann::json summary_;
  nlohmann::json timing_;  // null when check-notes did not start this run
};

// The flags of `summary` that differ from the defaults a lesson's --help states (where the run
// writes, its threads, resume and stop flags aside: they do not change the figures; so are the
// flags whose default --help leaves unsaid, such as --data), as "--steps 200 (default 3000)";
// empty for a default run.
std::vector<std::string> non_default_flags(const nlohmann::json& summary, const std::string& help_text);

}  // namespace ladder::check_notes
