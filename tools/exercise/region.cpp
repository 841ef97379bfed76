#include "region.h"

#include <sstream>

#include "core/error.h"

namespace ladder::exercise {

namespace {

constexpr const char* kOpening = "// exercise: ";
constexpr const char* kClosing = "// end of exercise: ";

// Where each line of `text` holding exactly `marker` + `name` (after its indentation) starts.
std::vector<size_t> marker_lines(const std::string& text, const std::string& marker, const std::string& name) {
  std::vector<size_t> found;
  for (size_t start = 0; start < text.size();) {
    const size_t newline = text.find('\n', start);
    const size_t stop = newline == std::string::npos ? text.size() : newline;
    const size_t code = text.find_first_not_of(" \t", start);
    if (code < stop && text.compare(code, stop - code, marker + name) == 0) found.push_back(start);
    start = stop + 1;
  }
  return found;
}

}  // namespace

Region find_region(const std::string& text, const std::string& name, const std::string& file) {
  const std::vector<size_t> opening = marker_lines(text, kOpening, name), closing = marker_lines(text, kClosing, name);
  if (opening.size() != 1 || closing.size() != 1)
    fail("exercise", file, " should hold one line '", kOpening, name, "' and one line '", kClosing, name, "', but holds ",
         opening.size(), " and ", closing.size(), (opening.empty() || closing.empty() ? ": was a marker deleted?" : ""));
  if (closing[0] < opening[0]) fail("exercise", file, ": '", kClosing, name, "' comes before '", kOpening, name, "'");
  Region region;
  region.begin = text.find('\n', opening[0]) + 1;
  region.end = closing[0];
  region.indent = text.substr(opening[0], text.find_first_not_of(" \t", opening[0]) - opening[0]);
  return region;
}

std::string region_code(const std::string& text, const Region& region) {
  return text.substr(region.begin, region.end - region.begin);
}

std::string with_region(const std::string& text, const Region& region, const std::string& code) {
  std::string indented;
  std::istringstream lines(code);
  for (std::string line; std::getline(lines, line);) indented += (line.empty() ? "" : region.indent) + line + "\n";
  return text.substr(0, region.begin) + indented + text.substr(region.end);
}

std::vector<std::string> marked_names(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t code = line.find_first_not_of(" \t");
    if (code != std::string::npos && line.compare(code, std::string(kOpening).size(), kOpening) == 0)
      names.push_back(line.substr(code + std::string(kOpening).size()));
  }
  return names;
}

}  // namespace ladder::exercise
