// The shards of data parallelism: every row of a batch on exactly one process, the processes'
// shares summing to 1; and the refusal of more processes than rows. No MPI needed.
#include "helpers.h"

#include "dist/data_parallel.h"

using namespace ladder;

TEST_CASE("shard_of: consecutive shards cover the batch once, sizes within one, shares summing to 1") {
  for (int64_t batch = 1; batch <= 30; ++batch)
    for (int processes = 1; processes <= batch; ++processes) {
      INFO("batch ", batch, ", processes ", processes);
      int64_t next = 0, smallest = batch, largest = 0;
      double shares = 0;
      for (int rank = 0; rank < processes; ++rank) {
        const dist::Shard shard = dist::shard_of(batch, rank, processes);
        CHECK(shard.begin == next);  // no gap, no overlap
        CHECK(shard.rows >= 1);
        CHECK(shard.share == doctest::Approx(static_cast<double>(shard.rows) / static_cast<double>(batch)));
        next += shard.rows, shares += shard.share;
        smallest = std::min(smallest, shard.rows), largest = std::max(largest, shard.rows);
      }
      CHECK(next == batch);
      CHECK(largest - smallest <= 1);
      CHECK(shares == doctest::Approx(1));
    }
}

TEST_CASE("take_shard: the shards' rows, stacked in rank order, are the batch") {
  const data::Batch batch{reshape(arange(0, 35), {7, 5}), reshape(arange(100, 135), {7, 5})};  // (B,T) = (7,5)
  std::vector<float> x, y;
  for (int rank = 0; rank < 3; ++rank) {
    const data::Batch part = dist::take_shard(batch, dist::shard_of(7, rank, 3));
    CHECK(part.x.size(1) == 5);
    for (const float v : part.x.to_vector()) x.push_back(v);
    for (const float v : part.y.to_vector()) y.push_back(v);
  }
  CHECK(x == batch.x.to_vector());
  CHECK(y == batch.y.to_vector());
}

TEST_CASE("shard_of refuses more processes than rows, saying what to change") {
  ladder::testing::check_error([] { dist::shard_of(2, 0, 3); }, {"3 processes share a batch of 2 examples", "--batch of at least 3"});
}
