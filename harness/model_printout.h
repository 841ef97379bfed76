// How a lesson prints its model before training: a line per block (Module::outline), or with
// --verbose every module with its parameter shapes (Module::summary).
#pragma once

#include "harness/cli.h"
#include "nn/module.h"

namespace ladder::harness {

struct ModelPrintout {
  bool verbose = false;

  void add_to(LessonCli& cli);
  void print(const nn::Module& model) const;
};

}  // namespace ladder::harness
