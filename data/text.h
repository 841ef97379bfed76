// Loading text for the language-model lessons: checked reading, UTF-8 characters, and the
// train/validation split.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ladder::data {

// The most text read_text_file reads, from one file or a whole folder: generous for a corpus
// (enwik8 is 95 MiB), small enough that a wrong path cannot fill the memory.
inline constexpr uint64_t kMaxTextBytes = uint64_t{256} << 20;

// The whole file; for a folder, every regular file in it, in name order, one after the other
// (symbolic links are skipped: in /usr/share/common-licenses they repeat files). Throws
// ladder::Error naming the file when it is missing, not a regular file (a device, a named pipe),
// larger than kMaxTextBytes (checked before reading), empty, binary (a NUL byte) or not UTF-8.
std::string read_text_file(const std::string& path);

// Length in bytes of the UTF-8 character starting at text[i], or 0 when the bytes there are not
// valid UTF-8: a bad lead or continuation byte, an overlong form, a surrogate, or beyond U+10FFFF.
size_t utf8_char_length(std::string_view text, size_t i);

// Calls visit(std::string_view) with each character of a text in order, as a view of its bytes
// (a stray byte counts as one character). Nothing is copied: with a std::string per character
// (32 bytes each), loading and encoding a 10 MB line cost 800 MB.
template <class Visit>
void for_each_char(std::string_view text, Visit&& visit) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::max<size_t>(1, utf8_char_length(text, i));
    visit(text.substr(i, n));
    i += n;
  }
}

// The characters (Unicode code points, each as its UTF-8 bytes) of valid UTF-8 text.
std::vector<std::string> utf8_chars(const std::string& text);

// The lines of a text without their line endings, empty ones dropped unless `keep_empty`.
std::vector<std::string> split_lines(const std::string& text, bool keep_empty = false);

struct TextOptions {
  std::string data;           // training text: a file, or a folder of them
  std::string val;            // validation text; empty: split `data` instead
  bool lines = false;         // lines mode (each line its own sequence) or one stream
  bool keep_empty_lines = false;  // keep empty lines, so that a stream is the text as it is
  float val_fraction = 0.1f;  // the share of `data` held out when there is no `val`
  uint64_t seed = 0;          // which lines (or blocks of lines) are held out
};

struct TextData {
  std::vector<std::string> train, val;  // lines, in file order
  std::string train_source, val_source;  // where each came from, for printing
};

// Lines mode holds out whole lines; stream mode holds out blocks of 16 consecutive lines, so
// that both halves stay readable text. Throws when a side would be empty (saying so for a text of
// one line), when the text has fewer than two distinct characters (there is nothing to learn), or
// in lines mode for a line of spaces alone (naming the line).
TextData load_text(const TextOptions& options);

// A stream: the lines joined with "\n".
std::string join_lines(const std::vector<std::string>& lines);

// Keeps at most the first `train` and `val` lines (the small slice --quick runs on).
void keep_first(TextData& text, size_t train, size_t val);

}  // namespace ladder::data
