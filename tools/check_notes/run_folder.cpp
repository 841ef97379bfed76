#include "run_folder.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.h"
#include "io/small_file.h"

namespace ladder::check_notes {
namespace fs = std::filesystem;
namespace {

// A run's JSON object (summary.json, timing.json), read bounded: a named pipe, a folder or a device
// is refused, not waited on; null when there is no such file.
nlohmann::json read_json(const fs::path& path) {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(path, error))) return nullptr;
  nlohmann::json parsed = nlohmann::json::parse(io::read_small_file("check-notes", path.string()), nullptr, false);
  if (parsed.is_discarded()) fail("check-notes", path.string(), " is not JSON");
  if (!parsed.is_object()) fail("check-notes", path.string(), " is not what a run writes (a JSON object)");
  return parsed;
}

// A member of a run's JSON object, or a refusal naming the file and the key.
const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& file) {
  if (!object.contains(key)) fail("check-notes", file, " has no '", key, "'");
  return object[key];
}

double as_number(const nlohmann::json& value, const std::string& what) {
  if (value.is_number()) return value.get<double>();
  if (value.is_boolean()) return value.get<bool>() ? 1 : 0;
  fail("check-notes", what, " is ", value.dump(), ", not a number");
}

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

// Whether a cell holds `wanted`: the same text, or the same number ("400" and "400.0").
bool cell_matches(const std::string& cell, const std::string& wanted) {
  if (cell == wanted) return true;
  char* end_cell = nullptr;
  char* end_wanted = nullptr;
  const double a = std::strtod(cell.c_str(), &end_cell), b = std::strtod(wanted.c_str(), &end_wanted);
  return !cell.empty() && !wanted.empty() && *end_cell == '\0' && *end_wanted == '\0' && a == b;
}

}  // namespace

void write_timing(const fs::path& folder, const Timing& t) {
  std::ofstream(folder / "timing.json") << nlohmann::json{{"seconds", t.seconds}, {"load_before", t.load_before},
                                                          {"load_after", t.load_after}, {"cores", t.cores}}
                                               .dump(2)
                                        << "\n";
}

RunFolder::RunFolder(fs::path folder) : folder_(std::move(folder)) {
  summary_ = read_json(folder_ / "summary.json");
  if (summary_.is_null()) fail("check-notes", folder_.string(), " has no summary.json: it is not a finished run");
  timing_ = read_json(folder_ / "timing.json");
}

double RunFolder::value(const Source& source) const {
  if (!source.file.empty()) return csv_value(source);
  if (source.key == "seconds")
    return as_number(timing_.is_null() ? member(summary_, "seconds", "summary.json") : member(timing_, "seconds", "timing.json"), "seconds");
  if (source.key == "load" || source.key == "cores") {
    if (timing_.is_null())
      fail("check-notes", folder_.string(), " has no timing.json: check-notes did not start this run, so its ", source.key,
           " is unknown");
    return as_number(member(timing_, source.key == "load" ? "load_before" : "cores", "timing.json"), source.key);
  }
  const nlohmann::json* at = &member(summary_, "metrics", "summary.json");
  std::stringstream path(source.key);
  for (std::string part; std::getline(path, part, '.');) {
    const bool index = !part.empty() && part.size() < 10 && std::all_of(part.begin(), part.end(), ::isdigit);  // below 2^31
    if (at->is_array() && index && std::stoul(part) < at->size()) at = &(*at)[std::stoul(part)];
    else if (at->is_object() && at->contains(part)) at = &(*at)[part];
    else fail("check-notes", "summary.json has no metric '", source.key, "'");
  }
  return as_number(*at, "metric '" + source.key + "'");
}

void RunFolder::check_exists(const Source& source) const {
  if (source.file.empty()) {
    value(source);
    return;
  }
  const std::vector<std::string> columns = csv_columns(source);
  std::vector<std::string> named = {source.key};
  for (const auto& condition : source.where) named.push_back(condition.first);
  for (const std::string& name : named)
    if (std::find(columns.begin(), columns.end(), name) == columns.end()) fail("check-notes", source.file, " has no column '", name, "'");
}

