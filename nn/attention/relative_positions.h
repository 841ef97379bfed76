// Transformer-XL's relative positions (Dai et al. 2019) as Transformer-VQ uses them inside each
// query's window (Lingle 2023 and its official code): the score of query i and key j gains
//   (q_i + u) . k_j  +  (q_i + v) . r_{i-j},        r_o = W sinusoid(o)
// where u and v are learned vectors (content_bias, position_bias) and r_o a learned projection
// (offset_proj) of a fixed sinusoid of the offset o = i - j. The term in v, v . r_{i-j}, is a bias
// that depends on the offset alone (a Toeplitz matrix over i - j); q_i . r_{i-j} lets each query
// weigh distance its own way. The offsets span the band |i - j| <= L of a window: 0..L for a causal
// layer, -L..L both ways; beyond it there is no position term.
#pragma once

#include <cstdint>
#include <memory>

#include "core/random.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace ladder::nn {

// (count, width): one row per offset o = first, first - 1, .. first - count + 1 (downwards, the order
// of r's rows), [sin(o w_0) .. sin(o w_{m-1}), cos(o w_0) .. cos(o w_{m-1})] with w_k =
// wavelength^(-2k / width) and m = width / 2 (width even); the paper's longest wavelength is 1e5.
Tensor sinusoid_of_offsets(int64_t first, int64_t count, int64_t width, double wavelength = 1e5);

class RelativePositions : public Module {
 public:
  // For H heads of width D: u and v (H*D) start at 0, offset_proj (H*D, sinusoid width) is
  // N(0, 1/width) (the paper's fan-in scaling), drawn from gen. The sinusoid is H*D wide, rounded up
  // to even. u, v and r are given times `scale` (Transformer-VQ's normalised form: D^-1/4, as its q and k).
  RelativePositions(int64_t heads, int64_t head_dim, float scale = 1, Generator& gen = default_generator());

  // r (H, P, D) (times scale) for the band of blocks of L positions: row m for the offset L - m,
  // P = L + 1 rows (offsets L down to 0, causal) or 2L + 1 (L down to -L) (VQPositionBias::offsets). In eval mode under NoGradGuard (generation) the result is kept
  // and given again until offset_proj's weight changes.
  Tensor offsets(int64_t block, bool causal);
  // u and v as (1,H,1,D) (times scale), to add to queries (B,H,T,D).
  Tensor content_query_bias() const;
  Tensor position_query_bias() const;

  Tensor content_bias, position_bias;  // u and v, (H*D) parameters
  std::shared_ptr<Linear> offset_proj;

 protected:
  std::string describe() const override;

 private:
  int64_t heads_, head_dim_;
  float scale_;
  // The fixed sinusoid (P, width) of the last band asked for, and its block: computed once per band.
  Tensor sinusoid_;
  int64_t sinusoid_block_ = -1;
  // What offsets() gave last without gradients, and for what: the band and offset_proj's weight
  // (its storage and the version of its values).
  Tensor kept_;
  int64_t kept_block_ = -1;
  bool kept_causal_ = false;
  const void* kept_storage_ = nullptr;
  uint64_t kept_version_ = 0;
};

}  // namespace ladder::nn
