// The book's side of the exercises: a note's "Write it yourself" items with the region each names,
// folded under the item, the original code shown on the page beside its hint and start command.
#pragma once

#include <string>

#include "workspace.h"

namespace ladder::exercise {

// `markdown` with, after each list item that holds `./ladder exercise start NAME`, a folded block
// (<details>) holding the region's code as the library writes it: one answer, shown on request.
std::string with_regions(const Places& places, const std::string& markdown);

}  // namespace ladder::exercise
