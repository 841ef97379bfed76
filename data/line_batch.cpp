#include "data/line_batch.h"

#include <algorithm>

#include "core/error.h"
#include "core/ops.h"
#include "data/text.h"
#include "data/tokenizer.h"

namespace ladder::data {

LineMarkers line_markers(const Tokenizer& tokenizer) {
  if (tokenizer.bos() == Tokenizer::kNone || tokenizer.eos() == Tokenizer::kNone)
    fail("line_markers", "the vocabulary has no <bos> or no <eos> to frame lines with");
  return {tokenizer.bos(), tokenizer.eos()};
}

Batch frame_lines(const std::vector<std::vector<int>>& lines, int64_t width, LineMarkers markers) {
  if (lines.empty()) fail("frame_lines", "no lines given");
  const auto B = static_cast<int64_t>(lines.size());
  Batch b{full({B, width}, static_cast<float>(markers.eos)), full({B, width}, static_cast<float>(kNoAnswer)),
          zeros({B, width})};
  for (int64_t r = 0; r < B; ++r) {
    const std::vector<int>& line = lines[static_cast<size_t>(r)];
    const auto n = static_cast<int64_t>(line.size());
    if (n + 1 > width)
      fail("frame_lines", "a line of ", n, " tokens needs ", n + 1, " positions with its start marker; the rows are ", width, " wide");
    float* x = b.x.data() + r * width;
    float* y = b.y.data() + r * width;
    float* real = b.key_padding_mask.data() + r * width;
    x[0] = static_cast<float>(markers.bos);
    std::fill(real, real + n + 1, 1.0f);
    for (int64_t t = 0; t < n; ++t) x[t + 1] = y[t] = static_cast<float>(line[static_cast<size_t>(t)]);
    y[n] = static_cast<float>(markers.eos);
  }
  return b;
}

LineBatcher::LineBatcher(std::vector<std::vector<int>> lines, int64_t width, LineMarkers markers)
    : lines_(std::move(lines)), width_(width), markers_(markers) {
  if (lines_.empty()) fail("LineBatcher", "there are no lines to train on");
  for (size_t i = 0; i < lines_.size(); ++i)
    if (static_cast<int64_t>(lines_[i].size()) + 1 > width_)
      fail("LineBatcher", "line ", i + 1, " has ", lines_[i].size(), " tokens: with its start marker it needs ",
           lines_[i].size() + 1, " positions, more than the ", width_, " of a row");
}

Batch LineBatcher::sample(int64_t batch, Generator& gen) const {
  std::vector<std::vector<int>> some;
  some.reserve(static_cast<size_t>(batch));
  for (int64_t r = 0; r < batch; ++r) some.push_back(lines_[static_cast<size_t>(gen.randint(0, static_cast<int64_t>(lines_.size())))]);
  return frame_lines(some, width_, markers_);
}

LineShape line_shape(const std::string& text) {
  LineShape shape;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++shape.lines;
    int64_t chars = 0;
    for_each_char(line, [&chars](std::string_view) { ++chars; });
    if (chars == 0) ++shape.empty;
    if (chars > shape.longest) shape.longest = chars, shape.longest_line = shape.lines;
    start = end + 1;
  }
  return shape;
}

}  // namespace ladder::data
