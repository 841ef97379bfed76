// ladder::Error and the helpers every op uses to build its message.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace ladder {

// Every mistake a user can make (bad shapes, bad dims, bad values) throws this.
// The message starts with the op name, shows the shapes or values involved and suggests a fix.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Streams any printable values into one string: cat("dim ", 3, " of ", shape_str(s)).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// Throws Error("<op>: <message parts...>").
template <class... Parts>
[[noreturn]] void fail(const char* op, const Parts&... parts) {
  throw Error(cat(op, ": ", parts...));
}

}  // namespace ladder
