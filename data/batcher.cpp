#include "data/batcher.h"

#include <algorithm>

#include "core/error.h"
#include "core/ops.h"
#include "data/tokenizer.h"

namespace ladder::data {

int64_t count_targets(const Tensor& y) {
  const std::vector<float> all = y.to_vector();
  return std::count_if(all.begin(), all.end(), [](float t) { return t != static_cast<float>(kNoAnswer); });
}

StreamBatcher::StreamBatcher(std::vector<int> ids, int64_t block) : ids_(std::move(ids)), block_(block) {
  if (block < 1) fail("StreamBatcher", "block must be at least 1, got ", block);
  if (static_cast<int64_t>(ids_.size()) < block + 1)
    fail("StreamBatcher", "the stream has ", ids_.size(), " tokens, too few for windows of ", block,
         " plus one target; use a shorter block or more text");
}

Batch StreamBatcher::sample(int64_t batch, Generator& gen) const {
  Batch b{empty({batch, block_}), empty({batch, block_})};
  for (int64_t r = 0; r < batch; ++r) {
    const int64_t start = gen.randint(0, static_cast<int64_t>(ids_.size()) - block_);
    for (int64_t t = 0; t < block_; ++t) {
      b.x.data()[r * block_ + t] = static_cast<float>(ids_[static_cast<size_t>(start + t)]);
      b.y.data()[r * block_ + t] = static_cast<float>(ids_[static_cast<size_t>(start + t + 1)]);
    }
  }
  return b;
}

ContiguousBatcher::ContiguousBatcher(const std::vector<int>& ids, int64_t batch, int64_t block) : block_(block) {
  if (batch < 1 || block < 1) fail("ContiguousBatcher", "batch and block must be at least 1, got ", batch, " and ", block);
  const int64_t per_row = static_cast<int64_t>(ids.size()) / batch;
  windows_ = (per_row - 1) / block;
  if (windows_ < 1)
    fail("ContiguousBatcher", "the stream has ", ids.size(), " tokens: too few for ", batch, " rows of at least ", block + 1,
         "; use a smaller --batch or block, or more text");
  for (int64_t r = 0; r < batch; ++r)
    rows_.emplace_back(ids.begin() + r * per_row, ids.begin() + (r + 1) * per_row);
}

Batch ContiguousBatcher::next() {
  restarted_ = position_ == 0;
  const auto B = static_cast<int64_t>(rows_.size());
  Batch b{empty({B, block_}), empty({B, block_})};
  for (int64_t r = 0; r < B; ++r)
    for (int64_t t = 0; t < block_; ++t) {
      b.x.data()[r * block_ + t] = static_cast<float>(rows_[static_cast<size_t>(r)][static_cast<size_t>(position_ * block_ + t)]);
      b.y.data()[r * block_ + t] = static_cast<float>(rows_[static_cast<size_t>(r)][static_cast<size_t>(position_ * block_ + t + 1)]);
    }
  position_ = (position_ + 1) % windows_;
  return b;
}

void ContiguousBatcher::seek(int64_t position) {
  if (position < 0 || position >= windows_)
    fail("ContiguousBatcher::seek", "window ", position, " is out of range: the stream has ", windows_, " windows (0 to ",
         windows_ - 1, ")");
  position_ = position;
}

Batch context_windows(const std::vector<std::vector<int>>& sequences, int64_t context) {
  if (context < 1) fail("context_windows", "context must be at least 1, got ", context);
  std::vector<float> xs, ys;
  for (const std::vector<int>& seq : sequences) {
    std::vector<int> window(static_cast<size_t>(context), Tokenizer::kBos);
    std::vector<int> targets = seq;
    targets.push_back(Tokenizer::kEos);
    for (const int next : targets) {
      xs.insert(xs.end(), window.begin(), window.end());
      ys.push_back(static_cast<float>(next));
      window.erase(window.begin());  // slide: drop the oldest id, append the one just predicted
      window.push_back(next);
    }
  }
  const auto n = static_cast<int64_t>(ys.size());
  if (n == 0) fail("context_windows", "no sequences given");
  return {tensor(xs, {n, context}), tensor(ys, {n})};
}

Batch sample_rows(const Batch& all, int64_t batch, Generator& gen) {
  const int64_t n = all.y.size(0);
  if (n == 0) fail("sample_rows", "there are no rows to sample from");
  const int64_t width = all.x.numel() / n;
  Shape x_shape = all.x.shape();
  x_shape[0] = batch;
  Batch b{empty(x_shape), empty({batch})};
  for (int64_t r = 0; r < batch; ++r) {
    const int64_t row = gen.randint(0, n);
    std::copy_n(all.x.data() + row * width, width, b.x.data() + r * width);
    b.y.data()[r] = all.y.data()[row];
  }
  return b;
}

LabelledBatch sample_examples(const LabelledBatch& all, int64_t batch, Generator& gen) {
  const int64_t n = all.labels.dim() ? all.labels.size(0) : 0;
  if (n == 0) fail("sample_examples", "there are no examples to sample from");
  if (batch < 1) fail("sample_examples", "batch must be at least 1, got ", batch);
  const Tensor rows = randint(0, n, {batch}, gen);  // (batch)
  return {index_select(all.inputs, 0, rows), index_select(all.labels, 0, rows),
          all.valid.defined() ? index_select(all.valid, 0, rows) : Tensor()};
}

Seq2SeqBatch pad_pairs(const std::vector<IdPair>& pairs, int64_t source_width) {
  if (pairs.empty()) fail("pad_pairs", "no pairs given");
  if (source_width < 0) fail("pad_pairs", "source_width must be 0 or more, got ", source_width);
  size_t S = std::max<size_t>(1, static_cast<size_t>(source_width)), T = 1;
  for (const auto& [src, tgt] : pairs) {
    S = std::max(S, src.size());
    T = std::max(T, tgt.size() + 1);
  }
  const auto B = static_cast<int64_t>(pairs.size());
  const auto Si = static_cast<int64_t>(S), Ti = static_cast<int64_t>(T);
  Seq2SeqBatch b{zeros({B, Si}), zeros({B, Si}), zeros({B}), zeros({B, Ti}), zeros({B, Ti}), zeros({B, Ti})};
  for (int64_t r = 0; r < B; ++r) {
    const auto& [src, tgt] = pairs[static_cast<size_t>(r)];
    for (size_t s = 0; s < src.size(); ++s) {
      b.src.data()[r * Si + static_cast<int64_t>(s)] = static_cast<float>(src[s]);
      b.src_mask.data()[r * Si + static_cast<int64_t>(s)] = 1;
    }
    b.src_len.data()[r] = static_cast<float>(src.size());
    for (size_t t = 0; t <= tgt.size(); ++t) {
      const int64_t at = r * Ti + static_cast<int64_t>(t);
      b.tgt_in.data()[at] = static_cast<float>(t == 0 ? Tokenizer::kBos : tgt[t - 1]);
      b.tgt_out.data()[at] = static_cast<float>(t == tgt.size() ? Tokenizer::kEos : tgt[t]);
      b.tgt_mask.data()[at] = 1;
    }
  }
  return b;
}

Seq2SeqBatch sample_pairs(const std::vector<IdPair>& pairs, int64_t batch, Generator& gen, int64_t source_width) {
  if (pairs.empty()) fail("sample_pairs", "there are no pairs to sample from");
  if (batch < 1) fail("sample_pairs", "batch must be at least 1, got ", batch);
  std::vector<IdPair> some;
  some.reserve(static_cast<size_t>(batch));
  for (int64_t r = 0; r < batch; ++r) some.push_back(pairs[static_cast<size_t>(gen.randint(0, static_cast<int64_t>(pairs.size())))]);
  return pad_pairs(some, source_width);
}

namespace {

// Indices of pairs by source length: [length] -> the pairs that have it, in order.
std::vector<std::vector<size_t>> indices_by_length(const std::vector<IdPair>& pairs) {
  std::vector<std::vector<size_t>> by_length;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const size_t length = pairs[i].first.size();
    if (by_length.size() <= length) by_length.resize(length + 1);
    by_length[length].push_back(i);
  }
  return by_length;
}

}  // namespace

