// Writing a file so that a crash or a kill never leaves it half-written under its real name.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace ladder::io {

// Writes `parts` one after the other into a temporary file beside `path` (".<name>.tmp-<pid>"),
// flushes it to disk and renames it over `path`: readers see the old file or the new one.
// Temporary files that killed saves left in the folder are removed first: those of `path` or of
// another .safetensors file whose process (the pid in the name) is gone. Errors name `op`.
void write_atomically(const char* op, const std::string& path, std::initializer_list<std::string_view> parts);

}  // namespace ladder::io
