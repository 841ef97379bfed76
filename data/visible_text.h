// User text (a line of a file, a flag's value) as a message quotes it, so that a byte in it cannot
// move the terminal's cursor: a carriage return in the middle of a CRLF file's line would send the
// rest of the message back over its start.
#pragma once

#include <string>
#include <string_view>

namespace ladder::data {

// `text` with its control characters written out: a carriage return as the two characters \r, a
// tab \t, a newline \n, any other (escape, NUL, DEL) as \x1b. Other bytes, UTF-8 too, stay as they are.
std::string visible(std::string_view text);

}  // namespace ladder::data
