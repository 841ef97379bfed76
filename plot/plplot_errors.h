// PLplot's errors as ladder::Error. Left to itself PLplot ends the process on an error it cannot go
// on from (plexit: "No device drivers found", which a full /tmp causes too, since PLplot lists its
// drivers in a temporary file there), only prints a message for an operation it skips (plabort),
// and asks on the terminal for another device when it lacks the one named. Here each throws,
// naming the file being drawn, so that a run ends failed and its summary says why. PLplot is left
// as the error found it: the program ends (a lesson's run fails, compare exits 2).
#pragma once

#include <string>

namespace ladder::plot::page {

// Makes PLplot's fatal errors and skipped operations throw; start_page calls it before plinit.
void throw_plplot_errors();

// While one lives, the errors name `file` and come from `op`: every function that draws holds one.
class Drawing {
 public:
  Drawing(const char* op, std::string file);
  ~Drawing();  // the errors name what the one around it draws again
  Drawing(const Drawing&) = delete;
  Drawing& operator=(const Drawing&) = delete;

 private:
  const char* outer_op_;
  std::string outer_file_;
};

// Throws "<op>: cannot draw <file>: <why>" for the innermost Drawing ("plot: cannot draw a page" with none).
[[noreturn]] void cannot_draw(const std::string& why);

// Throws with cannot_draw unless PLplot has `device` ("pngcairo"): it would ask the terminal for another.
void require_device(const char* device);

}  // namespace ladder::plot::page
