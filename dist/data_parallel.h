// Data parallelism, as PyTorch's DistributedDataParallel does it: every process holds the whole
// model and takes its own rows of every batch (a shard); after backward the processes sum their
// gradients, each weighted by its share of the batch, so that every one of them holds the gradient
// of the whole batch, then clips and steps it: the models stay equal, bit for bit. The gradients
// travel as one flat buffer per step, after the whole backward (DDP cuts them into buckets sent
// while the backward still runs, which pays off when the network, not the cores, is the limit).
#pragma once

#include <cstdint>

#include "data/batcher.h"
#include "dist/communicator.h"
#include "nn/module.h"

namespace ladder::dist {

// Rank 0's parameters, copied to every process as one flat buffer: the models start equal even if
// the processes drew different weights (a seed that differs by rank).
void broadcast_parameters(nn::Module& model, const Communicator& comm);

// The rows of a batch that one process takes: consecutive, no row in two shards, the shards'
// sizes differing by at most one. share = rows / batch, the weight of this process's gradient.
struct Shard {
  int64_t begin = 0, rows = 0;
  float share = 0;
};
Shard shard_of(int64_t batch, int rank, int processes);
// x and y (B,T), and the key padding mask when the batch has one -> their rows begin .. begin + rows - 1: (rows,T)
data::Batch take_shard(const data::Batch& batch, const Shard& shard);
// A process's rows of a batch and their share of the batch's loss: their targets over the batch's,
// the weight of their gradient in the average. In a stream every row has as many targets, so it is
// the shard's share of the rows; with lines a short line has fewer than a long one.
struct BatchShare {
  data::Batch rows;  // x, y (rows,T)
  float share = 0;
};
BatchShare share_of(const data::Batch& batch, const Shard& shard);

// After backward, on every process: each gradient becomes the sum over the processes of share x
// their gradient of their own rows, the gradient of the whole batch (of its mean loss). All of
// them travel in one flat buffer through ring_all_reduce; `share` is this process's
// (Shard::share). A share of 1 sums instead of averaging: the bug lesson 16 shows.
void all_reduce_gradients(nn::Module& model, const Communicator& comm, float share);

// The largest difference between processes of any parameter's value (elementwise max minus min
// across processes): 0 when the models are identical.
float parameter_spread(const nn::Module& model, const Communicator& comm);

}  // namespace ladder::dist
