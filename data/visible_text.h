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

// `text` with each byte that is not part of well-formed UTF-8 written out as \xNN, the rest as it
// is: JSON must be UTF-8, and a path, a file's line or an error message quoting one may not be.
std::string valid_utf8(std::string_view text);

}  // namespace ladder::data
