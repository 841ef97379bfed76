// Data parallelism on several processes (mpirun -np 2 and -np 3, from ctest): the ring all-reduce
// against MPI's own; the broadcast; the gradient all-reduced with shares against the gradient one
// process computes of the whole batch; models still identical after 10 steps; and N processes
// against one process with the same total batch, loss by loss. Every process runs every case.
#include "helpers.h"

#include <memory>

#include "dist/data_parallel.h"
#include "dist/mpi_world.h"
#include "dist/ring_all_reduce.h"
#include "data/line_batch.h"
#include "models/gpt.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;
using ladder::testing::processes;

namespace {

models::GPTConfig tiny_config() {
  return {.vocab_size = 13, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 16, .dropout = 0};
}

std::unique_ptr<models::GPT> tiny_gpt(uint64_t seed) {
  Generator gen(seed);
  return std::make_unique<models::GPT>(tiny_config(), gen);
}

// A batch of `rows` windows (rows,8) of a fixed stream, the same on every process.
data::Batch batch_of(int64_t rows, uint64_t seed) {
  std::vector<int> stream;
  for (int i = 0; i < 300; ++i) stream.push_back(4 + (i * 7 + i / 5) % 9);
  Generator gen(seed);
  return data::StreamBatcher(stream, 8).sample(rows, gen);
}

// Every gradient of the model, end to end.
std::vector<float> gradients(const nn::Module& model) {
  std::vector<float> out;
  for (const Tensor& p : model.parameters())
    for (const float g : p.grad().to_vector()) out.push_back(g);
  return out;
}

float largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float largest = 0;
  for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::fabs(a[i] - b[i]));
  return largest;
}

}  // namespace

TEST_CASE("take_shard: a process's rows of x, y and, for framed lines, the key padding mask") {
  const data::Batch lines = data::frame_lines({{4, 5, 6}, {7}, {8, 9}}, 5, {.bos = 1, .eos = 2});
  const data::Batch mine = dist::take_shard(lines, {.begin = 1, .rows = 2, .share = 2.0f / 3});
  REQUIRE(mine.key_padding_mask.defined());
  CHECK(mine.x.shape() == Shape{2, 5});
  CHECK(std::vector<float>(mine.key_padding_mask.data(), mine.key_padding_mask.data() + 10) ==
        std::vector<float>{1, 1, 0, 0, 0, 1, 1, 1, 0, 0});  // <bos> 7, then <bos> 8 9
  CHECK(mine.x.data()[5] == 1);  // row 2's <bos>
  CHECK_FALSE(dist::take_shard(data::Batch{lines.x, lines.y}, {.begin = 0, .rows = 1}).key_padding_mask.defined());
}

TEST_CASE("ring_all_reduce sums like MPI's all-reduce, on every size, and leaves the same bits on every process") {
  const dist::Communicator& all = processes();
  const int N = all.size();
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{N - 1}, int64_t{N + 1}, int64_t{7}, int64_t{1000}, int64_t{100003}}) {
    INFO(n, " floats on ", N, " processes");
    Generator gen(17 + static_cast<uint64_t>(all.rank()));  // each process its own values
    const std::vector<float> mine = randn({std::max<int64_t>(n, 1)}, gen).to_vector();
    std::vector<float> ring(mine.begin(), mine.begin() + n), reference = ring;
    dist::ring_all_reduce(all, ring.data(), n);
    all.all_reduce(reference.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(ring[i] == doctest::Approx(reference[i]).epsilon(1e-5));
    std::vector<float> highest = ring, lowest = ring;
    all.all_reduce(highest.data(), n, dist::Reduction::max);
    all.all_reduce(lowest.data(), n, dist::Reduction::min);
    CHECK(highest == lowest);
  }
  std::vector<float> counts(10, static_cast<float>(all.rank() + 1));  // whole numbers: every order of the sum is exact
  dist::ring_all_reduce(all, counts.data(), 10);
  CHECK(counts == std::vector<float>(10, static_cast<float>(N * (N + 1) / 2)));
}

