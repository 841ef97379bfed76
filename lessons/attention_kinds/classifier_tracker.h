// What the classifiers of lessons 13, 15 and 17 record beside their training loops (the loops themselves
// are in the lessons): the validation loss and accuracy at ten evaluations. What a classifier
// answers and how the answers score is models/predictions.h.
#pragma once

#include <cstdint>
#include <string>

#include "harness/run.h"
#include "harness/tracker.h"

namespace ladder::lessons {

// The tracker of a classifier trained for `steps` steps of `batch` sequences: the validation loss
// and accuracy ("val_loss", "val_acc") at ten evaluations spread over the run (and at the last
// step), examples per second, `csv` in the run folder, the curves and the progress line named `name`.
harness::Tracker classifier_tracker(harness::Run& run, int64_t steps, int64_t batch, const std::string& name, const std::string& csv);

}  // namespace ladder::lessons
