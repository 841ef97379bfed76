#include "data/visible_text.h"

#include <cstdio>

#include "data/text.h"

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

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t length = utf8_char_length(text, 0);
    if (length > 0) {
      out.append(text.substr(0, length));
      text.remove_prefix(length);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(text.front()));
      out += escaped;
      text.remove_prefix(1);
    }
  }
  return out;
}

}  // namespace ladder::data
