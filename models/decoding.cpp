#include "models/decoding.h"

#include <algorithm>
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"

namespace ladder::models {

DecoderState DecoderState::select(const std::vector<int64_t>& rows) const {
  std::vector<float> index(rows.begin(), rows.end());
  const Tensor picked = tensor(index);
  DecoderState out{.batch_dims = batch_dims};
  for (size_t i = 0; i < tensors.size(); ++i)
    out.tensors.push_back(tensors[i].defined() ? index_select(tensors[i], batch_dims[i], picked) : Tensor());
  return out;
}

namespace {

void check_source(const Tensor& src, const Tensor& src_valid, const char* op) {
  if (src.dim() != 2) fail(op, "src must be (B,S) token ids, got shape ", shape_str(src.shape()));
  if (src_valid.shape() != src.shape())
    fail(op, "src_valid must have the shape of src ", shape_str(src.shape()), ", got ", shape_str(src_valid.shape()));
}

Tensor tokens_tensor(const std::vector<int>& ids) { return tensor(std::vector<float>(ids.begin(), ids.end())); }

}  // namespace

std::vector<std::vector<int>> greedy_decode(EncoderDecoder& model, const Tensor& src, const Tensor& src_valid,
                                            const DecodeOptions& options) {
  check_source(src, src_valid, "greedy_decode");
  NoGradGuard no_grad;
  const int64_t batch = src.size(0);
  DecoderState state = model.encode(src, src_valid);
  std::vector<std::vector<int>> out(static_cast<size_t>(batch));
  std::vector<int> last(static_cast<size_t>(batch), options.bos);
  std::vector<bool> done(static_cast<size_t>(batch), false);
  for (int64_t step = 0; step < options.max_len; ++step) {
    const Tensor best = argmax(model.decode_step(state, tokens_tensor(last)), -1);  // (B)
    bool all_done = true;
    for (size_t b = 0; b < out.size(); ++b) {
      last[b] = static_cast<int>(best.data()[b]);
      if (done[b]) continue;
      if (last[b] == options.eos) done[b] = true;
      else out[b].push_back(last[b]);
      all_done = all_done && done[b];
    }
    if (all_done) break;
  }
  return out;
}

std::vector<Hypothesis> beam_search(EncoderDecoder& model, const Tensor& src, const Tensor& src_valid, int64_t beam,
                                    float alpha, const DecodeOptions& options) {
  check_source(src, src_valid, "beam_search");
  if (src.size(0) != 1) fail("beam_search", "decodes one source at a time: src must be (1,S), got ", shape_str(src.shape()));
  if (beam < 1) fail("beam_search", "beam width must be at least 1, got ", beam);
  if (!(alpha >= 0)) fail("beam_search", "alpha must be >= 0, got ", alpha);
  NoGradGuard no_grad;
  auto scored = [alpha](Hypothesis h) {
    h.score = h.log_prob / std::pow(static_cast<double>(std::max<int64_t>(h.length, 1)), alpha);
    return h;
  };
  // Done once `beam` hypotheses have finished and no live one can still beat the beam-th best of
  // them. A live hypothesis's log-probability can only fall, so its best possible score is
  // log_prob / max_len^alpha. (Stopping at `beam` finished ones alone would end the search on
  // unlikely early <eos> extensions while the likely hypothesis is still unfinished.)
  auto settled = [&](const std::vector<Hypothesis>& live, std::vector<Hypothesis> finished) {
    if (static_cast<int64_t>(finished.size()) < beam) return false;
    std::nth_element(finished.begin(), finished.begin() + (beam - 1), finished.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    const double longest = std::pow(static_cast<double>(std::max<int64_t>(options.max_len, 1)), alpha);
    return std::all_of(live.begin(), live.end(),
                       [&](const Hypothesis& h) { return h.log_prob / longest <= finished[beam - 1].score; });
  };
  DecoderState state = model.encode(src, src_valid);
  std::vector<Hypothesis> live{Hypothesis{}}, finished;
  for (int64_t step = 0; step < options.max_len && !live.empty() && !settled(live, finished); ++step) {
    std::vector<int> last;
    for (const Hypothesis& h : live) last.push_back(h.tokens.empty() ? options.bos : h.tokens.back());
    const Tensor log_probs = log_softmax(model.decode_step(state, tokens_tensor(last)), -1);  // (live, V)
    const int64_t vocab = log_probs.size(-1);
    // Every extension (hypothesis i, token v), ranked by its total log-probability.
    struct Extension {
      double log_prob;
      int64_t parent;
      int token;
    };
    std::vector<Extension> extensions;
    for (int64_t i = 0; i < static_cast<int64_t>(live.size()); ++i)
      for (int64_t v = 0; v < vocab; ++v)
        extensions.push_back({live[i].log_prob + log_probs.data()[i * vocab + v], i, static_cast<int>(v)});
    const auto keep = std::min<int64_t>(beam, static_cast<int64_t>(extensions.size()));
    std::partial_sort(extensions.begin(), extensions.begin() + keep, extensions.end(),
                      [](const Extension& a, const Extension& b) {  // ties: the first token, as argmax
                        if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
                        return a.parent != b.parent ? a.parent < b.parent : a.token < b.token;
                      });
    std::vector<Hypothesis> next;
    std::vector<int64_t> parents;
    for (int64_t e = 0; e < keep; ++e) {
      const Extension& x = extensions[e];
      Hypothesis h = live[x.parent];
      h.log_prob = x.log_prob;
      h.length = step + 1;
      if (x.token == options.eos) {
        h.finished = true;
        finished.push_back(scored(h));
      } else {
        h.tokens.push_back(x.token);
        next.push_back(h);
        parents.push_back(x.parent);
      }
    }
    live = std::move(next);
    if (!live.empty()) state = state.select(parents);
  }
  for (const Hypothesis& h : live) finished.push_back(scored(h));  // cut at max_len, or unable to win
  std::stable_sort(finished.begin(), finished.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (static_cast<int64_t>(finished.size()) > beam) finished.resize(static_cast<size_t>(beam));
  return finished;
}

}  // namespace ladder::models
