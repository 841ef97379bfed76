// VectorQuantizer: the codebook of Transformer-VQ (Lingle 2023), which rounds each key to the
// nearest of S codes so that attention can summarise the past per code.
//
// The codebook is state, not a parameter: the optimiser never sees it. It learns by exponential
// moving averages of the keys that chose each code (van den Oord et al. 2017; the paper's code):
//   count_s <- gamma count_s + (1 - gamma) n_s,   sum_s <- gamma sum_s + (1 - gamma) (keys that chose s),
//   code_s = sum_s / max(count_s, 0.01),
// once per training step, after the optimiser's step: each training-mode quantize() keeps its
// per-code statistics pending, and Module::after_optimizer_step() applies them (n_s and the key sums
// of every forward since the last step, added up). The keys learn through the straight-through
// estimator and the commitment loss beta * mean |k - sg(code)|^2, which pulls them towards their
// codes; quantize() records it as the module's auxiliary loss (Module::auxiliary_loss()).
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
  // A code whose count falls below this fraction of its head's mean count is dead: the next EMA
  // step moves it onto a key of the last training-mode forward. 0 never revives.
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

  // keys (B,H,T,d) -> their codes, indices and commitment loss. The same values in training and
  // eval; in training mode it also records the commitment loss and keeps the EMA statistics
  // pending for the next after_optimizer_step(). Eval records nothing. key_padding_mask (B,T), 1 =
  // real key: padding keys are still rounded, but the commitment loss averages over the real keys
  // only, and padding never moves a code (neither in the EMA nor by revival).
  QuantizedKeys quantize(const Tensor& keys, const Tensor& key_padding_mask = Tensor());
  // The same values, recording nothing in either mode (generation, measurements).
  QuantizedKeys assign(const Tensor& keys, const Tensor& key_padding_mask = Tensor()) const;
  CodebookUsage usage(int64_t bins = 10) const;

  int64_t heads() const { return codes.size(0); }
  int64_t num_codes() const { return codes.size(1); }
  int64_t width() const { return codes.size(2); }

  Tensor codes;   // (H,S,d), buffer: sums / max(counts, 0.01), kept in step with them
  Tensor counts;  // (H,S), buffer: EMA of how many keys took each code per step
  Tensor sums;    // (H,S,d), buffer: EMA of the sum of those keys

 protected:
  std::string describe() const override;
  // One EMA step from the pending statistics, the revival of dead codes, the codes recomputed;
  // nothing when no training-mode forward ran since the last step.
  void apply_optimizer_step() override;

 private:
  void check_keys(const char* op, const Tensor& keys, const Tensor& key_padding_mask) const;
  void keep_pending(const Tensor& keys, std::vector<int64_t> indices, const Tensor& key_padding_mask);
  void revive_dead_codes(const Tensor& keys, const std::vector<int64_t>& real);
  void refresh_codes();

  VectorQuantizerOptions options_;
  Generator gen_;
  // Summed over the training-mode forwards since the last step: keys per code (H,S) and their sums
  // (H,S,d), and the last forward's keys with its real positions (b * T + t), which dead codes are
  // revived from.
  std::vector<double> pending_counts_, pending_sums_;
  Tensor pending_keys_;
  std::vector<int64_t> pending_real_;
};

}  // namespace ladder::nn
