// FAVOR+ (Choromanski et al. 2021, "Rethinking Attention with Performers"): positive random
// features whose dot product estimates softmax attention's kernel. For w ~ N(0, I),
//   E_w[ exp(w.x - |x|^2/2) exp(w.y - |y|^2/2) ] = exp(x.y),
// so with M draws w_1..w_M, phi(x) = exp(W x - |x|^2/2) / sqrt(M) gives phi(q).phi(k) ~ exp(q.k).
// Every feature is positive (no negative weights, unlike sin/cos features), and drawing the w in
// blocks of mutually orthogonal directions lowers the variance of the estimate.
#pragma once

#include <cstdint>

#include "core/random.h"
#include "core/tensor.h"
#include "nn/attention/feature_map.h"

namespace ladder::nn {

// Performer's choice of M for head width D: D ln D, rounded (266 for D = 64), at least 1.
int64_t favor_feature_count(int64_t head_dim);

// (rows, dim) random projection: blocks of `dim` orthonormal rows (Gram-Schmidt on Gaussian draws),
// each row then scaled to the length of an independent N(0, I) vector, so that every row alone is
// still distributed as N(0, I) while the rows of a block are orthogonal.
Tensor orthogonal_gaussian(int64_t rows, int64_t dim, Generator& gen);

// x (..., D), projection (M, D) -> phi(x) (..., M), for the kernel exp(q.k / sqrt(D)) of softmax
// attention (x is scaled by D^-1/4 first). shift_rows subtracts each row's largest exponent (for
// queries: a factor every weight of that query shares, so it cancels in the normalisation); keys
// are left unshifted, their exponent w.x - |x|^2/2 is at most |w|^2/2 whatever x is.
Tensor favor_features(const Tensor& x, const Tensor& projection, bool shift_rows);

// FAVOR+ as linear attention's feature map. The kind is built before it knows D, so W is drawn on
// first use from (seed, layer, redraws) and kept; the number of redraws is a buffer, so that a
// checkpoint restores the same W, and redraw() moves to the next draw (Performer redraws during
// training so that no single draw's errors are learned around).
class FavorFeatures : public FeatureMap {
 public:
  static constexpr const char* kName = "favor";
  explicit FavorFeatures(const FeatureMapDraw& draw);
  const char* name() const override { return kName; }
  const char* label() const override { return "FAVOR+"; }
  int64_t features(int64_t head_dim) const override;
  Tensor query_features(const Tensor& q) const override;  // rows shifted by their largest exponent
  Tensor key_features(const Tensor& k) const override;
  std::vector<std::pair<std::string, Tensor>> buffers() const override { return {{"redraws", redraws_}}; }

  int64_t random_features() const { return draw_.random_features; }  // 0: D ln D
  // The (M,D) projection used for heads of width D.
  Tensor projection(int64_t head_dim) const;
  void redraw();

 private:
  FeatureMapDraw draw_;
  Tensor redraws_;  // (1): the draws so far after the first
  mutable Tensor projection_;  // the draw for (head width, redraws), made on first use
  mutable int64_t projection_redraws_ = -1;
};

}  // namespace ladder::nn
