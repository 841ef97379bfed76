// Lesson 12's part 3: the rank of the attention matrices that kinds imply. For one input, each kind's
// (T,T) matrix (AttentionKind::implied_weights), bidirectional and, where the kind attends so, causal;
// its singular values (core/linalg.h) and its numerical rank; a table, and the spectra drawn on a
// log scale (spectrum_bidirectional, spectrum_causal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "harness/run.h"
#include "nn/attention/attention_kind.h"

namespace ladder::lessons {

// A value counts toward the numerical rank when it exceeds this times the largest: well above the
// rounding of float32 weights (about 1e-7 of the largest), well below any value a matrix of that
// rank needs.
inline constexpr double kRankTolerance = 1e-5;

struct SpectrumKind {
  std::string name, label;  // "elu", "elu+1"
  nn::AttentionSettings attention;
  int64_t bound = 0;  // the rank its bidirectional matrix cannot exceed (features, projected rows); 0: none
};

struct Spectrum {
  std::string name;
  bool causal = false;
  std::vector<double> values;  // largest first
  int64_t rank = 0;
};

// q, k (1,1,T,D): every kind's spectra, printed as a table of ranks beside each bound, and drawn.
std::vector<Spectrum> attention_spectra(harness::Run& run, const std::vector<SpectrumKind>& kinds, const Tensor& q, const Tensor& k);

}  // namespace ladder::lessons
