#include "lessons/12_linear_attention/spectra.h"

#include <cstdio>

#include "core/autograd.h"
#include "core/error.h"
#include "core/linalg.h"
#include "core/ops.h"
#include "plot/plot.h"
#include "nn/attention/attention_registry.h"

namespace ladder::lessons {

std::vector<Spectrum> attention_spectra(harness::Run& run, const std::vector<SpectrumKind>& kinds, const Tensor& q, const Tensor& k) {
  if (q.dim() != 4 || q.size(0) != 1 || q.size(1) != 1 || q.shape() != k.shape())
    fail("attention_spectra", "q and k must both be (1,1,T,D), got ", shape_str(q.shape()), " and ", shape_str(k.shape()));
  NoGradGuard no_grad;
  const int64_t T = q.size(2);
  std::printf("  numerical rank: singular values above %g of the largest, of %lld\n", kRankTolerance,
              static_cast<long long>(T));
  std::printf("  %-16s %12s %14s %10s\n", "kind", "rank bound", "bidirectional", "causal");
  std::vector<Spectrum> spectra;
  plot::LineChart charts[2] = {
      {cat("Singular values of the implied (", T, ",", T, ") attention matrix, bidirectional"), "index (largest first)",
       "singular value", {}, true},
      {cat("Singular values of the implied (", T, ",", T, ") attention matrix, causal"), "index (largest first)",
       "singular value", {}, true}};
  for (const SpectrumKind& kind : kinds) {
    const std::shared_ptr<nn::AttentionKind> layer = nn::make_attention(kind.attention);
    std::string ranks[2] = {"-", "-"};  // "-": the kind does not attend that way
    for (const bool causal : {false, true}) {
      if (!nn::registered_kind(kind.attention.kind).attends(causal)) continue;
      const Tensor weights = reshape(layer->implied_weights(q, k, {.causal = causal}), {T, T});
      Spectrum s{kind.name, causal, singular_values(weights), 0};
      s.rank = numerical_rank(s.values, kRankTolerance);
      ranks[causal] = std::to_string(s.rank);
      plot::Series line{kind.label};
      for (size_t i = 0; i < s.values.size(); ++i) line.x.push_back(static_cast<double>(i)), line.y.push_back(s.values[i]);
      charts[causal].series.push_back(line);
      spectra.push_back(std::move(s));
    }
    std::printf("  %-16s %12s %14s %10s\n", kind.label.c_str(), kind.bound ? std::to_string(kind.bound).c_str() : "none",
                ranks[0].c_str(), ranks[1].c_str());
  }
  run.wrote(plot::save_line_chart(run.path("spectrum_bidirectional"), charts[0]));
  run.wrote(plot::save_line_chart(run.path("spectrum_causal"), charts[1]));
  return spectra;
}

}  // namespace ladder::lessons
