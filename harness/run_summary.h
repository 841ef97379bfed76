// summary.json as a file: written atomically, read back by the next run into the folder.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ladder::harness {

// Replaces the file at `path` with `json` atomically (a new file renamed over the old).
void write_json(const std::string& path, const nlohmann::ordered_json& json);

// The files an earlier run's summary.json lists (relative to the folder), none outside it: a
// summary edited by hand must not make a run remove anything else. Nothing when it is unreadable.
std::vector<std::filesystem::path> files_listed(const std::filesystem::path& summary);

// A number for JSON, which has no NaN or infinity: those become "nan", "inf", "-inf".
nlohmann::ordered_json json_number(double value);

}  // namespace ladder::harness
