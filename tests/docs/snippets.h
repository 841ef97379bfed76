// The C++ snippets of the notes (```cpp fences) as one translation unit to compile with
// -fsyntax-only. #line directives point compiler messages at the notes' own lines.
#pragma once

#include <string>
#include <vector>

#include "docs/markdown.h"

namespace ladder::docs {

// A block that starts with a function definition or with `template`, `struct`, `class`, `enum`,
// `namespace` or `using` is placed at namespace scope; any other block is a run of statements
// and becomes the body of a function of its own. All blocks of a note share one namespace with
// `using namespace ladder;`, so a later block can use what an earlier one defined.
bool at_namespace_scope(const Fence& fence);

// Includes `headers` (paths relative to the repository root), then each note's cpp blocks in
// order, in a namespace per note; empty when no note has any.
std::string snippet_unit(const std::vector<Note>& notes, const std::vector<std::string>& headers);

}  // namespace ladder::docs
