#include "lessons/14_transformer_vq/position_bias.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "plot/plot.h"
#include "lessons/14_transformer_vq/codebook.h"

namespace ladder::lessons {

void position_bias_report(harness::Run& run, models::GPT& model, const KeySample& sample) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const std::vector<nn::VQAttention*> layers = vq_layers(model);
  if (layers.empty() || !layers.front()->positions) return;
  const std::vector<nn::AttentionHeads> heads = model.forward_with_heads(sample.ids).heads;
  plot::LineChart chart{"Position bias learned inside the window, mean over validation queries", "offset i - j",
                  "score added to key j", {}};
  std::printf("  the VQ model's position bias, mean over the queries of %lld validation %s:\n",
              static_cast<long long>(sample.ids.size(0)), sample.unit.c_str());
  for (size_t l = 0; l < layers.size(); ++l) {
    nn::VQAttention& layer = *layers[l];
    const nn::VQAttention::Prepared in = layer.prepare(heads[l].q, heads[l].k, /*causal=*/true);
    const int64_t D = in.bias.queries.size(3);
    const float scale = layer.options(true).scale.value_or(1.0f / std::sqrt(static_cast<float>(D)));
    // scale * qp . r: (1,H,N,D) @ (H,P,D)^T -> (1,H,N,P) over the N real queries, averaged over them -> (H,P)
    const Tensor queries = at_real_positions(in.bias.queries, sample.real);
    const Tensor terms = matmul(queries, in.bias.offsets, {.transpose_b = true}) * scale;
    const Tensor by_offset = mean(terms, {0, 2});
    const int64_t H = by_offset.size(0), P = by_offset.size(1), L = P - 1;  // row m: offset L - m
    for (int64_t h = 0; h < H; ++h) {
      const float* row = by_offset.data() + h * P;
      plot::Series curve{"layer " + std::to_string(l + 1) + " head " + std::to_string(h + 1), {}, {}};
      for (int64_t offset = 0; offset <= L; ++offset) curve.x.push_back(offset), curve.y.push_back(row[L - offset]);
      std::printf("  %-16s", curve.name.c_str());
      int64_t printed = -1;
      for (const int64_t offset : {int64_t{0}, int64_t{1}, int64_t{2}, L / 2, L})
        if (offset <= L && offset > printed)
          std::printf("  offset %lld: %+.2f", static_cast<long long>(offset), row[L - offset]), printed = offset;
      std::printf("\n");
      chart.series.push_back(curve);
    }
  }
  run.wrote(plot::save_line_chart(run.path("vq_position_bias"), chart));
}

}  // namespace ladder::lessons
