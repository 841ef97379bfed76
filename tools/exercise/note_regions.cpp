#include "note_regions.h"

#include <sstream>

namespace ladder::exercise {

namespace {

// The folded region of `exercise`, as Markdown inside a list item (indented by two).
std::string folded_region(const Places& places, const Exercise& exercise) {
  std::string code;
  std::istringstream lines(solution(places, exercise));
  for (std::string line; std::getline(lines, line);) code += "  " + line + "\n";
  return "\n  <details><summary>the region in " + exercise.file + ", as the library writes it: one answer</summary>\n\n"
         "  ```cpp\n" + code + "  ```\n\n  </details>\n\n";
}

}  // namespace

std::string with_regions(const Places& places, const std::string& markdown) {
  std::string out;
  const Exercise* open = nullptr;  // the exercise whose item the lines belong to
  std::istringstream lines(markdown);
  for (std::string line; std::getline(lines, line);) {
    const bool continues = open && line.starts_with("  ") && line.find_first_not_of(' ') != std::string::npos;
    if (open && !continues) {
      out += folded_region(places, *open);
      open = nullptr;
    }
    if (line.starts_with("- "))
      for (const Exercise& exercise : catalog())
        if (line.find("`./ladder exercise start " + exercise.name + "`") != std::string::npos) open = &exercise;
    out += line + "\n";
  }
  if (open) out += folded_region(places, *open);
  return out;
}

}  // namespace ladder::exercise
