// VectorQuantizer: the codebook of Transformer-VQ (Lingle 2023), which rounds each key to the
// nearest of S codes so that attention can summarise the past per code.
//
// The codebook is state, not a parameter: the optimiser never sees it. It learns by exponential
// moving averages of the keys that chose each code (van den Oord et al. 2017; the paper's code):
//   count_s <- gamma count_s + (1 - gamma) n_s,   sum_s <- gamma sum_s + (1 - gamma) (keys that chose s),
//   code_s = sum_s / max(count_s, 0.01),
// once per training step, after the optimiser's step. The keys learn through the straight-through
// estimator and the commitment loss beta * mean |k - sg(code)|^2, which pulls them towards their codes.
#pragma once

#include <cstdint>
#include <vector>

#include "core/random.h"
#include "nn/module.h"

namespace ladder::nn {

struct VectorQuantizerOptions {
  int64_t heads = 1;   // one codebook per head: keys (B,H,T,d)
  float beta = 1e-4f;  // commitment loss weight (the paper's)
  float gamma = 0.99f;  // EMA decay (the paper's)
  // A code whose count falls below this fraction of its head's mean count is dead: the next
  // update moves it onto a key of that update. 0 never revives.
  float revive_below = 0.1f;
};

// What quantize() returns for keys (B,H,T,d).
struct QuantizedKeys {
  Tensor keys;                   // (B,H,T,d): forward each key's code exactly; backward the identity to the keys
  std::vector<int64_t> indices;  // (B,H,T): which code of its head each key took
  Tensor commitment;             // 0-d: beta * mean over the keys of |k - sg(code)|^2, for the training loss
  Tensor distances;              // (B,H,T), no grad: |k - code|^2, the quantisation error
};

// How the codes are used, from the EMA counts.
struct CodebookUsage {
  std::vector<int64_t> alive;     // per head: codes that are not dead (see revive_below)
  std::vector<double> perplexity;  // per head: exp(entropy of count_s / sum count): codes in effective use
  std::vector<double> bin_edges;  // bins + 1 edges, 0 to the largest count
  std::vector<int64_t> histogram;  // codes of every head per bin of count
};

class VectorQuantizer : public Module {
 public:
  // codes (S) of width d per head. Initial codes as the paper's code: counts 1 and sums (so codes)
  // drawn from N(0, 1/(H S)) (JAX's fan-in variance scaling of an (H,S,d) array). Revival draws
  // from a child of gen, so a seed pins it.
  VectorQuantizer(int64_t codes, int64_t width, VectorQuantizerOptions options = {},
                  Generator& gen = default_generator());

  // keys (B,H,T,d) -> their codes, indices and commitment loss. The same in training and eval.
  QuantizedKeys quantize(const Tensor& keys);
  // One EMA step on the keys (B,H,T,d) of a training step and the indices quantize() gave them,
  // then the revival of dead codes. Does nothing in eval mode. Call it after the optimiser's step.
  void update(const Tensor& keys, const std::vector<int64_t>& indices);
  CodebookUsage usage(int64_t bins = 10) const;

  int64_t heads() const { return codes.size(0); }
  int64_t num_codes() const { return codes.size(1); }
  int64_t width() const { return codes.size(2); }

  Tensor codes;   // (H,S,d), buffer: sums / max(counts, 0.01), kept in step with them
  Tensor counts;  // (H,S), buffer: EMA of how many keys took each code per step
  Tensor sums;    // (H,S,d), buffer: EMA of the sum of those keys

 protected:
  std::string describe() const override;

 private:
  void check_keys(const char* op, const Tensor& keys) const;
  void revive_dead_codes(const Tensor& keys);
  void refresh_codes();

  VectorQuantizerOptions options_;
  Generator gen_;
};

}  // namespace ladder::nn
