#include "harness/model_printout.h"

#include <cstdio>

namespace ladder::harness {

void ModelPrintout::add_to(LessonCli& cli) {
  cli.flag("--verbose", verbose, "print every module of the model with its parameter shapes, not a line per block");
}

void ModelPrintout::print(const nn::Module& model) const {
  std::printf("%s", verbose ? model.summary().c_str() : model.outline().c_str());
  if (!verbose) std::printf("(--verbose prints every module with its parameter shapes)\n");
}

}  // namespace ladder::harness
