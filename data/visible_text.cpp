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

namespace {

// The length of the well-formed UTF-8 sequence that starts `text`, or 0 when it does not start one
// (Unicode's table 3-7: the second byte's range depends on the first; no surrogates, nothing past U+10FFFF).
size_t utf8_sequence(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char first = byte(0);
  if (first < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the second byte's range
  if (first >= 0xc2 && first <= 0xdf) length = 2;
  else if (first >= 0xe0 && first <= 0xef) length = 3, low = first == 0xe0 ? 0xa0 : 0x80, high = first == 0xed ? 0x9f : 0xbf;
  else if (first >= 0xf0 && first <= 0xf4) length = 4, low = first == 0xf0 ? 0x90 : 0x80, high = first == 0xf4 ? 0x8f : 0xbf;
  else return 0;
  if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  return length;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t length = utf8_sequence(text);
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
