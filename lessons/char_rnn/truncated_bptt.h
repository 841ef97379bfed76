// What lessons 05 and 06 share: the state truncated backpropagation through time carries from one
// window of the stream to the next (the RNN's last hidden state, an LSTM's cell too, and where the
// batcher reads next), as a loop's checkpoint keeps it for --resume.
#pragma once

#include "data/batcher.h"
#include "harness/resume.h"
#include "models/char_rnn.h"

namespace ladder::lessons {

harness::Carried bptt_carried(models::CharRNN& model, data::ContiguousBatcher& windows);

}  // namespace ladder::lessons
