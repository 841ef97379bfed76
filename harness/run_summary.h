// summary.json as a file: written atomically, read back by the next run into the folder.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/visible_text.h"

namespace ladder::harness {

// `json` with every string and every key made well-formed UTF-8 (data::valid_utf8: a byte that is
// not becomes \xNN), as JSON must be: a path, or a message quoting a file's bytes, may not be.
template <class Json>
Json utf8_json(const Json& json) {
  if (json.is_string()) return Json(data::valid_utf8(json.template get_ref<const typename Json::string_t&>()));
  Json out = json;
  if (json.is_array())
    for (size_t i = 0; i < json.size(); ++i) out[i] = utf8_json(json[i]);
  if (json.is_object()) {
    out = Json::object();
    for (const auto& [key, value] : json.items()) out[data::valid_utf8(key)] = utf8_json(value);
  }
  return out;
}

// Replaces the file at `path` with `json` (made UTF-8 by utf8_json) atomically: a new file renamed over the old.
void write_json(const std::string& path, const nlohmann::ordered_json& json);

// The files an earlier run's summary.json lists (relative to the folder) that inside_without_links
// accepts: a summary edited by hand must not make a run remove anything else. Nothing when it is unreadable.
std::vector<std::filesystem::path> files_listed(const std::filesystem::path& summary);
// Whether `name` (relative) is a regular file in `folder` or in its subfolders, reached through no
// symbolic link (neither a folder on the way nor the file is one), and not the run's lock.
bool inside_without_links(const std::filesystem::path& folder, const std::filesystem::path& name);

// A number for JSON, which has no NaN or infinity: those become "nan", "inf", "-inf".
nlohmann::ordered_json json_number(double value);

}  // namespace ladder::harness
