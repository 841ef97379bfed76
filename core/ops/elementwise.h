// The two templates every elementwise op is written with. An op gives its forward f and its
// derivative; these do the loops, the broadcasting, the threads and the recording.
#pragma once

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/autograd.h"
#include "core/kernels/parallel.h"
#include "core/ops.h"

namespace ladder {

// y = f(x) elementwise.  Backward: gx = gy * df(x, y)  (df may use the input, the output or both).
// A derivative that is a constant (add_scalar: 1, mul_scalar: s) is given as a number: the backward
// then reads no values and saves none.
template <class F, class DF>
Tensor unary_op(const char* op, const Tensor& x, F f, DF df) {
  Tensor y = empty(x.shape());
  const float* px = x.data();
  float* py = y.data();
  parallel_for(x.numel(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) py[i] = f(px[i]);
  });
  if (!any_requires_grad({x})) return y;
  if constexpr (std::is_arithmetic_v<DF>)
    return record(op, y, {x}, [df](const Tensor& gy, NeedsGrad) -> Grads { return {df == 1 ? gy : gy * df}; });
  else
    return record(op, y, {x}, Saved{x, y}, [x = x.detach(), y = y.detach(), df](const Tensor& gy, NeedsGrad) -> Grads {
    Tensor gx = empty(x.shape());
    const float *px = x.data(), *py = y.data(), *pg = gy.data();
    float* out = gx.data();
    parallel_for(x.numel(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = pg[i] * df(px[i], py[i]);
    });
    return {gx};
  });
}

// Walks the elements of a broadcast result and finds, for each, the element of every input it
// reads (N inputs: two for binary ops, three for where). Dims are first merged where all inputs
// are laid out alike, so that the common cases (same shape; a row vector added to every row; a
// (T,T) mask over (B,H,T,T) scores) become one long inner loop.
template <size_t N>
class BroadcastN {
 public:
  BroadcastN(const std::array<Shape, N>& inputs, const char* op);
  BroadcastN(const Shape& a, const Shape& b, const char* op)
    requires(N == 2)
      : BroadcastN(std::array<Shape, 2>{a, b}, op) {}
  const Shape& out_shape() const { return out_; }

  // Calls body(i, offset_0, ..., offset_N-1) for the output elements i in [begin, end).
  template <class Body>
  void for_range(int64_t begin, int64_t end, const Body& body) const {
    const size_t rank = sizes_.size();
    std::vector<int64_t> index(rank);
    std::array<int64_t, N> at{};
    int64_t rest = begin;
    for (size_t d = rank; d-- > 0;) {
      index[d] = rest % sizes_[d];
      rest /= sizes_[d];
      for (size_t n = 0; n < N; ++n) at[n] += index[d] * strides_[n][d];
    }
    std::array<int64_t, N> step;  // the inputs' strides along the innermost dim
    unsigned unit = 0;            // bit n set: input n steps by 1; clear: by 0
    bool zero_or_one = true;
    for (size_t n = 0; n < N; ++n) {
      step[n] = strides_[n][rank - 1];
      unit |= (step[n] == 1 ? 1u : 0u) << n;
      zero_or_one = zero_or_one && (step[n] == 0 || step[n] == 1);
    }
    const int64_t inner = sizes_[rank - 1];
    for (int64_t i = begin; i < end;) {
      const int64_t run = std::min(inner - index[rank - 1], end - i);
      // With every inner stride 0 or 1 known at compile time the compiler vectorises the loop.
      if (zero_or_one)
        with_unit_mask(unit, [&](auto mask) { run_inner<decltype(mask)::value>(i, run, at, step, body); });
      else
        run_inner<kRuntimeStrides>(i, run, at, step, body);
      i += run;
      index[rank - 1] += run;
      for (size_t n = 0; n < N; ++n) at[n] += run * step[n];
      for (size_t d = rank - 1; d > 0 && index[d] == sizes_[d]; --d) {  // carry into outer dims
        for (size_t n = 0; n < N; ++n) at[n] += strides_[n][d - 1] - sizes_[d] * strides_[n][d];
        index[d] = 0;
        ++index[d - 1];
      }
    }
  }