SourceLengthBuckets::SourceLengthBuckets(std::vector<IdPair> pairs) : pairs_(std::move(pairs)) {
  if (pairs_.empty()) fail("SourceLengthBuckets", "no pairs given");
  for (size_t i = 0; i < pairs_.size(); ++i)
    if (pairs_[i].first.empty()) fail("SourceLengthBuckets", "pair ", i, " has an empty source");
}

std::vector<Seq2SeqBatch> SourceLengthBuckets::sample(int64_t batch, Generator& gen) const {
  if (batch < 1) fail("SourceLengthBuckets", "batch must be at least 1, got ", batch);
  std::vector<IdPair> some;
  some.reserve(static_cast<size_t>(batch));
  for (int64_t r = 0; r < batch; ++r) some.push_back(pairs_[static_cast<size_t>(gen.randint(0, static_cast<int64_t>(pairs_.size())))]);
  std::vector<Seq2SeqBatch> groups;
  for (const std::vector<size_t>& group : batches_by_source_length(some, some.size())) {
    std::vector<IdPair> same_length;
    for (const size_t i : group) same_length.push_back(some[i]);
    groups.push_back(pad_pairs(same_length));
  }
  return groups;
}

std::vector<std::vector<size_t>> batches_by_source_length(const std::vector<IdPair>& pairs, size_t batch) {
  if (batch < 1) fail("batches_by_source_length", "batch must be at least 1, got ", batch);
  std::vector<std::vector<size_t>> batches;
  for (const std::vector<size_t>& bucket : indices_by_length(pairs))
    for (size_t begin = 0; begin < bucket.size(); begin += batch)
      batches.emplace_back(bucket.begin() + static_cast<std::ptrdiff_t>(begin),
                           bucket.begin() + static_cast<std::ptrdiff_t>(std::min(bucket.size(), begin + batch)));
  return batches;
}

}  // namespace ladder::data
