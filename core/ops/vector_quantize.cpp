// Vector quantisation: each key's nearest code (core/kernels/vector_quantize.cpp does the work),
// the codes it picked, and the straight-through estimator that lets gradients pass the rounding.
#include "core/autograd.h"
#include "core/error.h"
#include "core/kernels/vector_quantize.h"
#include "core/ops.h"

namespace ladder {

namespace {

NearestCodeProblem check_codes(const char* op, const Tensor& keys, const Tensor& codes) {
  if (keys.dim() != 4 || codes.dim() != 3)
    fail(op, "expects keys (B,H,T,d) and codes (H,S,d), one codebook per head, got ", shape_str(keys.shape()),
         " and ", shape_str(codes.shape()), "; for one codebook shared by every head, quantise with H = 1");
  if (codes.size(0) != keys.size(1) || codes.size(2) != keys.size(3))
    fail(op, "keys ", shape_str(keys.shape()), " and codes ", shape_str(codes.shape()),
         " must agree in heads and width: (B,H,T,d) and (H,S,d), one codebook per head (a (1,S,d) codebook "
         "serves keys of one head only)");
  if (codes.size(1) < 1) fail(op, "the codebook has no codes: codes ", shape_str(codes.shape()), " needs S >= 1");
  return {.batch = keys.size(0), .heads = keys.size(1), .length = keys.size(2), .codes = codes.size(1),
          .width = keys.size(3)};
}

using NearestCodeKernel = void (*)(const NearestCodeProblem&, const float*, const float*, int64_t*, float*);

CodeAssignment assign(const char* op, const Tensor& keys, const Tensor& codes, NearestCodeKernel kernel) {
  const NearestCodeProblem p = check_codes(op, keys, codes);
  CodeAssignment out{std::vector<int64_t>(static_cast<size_t>(p.batch * p.heads * p.length)),
                     empty({p.batch, p.heads, p.length})};
  kernel(p, keys.data(), codes.data(), out.indices.data(), out.distances.data());
  return out;
}

}  // namespace

CodeAssignment nearest_codes(const Tensor& keys, const Tensor& codes) {
  return assign("nearest_codes", keys, codes, nearest_code);
}

CodeAssignment nearest_codes_naive(const Tensor& keys, const Tensor& codes) {
  return assign("nearest_codes_naive", keys, codes, nearest_code_naive);
}

// codes (H,S,d), indices (B,H,T) -> (B,H,T,d): row (b,h,t) is code indices[b,h,t] of head h.
Tensor gather_codes(const Tensor& codes, const std::vector<int64_t>& indices, const Shape& index_shape) {
  const char* op = "gather_codes";
  if (codes.dim() != 3 || index_shape.size() != 3 || index_shape[1] != codes.size(0))
    fail(op, "expects codes (H,S,d) and indices (B,H,T) with the same H, got codes ", shape_str(codes.shape()),
         " and indices ", shape_str(index_shape));
  if (static_cast<int64_t>(indices.size()) != numel(index_shape))
    fail(op, "indices hold ", indices.size(), " values but their shape ", shape_str(index_shape), " needs ",
         numel(index_shape));
  const int64_t H = codes.size(0), S = codes.size(1), d = codes.size(2), T = index_shape[2];
  Tensor out = empty({index_shape[0], H, T, d});
  for (size_t key = 0; key < indices.size(); ++key) {
    const int64_t s = indices[key];
    if (s < 0 || s >= S)
      fail(op, "index ", s, " at position ", key, " is out of range for ", S, " codes (valid: 0 to ", S - 1, ")");
    const float* code = codes.data() + (static_cast<int64_t>(key) / T % H * S + s) * d;
    std::copy(code, code + d, out.data() + static_cast<int64_t>(key) * d);
  }
  return out;
}

// Forward: a copy of `quantised`, bit for bit (x + (quantised - x) would round). Backward: the
// gradient goes to x unchanged, as if the rounding to a code were the identity.
Tensor straight_through(const Tensor& x, const Tensor& quantised) {
  if (x.shape() != quantised.shape())
    fail("straight_through", "x ", shape_str(x.shape()), " and its quantised values ",
         shape_str(quantised.shape()), " must have one shape");
  return record("straight_through", quantised.detach().clone(), {x},
                [](const Tensor& gout, NeedsGrad) -> Grads { return {gout}; });
}

}  // namespace ladder
