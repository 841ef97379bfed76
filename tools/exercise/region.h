// An exercise's region: the lines of real library code between two one-line markers,
//
//   // exercise: NAME
//   ...the code the learner writes...
//   // end of exercise: NAME
//
// found in a file's text, read, and replaced. The markers stay where they are, so that the
// learner's copy of the file still shows where the region is.
#pragma once

#include <string>
#include <vector>

namespace ladder::exercise {

struct Region {
  size_t begin = 0, end = 0;  // the region's code: from the line after the opening marker to the closing marker's line
  std::string indent;         // the opening marker's indentation, which the code it gets is given
};

// The region of `name` in `text` (the contents of `file`, named in the errors). Throws ladder::Error
// when a marker is missing, written twice, or the closing one comes first.
Region find_region(const std::string& text, const std::string& name, const std::string& file);

// The code between the markers, as written (indented, ending in a newline unless empty).
std::string region_code(const std::string& text, const Region& region);

// `text` with the region's code replaced by `code`, each of its lines given the marker's indentation.
std::string with_region(const std::string& text, const Region& region, const std::string& code);

// The names of the opening markers in `text`, in order: what the catalogue must list.
std::vector<std::string> marked_names(const std::string& text);

}  // namespace ladder::exercise
