#include "dist/data_parallel.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "dist/ring_all_reduce.h"

namespace ladder::dist {

namespace {

// Every parameter's values end to end, in the order of model.parameters(): one message, not one per tensor.
std::vector<float> flat_values(const std::vector<Tensor>& params) {
  std::vector<float> flat;
  for (const Tensor& p : params) flat.insert(flat.end(), p.data(), p.data() + p.numel());
  return flat;
}

}  // namespace

void broadcast_parameters(nn::Module& model, const Communicator& comm) {
  const std::vector<Tensor> params = model.parameters();
  std::vector<float> flat = flat_values(params);
  comm.broadcast(flat.data(), static_cast<int64_t>(flat.size()), 0);
  const float* from = flat.data();
  for (const Tensor& p : params) {
    std::copy(from, from + p.numel(), p.mutable_data());
    from += p.numel();
  }
}

Shard shard_of(int64_t batch, int rank, int processes) {
  if (processes > batch)
    fail("dist::shard_of", processes, " processes share a batch of ", batch,
         " examples: each needs at least one; give a --batch of at least ", processes, " or fewer processes");
  const int64_t begin = batch * rank / processes, end = batch * (rank + 1) / processes;
  return {begin, end - begin, static_cast<float>(end - begin) / static_cast<float>(batch)};
}

data::Batch take_shard(const data::Batch& batch, const Shard& shard) {
  const Tensor mask = batch.key_padding_mask;
  return {narrow(batch.x, 0, shard.begin, shard.rows), narrow(batch.y, 0, shard.begin, shard.rows),
          mask.defined() ? narrow(mask, 0, shard.begin, shard.rows) : Tensor()};
}

BatchShare share_of(const data::Batch& batch, const Shard& shard) {
  data::Batch rows = take_shard(batch, shard);
  const float share = static_cast<float>(data::count_targets(rows.y)) / static_cast<float>(data::count_targets(batch.y));  // rows / batch for a stream, to the bit
  return {std::move(rows), share};
}

void all_reduce_gradients(nn::Module& model, const Communicator& comm, float share) {
  const std::vector<Tensor> params = model.parameters();
  std::vector<float> flat(static_cast<size_t>(model.num_parameters()), 0.0f);  // a parameter unused here adds 0
  float* to = flat.data();
  for (const Tensor& p : params) {
    if (p.grad().defined()) std::transform(p.grad().data(), p.grad().data() + p.numel(), to, [&](float g) { return share * g; });
    to += p.numel();
  }
  ring_all_reduce(comm, flat.data(), static_cast<int64_t>(flat.size()));
  const float* from = flat.data();
  for (const Tensor& p : params) {
    if (!p.grad().defined()) p.set_grad(zeros(p.shape()));
    std::copy(from, from + p.numel(), p.grad().mutable_data());
    from += p.numel();
  }
}

float parameter_spread(const nn::Module& model, const Communicator& comm) {
  std::vector<float> highest = flat_values(model.parameters()), lowest = highest;
  comm.all_reduce(highest.data(), static_cast<int64_t>(highest.size()), Reduction::max);
  comm.all_reduce(lowest.data(), static_cast<int64_t>(lowest.size()), Reduction::min);
  float spread = 0;
  for (size_t i = 0; i < highest.size(); ++i) spread = std::max(spread, highest[i] - lowest[i]);
  return spread;
}

}  // namespace ladder::dist
