#include "markers.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string_view>

#include "data/visible_text.h"
#include "tools/trim.h"

namespace ladder::check_notes {
namespace {

using text::trim;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(trim(part));
  return parts;
}

// "metrics.csv:lr@step=400" -> {metrics.csv, lr, {{step, 400}}}; "test_acc" -> {"", test_acc, {}}.
std::optional<Source> parse_source(const std::string& text) {
  Source source;
  std::string rest = text;
  const size_t colon = rest.find(':');
  if (colon != std::string::npos) {
    source.file = rest.substr(0, colon);
    rest = rest.substr(colon + 1);
    if (!source.file.ends_with(".csv")) return std::nullopt;
  }
  const size_t at = rest.find('@');
  source.key = trim(rest.substr(0, at));
  if (source.key.empty()) return std::nullopt;
  if (at == std::string::npos) return source.file.empty() ? std::optional(source) : std::nullopt;  // a CSV names its row
  if (source.file.empty()) return std::nullopt;
  const std::string row = trim(rest.substr(at + 1));
  if (row == "last") return source;
  for (const std::string& condition : split(row, ',')) {
    const size_t equals = condition.find('=');
    if (equals == std::string::npos || equals == 0) return std::nullopt;
    source.where.emplace_back(trim(condition.substr(0, equals)), trim(condition.substr(equals + 1)));
  }
  return source;
}

// Whether a key's file lies inside the run folder by its name: no absolute path, no "..". (A link
// out is the run folder's to refuse, where the file is read.)
bool inside_run_folder(const std::string& file) {
  const std::filesystem::path path(file);
  return !path.has_root_path() && std::none_of(path.begin(), path.end(), [](const std::filesystem::path& part) { return part == ".."; });
}

// The figure that ends `text`: a number, maybe with thousands commas, an exponent, k, M or %, and a
// unit of time or memory after it ("62 s", "4.1 MiB").
const std::regex kFigure(R"((-?\d{1,3}(?:,\d{3})+|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(k|M|%)?(?:\s?(?:s|ms|min|KiB|MiB|GiB))?$)");

// The longest figure a marker may follow, in characters ("-1,234,567.891e-05 MiB" is 22).
constexpr size_t kFigureChars = 40;

double scale_of(const std::string& suffix) { return suffix == "k" ? 1e3 : suffix == "M" ? 1e6 : suffix == "%" ? 1e-2 : 1.0; }

std::string without_commas(std::string s) {
  std::erase(s, ',');
  return s;
}

}  // namespace

double rounding_tolerance(const std::string& figure_text) {
  std::smatch m;
  if (!std::regex_search(figure_text, m, kFigure)) return 0;
  const std::string number = without_commas(m[1].str());
  const size_t e = number.find_first_of("eE");
  const std::string mantissa = number.substr(0, e);
  // strtol saturates where stoi would throw: "1e99999" is no figure a run gives, but reads as one
  const long exponent = e == std::string::npos ? 0 : std::strtol(number.c_str() + e + 1, nullptr, 10);
  const size_t dot = mantissa.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
  return 0.5 * std::pow(10.0, static_cast<double>(exponent - decimals)) * scale_of(m[2].str());
}

bool drifted(const Marker& marker, double value) {
  const double allowed = marker.relative ? marker.tolerance * std::abs(value) : marker.tolerance;
  return !(std::abs(value - marker.figure) <= allowed * (1 + 1e-9) + 1e-12);
}

namespace {

// A word of a run-quick line is handed to the lesson as one argument, never to a shell; the
// characters are still kept to those flags and their values use, so that a note reads plainly.
bool plain_argument(const std::string& word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view(".,:/+-_=").find(static_cast<char>(c)) != std::string_view::npos;
  });
}

void read_quick_flags(const std::string& text, const std::string& where, Markers& out) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    if (!plain_argument(word)) {
      out.problems.push_back(where + "run-quick takes flags and values of letters, digits and . , : / + - _ =, not '" +
                             data::visible(word) + "'");
      return;
    }
    words.push_back(word);
  }
  if (!words.empty() && !words.front().starts_with("--")) {
    out.problems.push_back(where + "run-quick starts with a flag (--name), not '" + data::visible(words.front()) + "'");
    return;
  }
  out.quick_flags.insert(out.quick_flags.end(), words.begin(), words.end());
}

}  // namespace

