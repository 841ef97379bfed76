// Lesson 13's part 3: the time of one bidirectional attention layer against the sequence length,
// full attention against BigBird (blocks of 64, 3 random blocks per query block), with the tiles
// BigBird computes and the memory both keep for the backward pass. The work timed is one training
// step of the layer, nn::layer_training_step (nn/attention/attention_workload.h), the work
// ./ladder bench attention times too.
#pragma once

#include <cstdint>

#include "harness/run.h"

namespace ladder::lessons {

// Times both at n = 256 doubling to max_n (the best of up to three calls, fewer once two seconds
// are spent), prints the table, writes timing.csv and attention_time.png/.svg into the run folder
// and reports the longest length's figures and the crossing to `summary`. `seed` draws BigBird's
// random blocks and the layers' inputs.
void time_against_length(harness::Run& run, int64_t max_n, uint64_t seed, harness::Summary& summary);

}  // namespace ladder::lessons
