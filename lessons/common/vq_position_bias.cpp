#include "lessons/common/vq_position_bias.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "lessons/common/plot.h"
#include "lessons/common/vq_codebook.h"

namespace ladder::lessons {

void position_bias_report(Run& run, models::GPT& model, const Tensor& windows) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval(model);
  const std::vector<nn::VQAttention*> layers = vq_layers(model);
  if (layers.empty() || !layers.front()->positions) return;
  const std::vector<nn::AttentionHeads> heads = model.forward_with_heads(windows).heads;
  LineChart chart{"Position bias learned inside the window, mean over validation queries", "offset i - j",
                  "score added to key j", {}};
  std::printf("  the VQ model's position bias, mean over the queries of %lld validation windows:\n",
              static_cast<long long>(windows.size(0)));
  for (size_t l = 0; l < layers.size(); ++l) {
    nn::VQAttention& layer = *layers[l];
    const nn::VQAttention::Prepared in = layer.prepare(heads[l].q, heads[l].k, /*causal=*/true);
    const int64_t D = in.bias.queries.size(3);
    const float scale = layer.options(true).scale.value_or(1.0f / std::sqrt(static_cast<float>(D)));
    // scale * qp . r: (B,H,T,D) @ (H,P,D)^T -> (B,H,T,P), averaged over B and T -> (H,P)
    const Tensor terms = matmul(in.bias.queries, in.bias.offsets, {.transpose_b = true}) * scale;
    const Tensor by_offset = mean(terms, {0, 2});
    const int64_t H = by_offset.size(0), P = by_offset.size(1), L = P - 1;  // row m: offset L - m
    for (int64_t h = 0; h < H; ++h) {
      const float* row = by_offset.data() + h * P;
      Series curve{"layer " + std::to_string(l + 1) + " head " + std::to_string(h + 1), {}, {}};
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
  run.wrote(save_line_chart(run.path("vq_position_bias"), chart));
}

}  // namespace ladder::lessons
