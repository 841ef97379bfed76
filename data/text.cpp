#include "data/text.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/file.h"
#include "core/random.h"

namespace ladder::data {

size_t utf8_char_length(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  if (n == 1) return 1;
  uint32_t code = lead & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto byte = static_cast<unsigned char>(text[i + k]);
    if ((byte >> 6) != 0x2) return 0;
    code = (code << 6) | (byte & 0x3F);
  }
  constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};  // shorter forms must be used when they fit
  if (code < kSmallest[n] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

namespace {

void check_text_size(const std::string& what, uint64_t bytes) {
  if (bytes > kMaxTextBytes)
    fail("read_text", what, " ", bytes, " bytes (", (bytes + (1 << 20) - 1) >> 20, " MiB); ladder reads at most ",
         kMaxTextBytes >> 20, " MiB of text, so give a smaller file (e.g. head -c 100M FILE > part.txt)");
}

// The regular files of a folder in name order, checked to hold at most kMaxTextBytes together.
std::vector<std::filesystem::path> files_in_folder(const std::string& path) {
  std::vector<std::filesystem::path> files;
  uint64_t total = 0;
  try {
    for (const auto& entry : std::filesystem::directory_iterator(path))
      if (entry.is_regular_file() && !entry.is_symlink()) {
        files.push_back(entry.path());
        total += entry.file_size();
      }
  } catch (const std::filesystem::filesystem_error& e) {
    fail("read_text", path, ": cannot read the folder: ", e.code().message());
  }
  if (files.empty()) fail("read_text", path, ": the folder has no files");
  check_text_size(cat(path, ": the files in the folder hold"), total);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string read_text_file(const std::string& path) {
  if (std::error_code error; std::filesystem::is_directory(path, error)) {
    std::string text;
    for (const auto& file : files_in_folder(path)) text += read_text_file(file.string()) + "\n";
    return text;
  }
  const RegularFile file("read_text", path);
  check_text_size(cat(path, ": the file holds"), file.size());
  std::string text(file.size(), '\0');
  file.read_at(0, text.data(), text.size());
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    fail("read_text", path, text.empty() ? ": the file is empty" : ": the file holds only blanks (spaces, tabs, line ends), no text");
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    fail("read_text", path, ": looks like a binary file (a NUL byte at offset ", nul, "); give a text file");
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_char_length(text, i);
    if (n == 0) fail("read_text", path, ": is not UTF-8 text (an invalid byte at offset ", i, ")");
    i += n;
  }
  return text;
}

std::vector<std::string> utf8_chars(const std::string& text) {
  std::vector<std::string> chars;
  for_each_char(text, [&chars](std::string_view c) { chars.emplace_back(c); });
  return chars;
}

std::vector<std::string> split_lines(const std::string& text, bool keep_empty) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (keep_empty || !line.empty()) lines.push_back(line);
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    out += line;
    out += '\n';
  }
  return out;
}

namespace {

// Whether a line holds only spaces, tabs and no-break spaces (U+00A0, U+202F): no word once split.
bool only_spaces(std::string_view line) {
  for (size_t i = 0; i < line.size();) {
    if (line[i] == ' ' || line[i] == '\t') ++i;
    else if (line.substr(i, 2) == "\xC2\xA0") i += 2;
    else if (line.substr(i, 3) == "\xE2\x80\xAF") i += 3;
    else return false;
  }
  return true;
}

// In lines mode each line is a sequence: one of spaces alone would be a sequence of no words.
void check_lines_hold_text(const std::string& path, const std::string& text) {
  std::istringstream in(text);
  int64_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.ends_with('\r')) line.pop_back();
    if (!line.empty() && only_spaces(line))
      fail("load_text", path, ":", number, ": the line holds only spaces (or no-break spaces); in lines mode each line is "
           "a sequence: delete the line or give --stream");
  }
}

}  // namespace

void keep_first(TextData& text, size_t train, size_t val) {
  text.train.resize(std::min(text.train.size(), train));
  text.val.resize(std::min(text.val.size(), val));
}

TextData load_text(const TextOptions& options) {
  if (options.data.empty()) fail("load_text", "no training file given (--data)");
  if (!(options.val_fraction > 0 && options.val_fraction < 1))
    fail("load_text", "val_fraction must be in (0, 1), got ", options.val_fraction);
  const std::string data = read_text_file(options.data);
  if (options.lines) check_lines_hold_text(options.data, data);
  std::vector<std::string> lines = split_lines(data, options.keep_empty_lines);
  const std::set<std::string> distinct = [&] {
    std::set<std::string> s;
    for (const std::string& line : lines)
      for_each_char(line, [&s](std::string_view c) { s.insert(std::string(c)); });
    return s;
  }();
  if (distinct.size() < 2)
    fail("load_text", options.data, ": the text has ", distinct.size(),
         " distinct character(s); a language model needs at least two to learn anything");

  TextData out;
  out.train_source = options.data;
  if (!options.val.empty()) {
    out.train = std::move(lines);
    const std::string val = read_text_file(options.val);
    if (options.lines) check_lines_hold_text(options.val, val);
    out.val = split_lines(val, options.keep_empty_lines);
    out.val_source = options.val;
    return out;
  }
  // Units to hold out: single lines, or in stream mode blocks of consecutive lines.
  const size_t block = options.lines ? 1 : 16;
  std::vector<std::vector<std::string>> units;
  for (size_t i = 0; i < lines.size(); i += block)
    units.emplace_back(lines.begin() + static_cast<std::ptrdiff_t>(i),
                       lines.begin() + static_cast<std::ptrdiff_t>(std::min(lines.size(), i + block)));
  if (units.size() < 2 && lines.size() == 1)
    fail("load_text", options.data, ": the text is one line (", lines.front().size(),
         " bytes), and validation text is held out by whole lines: there is no line to hold out; break the text into "
         "lines or give a separate --val file");
  if (units.size() < 2)
    fail("load_text", options.data, ": ", lines.size(), " lines make ", units.size(), " block of ", block,
         " lines, too few to hold one out for validation; give more text or a separate --val file");
  std::vector<size_t> order(units.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Generator gen(options.seed);
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[gen.randint(0, static_cast<int64_t>(i) + 1)]);
  const size_t held = std::clamp<size_t>(static_cast<size_t>(options.val_fraction * static_cast<float>(units.size()) + 0.5f), 1,
                                         units.size() - 1);
  std::vector<bool> is_val(units.size(), false);
  for (size_t i = 0; i < held; ++i) is_val[order[i]] = true;
  for (size_t u = 0; u < units.size(); ++u)  // keep the original order inside each side
    for (const std::string& line : units[u]) (is_val[u] ? out.val : out.train).push_back(line);
  out.val_source = options.data + " (held-out " + std::to_string(static_cast<int>(options.val_fraction * 100 + 0.5f)) + "%, seed " +
                   std::to_string(options.seed) + ")";
  return out;
}

}  // namespace ladder::data
