// The files a program writes into a folder of its own, kept plain: a link there would have it
// write (or read) whatever the link points at, a named pipe would hang it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ladder::io {

// What stands at `path` if it is neither a regular file nor a folder: "a link" (never followed),
// "not a regular file" (a named pipe, a device, a socket); "" for a file, a folder or nothing.
std::string not_a_file(const std::filesystem::path& path);

// Removes each of `paths` that not_a_file names (a link itself, never what it points at) and
// returns them as one list, "metrics.csv (a link), plot.png (not a regular file)"; "" when none.
std::string remove_not_files(const std::vector<std::filesystem::path>& paths);

}  // namespace ladder::io
