// One trim for the readers of the notes: check-notes' figure markers, and the markdown reader the
// docs test and the book share.
#pragma once

#include <string>

namespace ladder::text {

// `s` without the spaces and tabs at its ends.
inline std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") + 1 - begin);
}

}  // namespace ladder::text