TEST_CASE("broadcast_parameters: rank 0's model on every process, whatever seed each drew; the same seed draws the same model") {
  const dist::Communicator& all = processes();
  auto same_seed = tiny_gpt(5);
  CHECK(dist::parameter_spread(*same_seed, all) == 0);  // before any broadcast
  auto own_seed = tiny_gpt(5 + static_cast<uint64_t>(all.rank()));
  if (all.size() > 1) CHECK(dist::parameter_spread(*own_seed, all) > 0.01f);
  dist::broadcast_parameters(*own_seed, all);
  CHECK(dist::parameter_spread(*own_seed, all) == 0);
  const std::map<std::string, Tensor> theirs = own_seed->state_dict(), rank0s = same_seed->state_dict();  // seed 5 is rank 0's
  for (const auto& [name, tensor] : rank0s) CHECK_MESSAGE(tensor.to_vector() == theirs.at(name).to_vector(), name);
}

TEST_CASE("all_reduce_gradients with shares gives the whole batch's gradient, even from shards of unequal size") {
  const dist::Communicator& all = processes();
  const int64_t rows = 2 * all.size() + 1;  // not a multiple of the processes: shards of two sizes
  const data::Batch batch = batch_of(rows, 3);
  auto model = tiny_gpt(9);
  model->loss(batch).backward();
  const std::vector<float> whole = gradients(*model);  // one process, the whole batch
  model->zero_grad();
  const dist::Shard shard = dist::shard_of(rows, all.rank(), all.size());
  model->loss(dist::take_shard(batch, shard)).backward();
  const std::vector<float> own = gradients(*model);
  dist::all_reduce_gradients(*model, all, shard.share);
  const std::vector<float> averaged = gradients(*model);
  CHECK(largest_difference(averaged, whole) < 1e-6f);
  if (all.size() > 1) CHECK(largest_difference(own, whole) > 1e-3f);  // a shard's own gradient is not the batch's
  model->zero_grad();
  model->loss(dist::take_shard(batch, shard)).backward();
  dist::all_reduce_gradients(*model, all, 1.0f);  // the forgotten average: every process's gradient at full weight
  if (all.size() > 1) CHECK(largest_difference(gradients(*model), whole) > 1e-3f);
}

TEST_CASE("all_reduce_gradients: a parameter without a gradient on one process receives the others'") {
  const dist::Communicator& all = processes();
  if (all.size() == 1) return;
  const data::Batch batch = batch_of(4, 8);
  auto model = tiny_gpt(2);
  if (all.rank() == 1) model->loss(batch).backward();  // the other processes hold no gradient at all
  dist::all_reduce_gradients(*model, all, 1.0f);
  auto alone = tiny_gpt(2);
  alone->loss(batch).backward();
  CHECK(largest_difference(gradients(*model), gradients(*alone)) == 0);  // process 1's, plus zeros
}

TEST_CASE("10 AdamW steps with the all-reduce in train_step: the models stay identical, and N processes match one") {
  const dist::Communicator& all = processes();
  const int64_t rows = 6;
  const dist::Shard shard = dist::shard_of(rows, all.rank(), all.size());
  auto model = tiny_gpt(4 + static_cast<uint64_t>(all.rank()));  // a seed per process: the broadcast makes them one
  dist::broadcast_parameters(*model, all);
  optim::AdamW adamw(optim::decay_groups(model->named_parameters(), 0.1f), {.lr = 1e-2f});
  std::vector<double> shared;
  for (uint64_t step = 0; step < 10; ++step) {
    const data::Batch mine = dist::take_shard(batch_of(rows, 100 + step), shard);
    const double loss = optim::train_step(*model, adamw, mine, 1.0f, [&] { dist::all_reduce_gradients(*model, all, shard.share); }).loss;
    shared.push_back(all.sum(shard.share * loss));
  }
  CHECK(dist::parameter_spread(*model, all) == 0);
  if (all.rank() != 0) return;
  auto alone = tiny_gpt(4);  // rank 0's seed, one process, every row
  optim::AdamW alone_adamw(optim::decay_groups(alone->named_parameters(), 0.1f), {.lr = 1e-2f});
  for (uint64_t step = 0; step < 10; ++step) {
    const double loss = optim::train_step(*alone, alone_adamw, batch_of(rows, 100 + step), 1.0f).loss;
    CHECK(std::fabs(shared[step] - loss) < 1e-5);
  }
  CHECK(shared.back() < shared.front() - 0.1);  // it learned
}
