#include "data/visible_text.h"

#include <cstdio>

namespace ladder::data {

std::string visible(std::string_view text) {
  std::string shown;
  shown.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\r') shown += "\\r";
    else if (c == '\t') shown += "\\t";
    else if (c == '\n') shown += "\\n";
    else if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      shown += escaped;
    } else shown += c;
  }
  return shown;
}

}  // namespace ladder::data