Markers read_markers(const std::string& note_path, const std::string& markdown) {
  Markers out;
  std::istringstream in(markdown);
  int line_number = 0;
  bool in_fence = false;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find_first_not_of(' ') != std::string::npos && line.compare(line.find_first_not_of(' '), 3, "```") == 0) in_fence = !in_fence;
    if (in_fence && line.find("<!-- run:") != std::string::npos) {
      out.problems.push_back(note_path + ":" + std::to_string(line_number) + ": a marker inside a fenced block shows as text: put the figure in the prose");
      continue;
    }
    const size_t quick = line.find("<!-- run-quick:");
    if (quick != std::string::npos && line.find("-->", quick) != std::string::npos) {
      const size_t begin = quick + std::string("<!-- run-quick:").size();
      read_quick_flags(line.substr(begin, line.find("-->", quick) - begin),
                       note_path + ":" + std::to_string(line_number) + ": ", out);
    }
    for (size_t open = line.find("<!-- run:"); open != std::string::npos; open = line.find("<!-- run:", open + 1)) {
      const std::string where = note_path + ":" + std::to_string(line_number) + ": ";
      const size_t close = line.find("-->", open);
      if (close == std::string::npos) {
        out.problems.push_back(where + "a marker must close on its line: <!-- run: KEY -->");
        continue;
      }
      std::string body = trim(line.substr(open + 9, close - open - 9));
      Marker marker{.line = line_number};
      const size_t plus_minus = body.rfind("±");
      if (plus_minus != std::string::npos) {
        std::string tolerance = trim(body.substr(plus_minus + std::string("±").size()));
        body = trim(body.substr(0, plus_minus));
        marker.relative = tolerance.ends_with('%');
        if (marker.relative) tolerance.pop_back();
        char* end = nullptr;
        marker.tolerance = std::strtod(tolerance.c_str(), &end);
        if (tolerance.empty() || *end != '\0' || !(marker.tolerance >= 0) || !std::isfinite(marker.tolerance)) {
          out.problems.push_back(where + "tolerance '±" + tolerance + "' is not a number (write ±0.01 or ±5%)");
          continue;
        }
        if (marker.relative) marker.tolerance /= 100;
      }
      marker.key_text = body;
      const std::optional<Source> source = parse_source(body);
      if (!source) {
        out.problems.push_back(where + "'" + body + "' is not a key: write a metric (test_acc), or FILE.csv:COLUMN@last or FILE.csv:COLUMN@COLUMN=VALUE");
        continue;
      }
      if (!inside_run_folder(source->file)) {
        out.problems.push_back(where + "'" + body + "' names " + source->file +
                               ", a file outside the run folder: a key names a CSV the run wrote, by its name in the folder (metrics.csv:COLUMN@last)");
        continue;
      }
      marker.source = *source;
      // The figure is the end of the text before the marker; a figure is short, so only its last
      // kFigureChars characters are searched (the regex would recurse once per digit of a longer one).
      std::smatch m;
      const std::string before = line.substr(0, open);
      const size_t from = before.size() > kFigureChars ? before.size() - kFigureChars : 0;
      const std::string tail = before.substr(from);
      if (from > 0 && std::isdigit(static_cast<unsigned char>(before[from - 1])) && std::regex_search(tail, m, kFigure) &&
          m.position(0) == 0) {
        out.problems.push_back(where + "the figure before the marker '" + body + "' is longer than " + std::to_string(kFigureChars) +
                               " characters: no run gives one");
        continue;
      }
      if (!std::regex_search(tail, m, kFigure)) {
        out.problems.push_back(where + "the marker '" + body + "' must follow its figure directly: 0.935<!-- run: ... -->");
        continue;
      }
      marker.figure_text = m[0].str();
      marker.figure = std::strtod(without_commas(m[1].str()).c_str(), nullptr) * scale_of(m[2].str());
      if (!std::isfinite(marker.figure)) {
        out.problems.push_back(where + "the figure " + marker.figure_text + " is not a finite number");
        continue;
      }
      // A typeset minus (U+2212) before the figure is its sign, as a hyphen would be.
      if (tail.substr(0, static_cast<size_t>(m.position(0))).ends_with("\xE2\x88\x92")) {
        marker.figure = -marker.figure;
        marker.figure_text = "\xE2\x88\x92" + marker.figure_text;
      }
      if (plus_minus == std::string::npos) marker.tolerance = rounding_tolerance(marker.figure_text);
      out.found.push_back(marker);
    }
  }
  return out;
}

}  // namespace ladder::check_notes