// A CSV of the run, read bounded (a pipe or a device is refused, not waited on), and only inside
// the run folder: a link that leads out of it is refused.
std::string RunFolder::csv_text(const Source& source) const {
  const fs::path path = folder_ / source.file;
  std::error_code error;
  if (!fs::exists(fs::symlink_status(path, error))) fail("check-notes", "the run wrote no ", source.file);
  const fs::path where = fs::weakly_canonical(path, error).lexically_relative(fs::weakly_canonical(folder_, error));
  if (where.empty() || *where.begin() == "..")
    fail("check-notes", path.string(), " is a link out of the run folder: a run writes its CSVs in its folder, as files");
  return io::read_small_file("check-notes", path.string(), uint64_t{64} << 20);
}

std::vector<std::string> RunFolder::csv_columns(const Source& source) const {
  std::istringstream in(csv_text(source));
  std::string header;
  std::getline(in, header);
  return split_cells(header);
}

double RunFolder::csv_value(const Source& source) const {
  const std::vector<std::string> columns = csv_columns(source);
  const auto column = [&](const std::string& name) {
    const auto found = std::find(columns.begin(), columns.end(), name);
    if (found == columns.end()) fail("check-notes", source.file, " has no column '", name, "'");
    return static_cast<size_t>(found - columns.begin());
  };
  std::istringstream in(csv_text(source));
  std::string line;
  std::getline(in, line);  // the header, read above
  const size_t wanted = column(source.key);
  std::vector<std::pair<size_t, std::string>> conditions;
  for (const auto& [name, value] : source.where) conditions.emplace_back(column(name), value);
  std::vector<std::string> chosen;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split_cells(line);
    if (cells.size() != columns.size()) continue;
    bool matches = true;
    for (const auto& [index, value] : conditions) matches = matches && cell_matches(cells[index], value);
    if (matches) chosen = cells;  // the last row that matches: a condition-less source reads the last row
    if (matches && !conditions.empty()) break;
  }
  if (chosen.empty()) {
    std::string where;
    for (const auto& [name, value] : source.where) where += (where.empty() ? "" : " and ") + name + " = " + value;
    fail("check-notes", source.file, where.empty() ? " has no rows" : " has no row where " + where);
  }
  char* end = nullptr;
  const double value = std::strtod(chosen[wanted].c_str(), &end);
  if (chosen[wanted].empty() || *end != '\0')
    fail("check-notes", source.file, "'s ", source.key, " is '", chosen[wanted], "', not a number");
  return value;
}

std::vector<std::string> non_default_flags(const nlohmann::json& summary, const std::string& help_text) {
  static const std::set<std::string> kIgnored = {"out", "threads", "resume", "stop-after"};
  // "  --steps INT>0=500   training steps": the flag, then its type up to the help text.
  static const std::regex kOption(R"(^\s+(?:-\w,)?--([\w-]+)(.*))");
  std::map<std::string, std::string> defaults;  // the flags whose default --help states
  std::istringstream in(help_text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, kOption)) continue;
    // CLI11 puts two spaces before the help text, one when the flag and its type fill the column.
    const std::string rest = m[2].str();  // " INT in [0, 1024]=0  threads ...", "  help", ""
    const size_t help = rest.find("  ");
    const std::string type = rest.substr(0, help);
    size_t equals = type.find('=');
    while (equals != std::string::npos && equals > 0 && type[equals - 1] == '>') equals = type.find('=', equals + 1);  // INT>=0=5
    if (type.empty()) defaults[m[1].str()] = "false";  // a flag without a value is off unless given
    else if (equals != std::string::npos && !type.starts_with(",")) {  // not "--lines,--stream{false}"
      const size_t end = help == std::string::npos ? type.find(' ', equals) : std::string::npos;
      defaults[m[1].str()] = type.substr(equals + 1, end == std::string::npos ? std::string::npos : end - equals - 1);
    }
  }
  std::vector<std::string> differ;
  nlohmann::json flags = summary.is_object() ? summary.value("flags", nlohmann::json::object()) : nlohmann::json::object();
  if (!flags.is_object()) flags = nlohmann::json::object();  // no flags to tell: none differs
  for (const auto& [name, value] : flags.items()) {
    const auto found = defaults.find(name);
    if (kIgnored.contains(name) || found == defaults.end()) continue;
    const std::string given = value.is_string() ? value.get<std::string>() : value.dump();
    if (!cell_matches(given, found->second)) differ.push_back("--" + name + " " + given + " (default " + found->second + ")");
  }
  return differ;
}

}  // namespace ladder::check_notes
