#include "plot/plplot_errors.h"

#include <plplot/plplot.h>

#include <cstring>
#include <utility>

#include "core/error.h"

namespace ladder::plot::page {

namespace {

// What the innermost Drawing draws; PLplot's handlers are plain functions, so it is kept here.
const char* drawing_op = "plot";
std::string drawing_file = "a page";

// Where PLplot's drivers come from, said with each error about them.
constexpr const char* kDriversHint =
    " (PLplot's drivers come with plplot-driver-cairo, which ./ladder setup installs; PLplot lists them in a temporary "
    "file in $TMPDIR or /tmp, and a full one leaves it none)";

[[noreturn]] void stopped_by_plplot(const char* message) {
  const bool about_drivers = std::strstr(message, "driver") || std::strstr(message, "temporary file");
  cannot_draw(cat("PLplot stopped: ", message, about_drivers ? kDriversHint : ""));
}

int on_fatal_error(const char* message) { stopped_by_plplot(message); }
void on_skipped_operation(const char* message) { stopped_by_plplot(message); }

}  // namespace

void throw_plplot_errors() {
  plsexit(on_fatal_error);
  plsabort(on_skipped_operation);
}

Drawing::Drawing(const char* op, std::string file)
    : outer_op_(std::exchange(drawing_op, op)), outer_file_(std::exchange(drawing_file, std::move(file))) {}

Drawing::~Drawing() {
  drawing_op = outer_op_;
  drawing_file = std::move(outer_file_);
}

void cannot_draw(const std::string& why) { fail(drawing_op, "cannot draw ", drawing_file, ": ", why); }

void require_device(const char* device) {
  constexpr int kMostDevices = 64;  // PLplot has about 20 file devices
  const char *menus[kMostDevices], *names[kMostDevices];
  const char **menu_list = menus, **name_list = names;  // PLplot fills the arrays these point at
  int count = kMostDevices;
  plgFileDevs(&menu_list, &name_list, &count);
  for (int i = 0; i < count; ++i)
    if (std::strcmp(names[i], device) == 0) return;
  cannot_draw(cat("PLplot has no ", device, " device", kDriversHint));
}

}  // namespace ladder::plot::page