 private:
  static constexpr unsigned kRuntimeStrides = 1u << N;  // a mask value no input pattern has

  // body(i + k, at[n] + k * step[n]...) for k in [0, run), with step[n] taken from Mask (bit n:
  // 1, else 0) or, for kRuntimeStrides, read at run time.
  template <unsigned Mask, class Body>
  static void run_inner(int64_t i, int64_t run, const std::array<int64_t, N>& at, const std::array<int64_t, N>& step,
                        const Body& body) {
    [&]<size_t... n>(std::index_sequence<n...>) {
      if constexpr (Mask == kRuntimeStrides)
        for (int64_t k = 0; k < run; ++k) body(i + k, (at[n] + k * step[n])...);
      else
        for (int64_t k = 0; k < run; ++k) body(i + k, (at[n] + ((Mask >> n) & 1u ? k : 0))...);
    }(std::make_index_sequence<N>{});
  }

  // Calls f(std::integral_constant<unsigned, mask>) with the run-time mask as a compile-time one.
  template <unsigned Mask = 0, class F>
  static void with_unit_mask(unsigned mask, const F& f) {
    if constexpr (Mask < kRuntimeStrides) {
      if (mask == Mask) f(std::integral_constant<unsigned, Mask>{});
      else with_unit_mask<Mask + 1>(mask, f);
    }
  }

  Shape out_;
  std::vector<int64_t> sizes_;                  // merged dims, outermost first
  std::array<std::vector<int64_t>, N> strides_;  // per input, per merged dim; 0 where broadcast
};

using Broadcast = BroadcastN<2>;

// out = f(a, b) with broadcasting.
// Backward: ga = sum_to(gy * dfa(a, b, out), shape of a), and the same for b with dfb. As in
// unary_op, two constant derivatives (add: 1 and 1) are given as numbers and save no values.
template <class F, class DFA, class DFB>
Tensor binary_op(const char* op, const Tensor& a, const Tensor& b, F f, DFA dfa, DFB dfb) {
  const Broadcast plan(a.shape(), b.shape(), op);
  Tensor out = empty(plan.out_shape());
  const float *pa = a.data(), *pb = b.data();
  float* po = out.data();
  parallel_for(out.numel(), 1, [&](int64_t begin, int64_t end) {
    plan.for_range(begin, end, [&](int64_t i, int64_t ia, int64_t ib) { po[i] = f(pa[ia], pb[ib]); });
  });
  if (!any_requires_grad({a, b})) return out;
  if constexpr (std::is_arithmetic_v<DFA> && std::is_arithmetic_v<DFB>)
    return record(op, out, {a, b},
                  [a_shape = a.shape(), b_shape = b.shape(), dfa, dfb](const Tensor& gy, NeedsGrad needs) -> Grads {
                    auto grad_of = [&gy](float d, const Shape& shape) { return sum_to(d == 1 ? gy : gy * d, shape); };
                    return {needs[0] ? grad_of(dfa, a_shape) : Tensor(), needs[1] ? grad_of(dfb, b_shape) : Tensor()};
                  });
  else
    return record(op, out, {a, b}, Saved{a, b, out},
                [a = a.detach(), b = b.detach(), out = out.detach(), plan, dfa, dfb](
                    const Tensor& gy, NeedsGrad needs) -> Grads {
                  // d(out)/d(input) at every output element, times gy, summed back to the input's shape.
                  auto grad_of = [&](auto derivative, const Tensor& input) {
                    Tensor g = empty(out.shape());
                    const float *pa = a.data(), *pb = b.data(), *po = out.data(), *pg = gy.data();
                    float* pd = g.data();
                    parallel_for(out.numel(), 1, [&](int64_t begin, int64_t end) {
                      plan.for_range(begin, end, [&](int64_t i, int64_t ia, int64_t ib) {
                        pd[i] = pg[i] * derivative(pa[ia], pb[ib], po[i]);
                      });
                    });
                    return sum_to(g, input.shape());
                  };
                  return {needs[0] ? grad_of(dfa, a) : Tensor(), needs[1] ? grad_of(dfb, b) : Tensor()};
                });
}

}  // namespace ladder
