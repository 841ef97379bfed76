#include "models/gpt_text.h"

#include <algorithm>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"

namespace ladder::models {

namespace {

// The summed cross-entropy of a batch over its targets, and their number.
std::pair<double, int64_t> summed_loss(GPT& model, const data::Batch& batch) {
  const int64_t targets = data::count_targets(batch.y);
  return {model.loss(batch).item() * static_cast<double>(targets), targets};
}

constexpr int64_t kEvaluationRows = 64;  // rows per forward when scoring: the result does not depend on it

}  // namespace

SummedLoss stream_loss(GPT& model, const std::vector<int>& ids, int64_t context, int64_t batch, Share share) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const auto n = static_cast<int64_t>(ids.size());
  std::vector<int64_t> windows;  // this share's, of every window (the last one possibly shorter)
  for (int64_t w = share.index; w < (n - 1 + context - 1) / context; w += share.of) windows.push_back(w);
  SummedLoss summed;
  for (size_t first = 0; first < windows.size(); first += static_cast<size_t>(batch)) {
    const auto rows = static_cast<int64_t>(std::min(windows.size() - first, static_cast<size_t>(batch)));
    std::vector<float> x, y;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t scored_from = windows[first + static_cast<size_t>(r)] * context;  // the targets before it belong to earlier windows
      const int64_t start = std::min(scored_from, n - 1 - context);                   // a short last window reads back instead
      for (int64_t t = start; t < start + context; ++t) {
        x.push_back(static_cast<float>(ids[static_cast<size_t>(t)]));
        y.push_back(t >= scored_from ? static_cast<float>(ids[static_cast<size_t>(t + 1)]) : static_cast<float>(data::kNoAnswer));
      }
    }
    const auto [sum, count] = summed_loss(model, {tensor(x, {rows, context}), tensor(y, {rows, context})});
    summed.total += sum, summed.targets += count;
  }
  return summed;
}

SummedLoss lines_loss(GPT& model, const std::vector<std::vector<int>>& lines, int64_t context, int64_t batch,
                      data::LineMarkers markers, Share share) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  std::vector<std::vector<int>> mine;  // this share's lines
  for (auto i = static_cast<size_t>(share.index); i < lines.size(); i += static_cast<size_t>(share.of)) mine.push_back(lines[i]);
  SummedLoss summed;
  for (size_t first = 0; first < mine.size(); first += static_cast<size_t>(batch)) {
    const std::vector<std::vector<int>> some(mine.begin() + static_cast<std::ptrdiff_t>(first),
                                             mine.begin() + static_cast<std::ptrdiff_t>(std::min(mine.size(), first + static_cast<size_t>(batch))));
    const auto [sum, count] = summed_loss(model, data::frame_lines(some, context, markers));
    summed.total += sum, summed.targets += count;
  }
  return summed;
}

SummedLoss validation_loss(GPT& model, const data::CharCorpus& corpus, Share share) {
  const int64_t context = model.config().block_size;
  return corpus.lines ? lines_loss(model, corpus.val_lines, context, kEvaluationRows, data::line_markers(corpus.tokenizer), share)
                      : stream_loss(model, corpus.val_ids, context, kEvaluationRows, share);
}

std::vector<int64_t> never_sampled(const data::Tokenizer& tokenizer, bool lines) {
  std::vector<int64_t> ids = tokenizer.special_ids();
  if (lines) std::erase(ids, tokenizer.eos());
  return ids;
}

std::string sample_text(GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                        int64_t length, float temperature, Generator& gen) {
  const Tensor ids = tensor(std::vector<float>(prompt.begin(), prompt.end()), {1, static_cast<int64_t>(prompt.size())});
  const std::vector<float> out =
      model.generate(ids, length, {.temperature = temperature, .never_sample = never_sampled(tokenizer)}, gen).to_vector();
  std::string text = tokenizer.decode(std::vector<int>(out.begin(), out.end()));
  text.erase(text.find_last_not_of(" \t\r\n") + 1);  // a cold sample can end in hundreds of spaces
  return text;
}

std::vector<SampledLine> sample_lines(GPT& model, const data::Tokenizer& tokenizer, const std::vector<int>& prompt,
                                      int64_t count, float temperature, Generator& gen) {
  const data::LineMarkers markers = data::line_markers(tokenizer);
  const int64_t context = model.config().block_size, start = 1 + static_cast<int64_t>(prompt.size());
  if (start >= context)
    fail("sample_lines", "a prompt of ", prompt.size(), " characters leaves no room in a context of ", context);
  std::vector<float> first;
  for (int64_t r = 0; r < count; ++r) {
    first.push_back(static_cast<float>(markers.bos));
    first.insert(first.end(), prompt.begin(), prompt.end());
  }
  // Every row runs to the full context, as makemore samples; each is cut at its first <eos>.
  const Tensor out = model.generate(tensor(first, {count, start}), context - start,
                                    {.temperature = temperature, .never_sample = never_sampled(tokenizer, /*lines=*/true)}, gen);  // (count, context)
  std::vector<SampledLine> lines(static_cast<size_t>(count));
  for (int64_t r = 0; r < count; ++r) {
    SampledLine& line = lines[static_cast<size_t>(r)];
    line.ended = false;
    for (int64_t t = 1; t < context && !line.ended; ++t) {
      const int id = static_cast<int>(out.data()[r * context + t]);
      if (id == markers.eos) line.ended = true;
      else line.ids.push_back(id);
    }
  }
  return lines;
}

}  // namespace ladder::models
