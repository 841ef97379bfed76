// Transformer-VQ attention: the block-wise kernels against the quadratic reference in double (odd
// sizes, two threads), causal and in the encoder form, with and without the position bias, with the
// gradient through the cache exact or stopped, and with hidden keys; the op against its dense
// plain-op twin; full attention when every key has its own code; generation with the carried cache
// and the bias; causality; large queries; the gradients (none to the codebook, what the stopped mode
// stops, a gradient check) and the error messages.
#include "helpers.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/gradcheck.h"
#include "core/kernels/parallel.h"
#include "core/kernels/vq_attention.h"

using namespace ladder;
using ladder::testing::all_finite;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::max_abs;

namespace {

// The tolerance of the issue: within 5e-4 of the reference, relative to its largest element.
void check_within(const Tensor& fast, const Tensor& reference, const std::string& what) {
  INFO(what);
  CHECK(all_finite(fast));
  check_close(fast, reference, 5e-4f * std::max(1.0f, max_abs(reference)), 5e-4f);
}

// What a test varies beyond the sizes.
struct Form {
  bool causal = true, bias = false, stop = false;
  int64_t hidden_every = 0;  // > 0: every n-th key of each head is hidden (code -1)
};

std::string describe(const Form& f) {
  return std::string(f.causal ? "causal" : "encoder") + (f.bias ? ", bias" : "") + (f.stop ? ", stopped" : "") +
         (f.hidden_every ? ", hidden keys" : "");
}

// Random inputs whose keys are codes: a random codebook (H,S,D), random code indices (B,H,T), khat
// gathered from them; with the bias, position queries and offsets.
struct VQInputs {
  Tensor q, khat, codebook, v, gout, position_queries, offsets;
  std::vector<int64_t> code_index;
  VQAttentionOptions options;

  VQPositionBias bias() const { return {position_queries, offsets}; }
};

VQInputs make_inputs(int64_t B, int64_t H, int64_t T, int64_t D, int64_t S, int64_t L, const Form& form,
                     uint64_t seed) {
  Generator gen(seed);
  VQInputs in;
  in.options = {.block = L, .causal = form.causal, .stop_cache_gradient = form.stop};
  in.q = randn({B, H, T, D}, gen);
  in.codebook = randn({H, S, D}, gen);
  for (int64_t row = 0; row < B * H * T; ++row) in.code_index.push_back(gen.randint(0, S));
  in.v = randn({B, H, T, D}, gen);
  in.gout = randn({B, H, T, D}, gen);
  in.khat = gather_codes(in.codebook, in.code_index, {B, H, T});
  if (form.hidden_every > 0)
    for (int64_t row = 0; row < B * H * T; ++row)
      if ((row % T) % form.hidden_every == 1) in.code_index[static_cast<size_t>(row)] = -1;
  if (form.bias) {
    in.position_queries = randn({B, H, T, D}, gen);
    in.offsets = randn({H, form.causal ? L + 1 : 2 * L + 1, D}, gen);
  }
  return in;
}

VQInputs make_inputs(int64_t B, int64_t H, int64_t T, int64_t D, int64_t S, int64_t L, uint64_t seed) {
  return make_inputs(B, H, T, D, S, L, Form{}, seed);
}

// The code indices of positions [start, start + n) of every head: code_index (B*H rows of T).
std::vector<int64_t> narrow_codes(const std::vector<int64_t>& code_index, int64_t T, int64_t start, int64_t n) {
  std::vector<int64_t> out;
  for (size_t row = 0; row < code_index.size(); row += static_cast<size_t>(T))
    out.insert(out.end(), code_index.begin() + static_cast<std::ptrdiff_t>(row) + start,
               code_index.begin() + static_cast<std::ptrdiff_t>(row) + start + n);
  return out;
}

// The raw kernels against their naive twins: out and every gradient.
void check_kernels(int64_t B, int64_t H, int64_t T, int64_t D, int64_t S, int64_t L, const Form& form,
                   uint64_t seed) {
  INFO("B H T D S L = ", B, " ", H, " ", T, " ", D, " ", S, " ", L, "; ", describe(form));
  const VQInputs in = make_inputs(B, H, T, D, S, L, form, seed);
  const VQAttentionProblem p{.batch = B, .heads = H, .length = T, .dim = D, .codes = S, .block = L,
                             .scale = 1.0f / std::sqrt(float(D)), .causal = form.causal,
                             .stop_cache_gradient = form.stop, .position_bias = form.bias};
  const VQAttentionInputs raw{in.q.data(), in.khat.data(), in.v.data(), in.code_index.data(), in.codebook.data(),
                              form.bias ? in.position_queries.data() : nullptr,
                              form.bias ? in.offsets.data() : nullptr};
  Tensor out = empty(in.q.shape()), lse = empty({B, H, T}), out_naive = empty(in.q.shape());
  vq_attention_forward(p, raw, out.data(), lse.data());
  vq_attention_forward_naive(p, raw, out_naive.data());
  check_within(out, out_naive, "out");
  const Shape offsets{H, vq_offset_rows(p), D};
  struct Grads {
    Tensor dq, dk, dv, dqp, dr;
  };
  const auto grads = [&] { return Grads{empty(in.q.shape()), empty(in.q.shape()), empty(in.q.shape()),
                                        empty(in.q.shape()), empty(offsets)}; };
  const auto raw_grads = [&](Grads& g) {
    return VQAttentionGrads{g.dq.data(), g.dk.data(), g.dv.data(), form.bias ? g.dqp.data() : nullptr,
                            form.bias ? g.dr.data() : nullptr};
  };
  Grads fast = grads(), naive = grads();
  vq_attention_backward(p, raw, out.data(), lse.data(), in.gout.data(), raw_grads(fast));
  vq_attention_backward_naive(p, raw, in.gout.data(), raw_grads(naive));
  check_within(fast.dq, naive.dq, "dq");
  check_within(fast.dk, naive.dk, "dkhat");
  check_within(fast.dv, naive.dv, "dv");
  if (!form.bias) return;
  check_within(fast.dqp, naive.dqp, "dqp");
  check_within(fast.dr, naive.dr, "dr");
}

// An op's output and the gradients of sum(out * gout) for q, khat, v, qp and r, taken on copies.
struct VQRun {
  Tensor out, dq, dk, dv, dqp, dr;
};
using VQCall = std::function<Tensor(const Tensor& q, const Tensor& k, const Tensor& v, const VQPositionBias& bias)>;

VQRun run(const VQCall& f, const VQInputs& in) {
  Tensor q = in.q.clone(), k = in.khat.clone(), v = in.v.clone(), qp, r;
  for (Tensor* x : {&q, &k, &v}) x->requires_grad_();
  if (in.position_queries.defined()) {
    qp = in.position_queries.clone(), r = in.offsets.clone();
    qp.requires_grad_();
    r.requires_grad_();
  }
  const Tensor out = f(q, k, v, {qp, r});
  out.backward(in.gout);
  return {out.detach(), q.grad(), k.grad(), v.grad(), qp.defined() ? qp.grad() : Tensor(),
          r.defined() ? r.grad() : Tensor()};
}

VQRun run_vq(const VQInputs& in) {
  return run([&](const Tensor& q, const Tensor& k, const Tensor& v, const VQPositionBias& bias) {
    return vq_attention(q, k, in.code_index, in.codebook, v, in.options, bias);
  }, in);
}

VQRun run_dense(const VQInputs& in) {
  return run([&](const Tensor& q, const Tensor& k, const Tensor& v, const VQPositionBias& bias) {
    return vq_attention_naive(q, k, in.code_index, in.codebook, v, in.options, bias);
  }, in);
}

void check_runs_within(const VQRun& fast, const VQRun& reference) {
  check_within(fast.out, reference.out, "out");
  check_within(fast.dq, reference.dq, "dq");
  check_within(fast.dk, reference.dk, "dkhat");
  check_within(fast.dv, reference.dv, "dv");
  if (!reference.dqp.defined()) return;
  check_within(fast.dqp, reference.dqp, "dqp");
  check_within(fast.dr, reference.dr, "dr");
}

// Every form the op has: causal and the encoder form, each with and without the bias and the stop.
std::vector<Form> every_form() {
  std::vector<Form> forms;
  for (const bool causal : {true, false})
    for (const bool bias : {false, true})
      for (const bool stop : {false, true}) forms.push_back({causal, bias, stop});
  return forms;
}

}  // namespace

TEST_CASE("the block-wise kernels equal the quadratic reference in double, on odd sizes, in every form") {
  for (const Form& form : every_form()) {
    CAPTURE(describe(form));
    check_kernels(2, 2, 37, 5, 7, 8, form, 1);      // T not a multiple of L
    check_kernels(1, 2, 5, 4, 3, 8, form, 2);       // T < L: one block, no cache
    check_kernels(1, 3, 17, 6, 4, 8, form, 3);      // T = 2L + 1: one position reads the cache
    check_kernels(2, 1, 8, 3, 5, 8, form, 4);       // T = L
    check_kernels(1, 2, 9, 4, 3, 1, form, 5);       // L = 1: every older key through its code
    check_kernels(1, 1, 200, 8, 50, 16, form, 6);   // many blocks, more codes than a block has keys
    check_kernels(1, 1, 300, 4, 9, 100, form, 7);   // blocks longer than a row tile
  }
}

TEST_CASE("hidden keys (code -1) are read by no query, in the window or the cache") {
  for (const bool causal : {true, false}) {
    const Form form{.causal = causal, .bias = true, .hidden_every = 3};
    check_kernels(2, 2, 41, 5, 6, 8, form, 8);
    const VQInputs in = make_inputs(2, 2, 41, 5, 6, 8, form, 9);
    check_runs_within(run_vq(in), run_dense(in));
    // A hidden key's value and rounding change nothing.
    VQInputs other = in;
    other.v = in.v.clone(), other.khat = in.khat.clone();
    for (int64_t row = 0; row < 2 * 2 * 41; ++row)
      if (in.code_index[static_cast<size_t>(row)] < 0)
        for (int64_t d = 0; d < 5; ++d) other.v.data()[row * 5 + d] += 3, other.khat.data()[row * 5 + d] -= 2;
    check_close(run_vq(other).out, run_vq(in).out, 0);
  }
}

TEST_CASE("a query that sees no key gets 0 and sends no gradient") {
  const Form form{.causal = false, .bias = true};
  VQInputs in = make_inputs(2, 1, 20, 4, 5, 4, form, 10);
  for (int64_t j = 0; j < 20; ++j) in.code_index[static_cast<size_t>(20 + j)] = -1;  // sequence 1: all padding
  const VQRun fast = run_vq(in), dense = run_dense(in);
  check_runs_within(fast, dense);
  CHECK(max_abs(narrow(fast.out, 0, 1, 1)) == 0);
  CHECK(max_abs(narrow(fast.dq, 0, 1, 1)) == 0);
}

TEST_CASE("the block-wise kernels on two threads equal the quadratic reference") {
  ladder::testing::TwoThreads threads;
  const int64_t B = 2, H = 2, T = 300, D = 16, S = 32, L = 64;
  ladder::testing::require_threaded(B * H, T * (2 * L + S) * D);  // the kernel's split of the heads
  for (const Form& form : every_form()) {
    CAPTURE(describe(form));
    check_kernels(B, H, T, D, S, L, form, 11);
  }
}

TEST_CASE("vq_attention equals its dense plain-op twin, values and gradients, in every form") {
  for (const Form& form : every_form())
    for (const int64_t H : {2, 1}) {
      CAPTURE(describe(form));
      CAPTURE(H);
      const VQInputs in = make_inputs(2, H, 29, 6, 5, 6, form, 12);
      check_runs_within(run_vq(in), run_dense(in));
    }
}

TEST_CASE("vq_attention reads each key as its code: khat off its code is refused, within rounding it is the same") {
  VQInputs in = make_inputs(1, 2, 23, 4, 5, 5, Form{.bias = true}, 22);
  const Tensor exact = run_vq(in).out;
  VQInputs rounded = in;
  rounded.khat = in.khat * (1.0f + 1e-7f);  // as k + (c - k) rounds
  check_close(run_vq(rounded).out, exact, 0);
  VQInputs off = in;
  off.khat = in.khat.clone();
  off.khat.data()[(23 + 3) * 4 + 2] += 0.01f;  // head 1, position 3
  check_error([&] { run_vq(off); }, {"vq_attention: khat at (b,h,t) = (0,1,3) is not code", "differ by 0.0099",
                                     "khat must be the codes"});
}

TEST_CASE("with a code for every key, vq_attention is full attention, causal or both ways") {
  // S = T codes, key j takes code j: the cache summarises each key exactly.
  const int64_t B = 1, H = 2, T = 40, D = 8, L = 8;
  for (const bool causal : {true, false}) {
    CAPTURE(causal);
    VQInputs in = make_inputs(B, H, T, D, T, L, Form{.causal = causal}, 13);
    for (int64_t row = 0; row < B * H * T; ++row) {
      in.code_index[static_cast<size_t>(row)] = row % T;
      std::copy_n(in.codebook.data() + row * D, D, in.khat.data() + row * D);
    }
    const VQRun vq = run_vq(in);
    const VQRun full = run([&](const Tensor& q, const Tensor& k, const Tensor& v, const VQPositionBias&) {
      return scaled_dot_product_attention(q, k, v, {.causal = causal});
    }, in);
    check_within(vq.out, full.out, "out");
    check_within(vq.dq, full.dq, "dq");
    check_within(vq.dv, full.dv, "dv");
  }
}

TEST_CASE("the encoder form reads the keys after a query as well as those before") {
  const VQInputs in = make_inputs(1, 1, 30, 4, 5, 4, Form{.causal = false}, 24);
  VQInputs later = in;
  later.v = in.v.clone();
  for (int64_t d = 0; d < 4; ++d) later.v.data()[29 * 4 + d] += 5;  // the last value, far beyond the first window
  const Tensor before = run_vq(in).out, after = run_vq(later).out;
  CHECK(max_abs(narrow(after - before, 2, 0, 1)) > 1e-3f);  // position 0 reads it through its code
}

TEST_CASE("stopped at the cache: keys and values learn from their own block's queries only, the rest is exact") {
  const int64_t T = 36, L = 6, D = 4, block = 3;  // the gradient comes from block 3's queries alone
  for (const bool causal : {true, false}) {
    CAPTURE(causal);
    VQInputs exact = make_inputs(2, 2, T, D, 5, L, Form{.causal = causal, .bias = true}, 25);
    Tensor only = zeros(exact.gout.shape());
    for (int64_t bh = 0; bh < 4; ++bh)
      for (int64_t t = block * L; t < (block + 1) * L; ++t)
        std::copy_n(exact.gout.data() + (bh * T + t) * D, D, only.data() + (bh * T + t) * D);
    exact.gout = only;
    VQInputs stopped = exact;
    stopped.options.stop_cache_gradient = true;
    const VQRun e = run_vq(exact), s = run_vq(stopped);
    check_close(s.out, e.out, 0);
    check_close(s.dq, e.dq, 0);
    check_close(s.dqp, e.dqp, 0);
    check_close(s.dr, e.dr, 0);
    // Other blocks' keys and values: exactly nothing when stopped (the exact mode sends them some).
    const auto outside = [&](const Tensor& g) {
      return max_abs(narrow(g, 2, 0, block * L)) + max_abs(narrow(g, 2, (block + 1) * L, T - (block + 1) * L));
    };
    CHECK(outside(s.dk) == 0);
    CHECK(outside(s.dv) == 0);
    CHECK(outside(e.dk) > 1e-3f);
    CHECK(outside(e.dv) > 1e-3f);
    // Its own block's keys and values: what the exact mode gives them.
    check_within(narrow(s.dk, 2, block * L, L), narrow(e.dk, 2, block * L, L), "dkhat, own block");
    check_within(narrow(s.dv, 2, block * L, L), narrow(e.dv, 2, block * L, L), "dv, own block");
  }
}

TEST_CASE("generation with the carried cache equals the whole-sequence forward, with the position bias too") {
  const int64_t B = 2, H = 2, T = 45, D = 6, S = 7, L = 8;
  for (const bool bias : {false, true}) {
    CAPTURE(bias);
    const VQInputs in = make_inputs(B, H, T, D, S, L, Form{.bias = bias}, 14);
    const Tensor whole = vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, in.options, in.bias());
    const auto step = [&](VQAttentionCache& cache, int64_t t, int64_t n) {
      const auto piece = [&](const Tensor& x) { return x.defined() ? narrow(x, 2, t, n) : x; };
      return vq_attention_step(cache, piece(in.q), narrow_codes(in.code_index, T, t, n), in.codebook, piece(in.v),
                               in.options, {piece(in.position_queries), in.offsets});
    };
    VQAttentionCache one_by_one;
    for (int64_t t = 0; t < T; ++t) check_within(step(one_by_one, t, 1), narrow(whole, 2, t, 1), "position " + std::to_string(t));
    CHECK(one_by_one.position == T);
    VQAttentionCache pieces;
    int64_t t = 0;
    for (const int64_t n : {19, 1, 3, 10, 12}) {
      check_within(step(pieces, t, n), narrow(whole, 2, t, n), "positions from " + std::to_string(t));
      t += n;
    }
  }
}

TEST_CASE("generation on two threads equals the whole-sequence forward, with the position bias") {
  ladder::testing::TwoThreads threads;
  const int64_t B = 2, H = 2, T = 200, D = 16, S = 32, L = 16, first = 120;
  ladder::testing::require_threaded(B * H, (T - first) * (2 * L + 2 * S) * D);  // the step's split of the heads
  const VQInputs in = make_inputs(B, H, T, D, S, L, Form{.bias = true}, 31);
  const Tensor whole = vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, in.options, in.bias());
  VQAttentionCache cache;
  for (const auto& [t, n] : {std::pair<int64_t, int64_t>{0, first}, {first, T - first}}) {
    const auto piece = [&](const Tensor& x) { return narrow(x, 2, t, n); };
    const Tensor out = vq_attention_step(cache, piece(in.q), narrow_codes(in.code_index, T, t, n), in.codebook,
                                         piece(in.v), in.options, {piece(in.position_queries), in.offsets});
    check_within(out, narrow(whole, 2, t, n), "positions from " + std::to_string(t));
  }
}

TEST_CASE("vq_attention is causal: later keys and values leave earlier outputs alone") {
  const int64_t T = 40, D = 4, S = 6, L = 8, changed_from = 21;
  const Form form{.bias = true};
  const VQInputs in = make_inputs(1, 2, T, D, S, L, form, 15);
  VQInputs later = make_inputs(1, 2, T, D, S, L, form, 16);  // other codes, keys and values ...
  later.q = in.q, later.codebook = in.codebook, later.position_queries = in.position_queries, later.offsets = in.offsets;
  for (int64_t row = 0; row < 2 * T; ++row) {
    if (row % T >= changed_from) continue;  // ... only after changed_from
    later.code_index[static_cast<size_t>(row)] = in.code_index[static_cast<size_t>(row)];
    std::copy_n(in.v.data() + row * D, D, later.v.data() + row * D);
  }
  for (int64_t row = 0; row < 2 * T; ++row) {  // khat follows the new codes
    const int64_t z = later.code_index[static_cast<size_t>(row)];
    std::copy_n(in.codebook.data() + ((row / T) * S + z) * D, D, later.khat.data() + row * D);
  }
  const Tensor before = run_vq(in).out, after = run_vq(later).out;
  check_close(narrow(after, 2, 0, changed_from), narrow(before, 2, 0, changed_from), 0);
  CHECK(max_abs(narrow(after - before, 2, changed_from, T - changed_from)) > 0.01f);
}

TEST_CASE("vq_attention stays finite and exact for queries scaled by 100") {
  for (const bool causal : {true, false}) {
    VQInputs in = make_inputs(1, 2, 50, 8, 6, 8, Form{.causal = causal, .bias = true}, 17);
    in.q = in.q * 100.0f;
    in.position_queries = in.position_queries * 100.0f;
    const VQRun fast = run_vq(in);
    for (const Tensor* g : {&fast.out, &fast.dq, &fast.dk, &fast.dv, &fast.dqp, &fast.dr}) CHECK(all_finite(*g));
    // The weights are nearly one-hot here; the values and the value gradients must still agree.
    const VQRun dense = run_dense(in);
    check_within(fast.out, dense.out, "out");
    check_within(fast.dv, dense.dv, "dv");
  }
}

TEST_CASE("vq_attention sends no gradient to the codebook") {
  VQInputs in = make_inputs(1, 2, 30, 4, 5, 4, 18);
  in.codebook.requires_grad_();
  Tensor q = in.q.clone();
  q.requires_grad_();
  sum(vq_attention(q, in.khat, in.code_index, in.codebook, in.v, in.options) * in.gout).backward();
  CHECK(q.grad().defined());
  CHECK_FALSE(in.codebook.grad().defined());
}

TEST_CASE("vq_attention passes the gradient check for q, v and the bias's queries and offsets; its twin for khat") {
  // The op reads each key as its code, so moving khat off its code is refused: its khat gradient is
  // held to the dense twin's (every form's run above compares them), and the twin, which reads khat
  // inside each query's window, is checked numerically here. Stopped, the op computes the same
  // values: only the analytic gradient differs, so it is checked exact.
  for (const bool causal : {true, false})
    for (const int64_t L : {3, 4}) {
      CAPTURE(causal);
      CAPTURE(L);
      const VQInputs in = make_inputs(1, 2, 10, 3, 4, L, Form{.causal = causal, .bias = true}, 19 + L);
      const auto op = [&](const std::vector<Tensor>& x) {
        return vq_attention(x[0], in.khat, in.code_index, in.codebook, x[1], in.options, {x[2], x[3]});
      };
      std::vector<Tensor> inputs = {in.q.clone(), in.v.clone(), in.position_queries.clone(), in.offsets.clone()};
      for (Tensor& x : inputs) x.requires_grad_();
      const GradcheckResult result = gradcheck(op, inputs);
      CHECK_MESSAGE(result.ok, result.worst);
      const auto twin = [&](const std::vector<Tensor>& x) {
        return vq_attention_naive(in.q, x[0], in.code_index, in.codebook, in.v, in.options, in.bias());
      };
      std::vector<Tensor> keys = {in.khat.clone()};
      keys[0].requires_grad_();
      const GradcheckResult twin_result = gradcheck(twin, keys);
      CHECK_MESSAGE(twin_result.ok, twin_result.worst);
    }
}

TEST_CASE("an empty sequence gives an empty output and empty gradients") {
  const VQInputs in = make_inputs(1, 2, 0, 4, 3, 4, 21);
  const VQRun empty_run = run_vq(in);
  CHECK(empty_run.out.shape() == Shape{1, 2, 0, 4});
  CHECK(empty_run.dq.shape() == Shape{1, 2, 0, 4});
  VQAttentionCache cache;
  CHECK(vq_attention_step(cache, in.q, in.code_index, in.codebook, in.v, in.options).numel() == 0);
  CHECK(cache.position == 0);
}

TEST_CASE("vq_attention's errors name the op, the shapes and the fix") {
  const VQInputs in = make_inputs(1, 2, 6, 4, 5, 4, 20);
  const auto call = [&](const Tensor& q, const Tensor& khat, const std::vector<int64_t>& index, const Tensor& codebook,
                        const Tensor& v, int64_t block) {
    return vq_attention(q, khat, index, codebook, v, {.block = block});
  };
  check_error([&] { call(reshape(in.q, {2, 6, 4}), in.khat, in.code_index, in.codebook, in.v, 4); },
              {"vq_attention", "q must be (B,H,T,D)", "(2,6,4)"});
  check_error([&] { call(in.q, narrow(in.khat, 2, 0, 5), in.code_index, in.codebook, in.v, 4); },
              {"khat must have q's shape (1,2,6,4)", "(1,2,5,4)"});
  check_error([&] { call(in.q, in.khat, in.code_index, in.codebook, narrow(in.v, 3, 0, 3), 4); },
              {"v must have q's shape (1,2,6,4)", "(1,2,6,3)"});
  check_error([&] { call(in.q, in.khat, in.code_index, in.codebook, Tensor(), 4); },
              {"vq_attention", "v is undefined"});
  check_error(
      [&] {
        VQAttentionCache fresh;
        vq_attention_step(fresh, in.q, in.code_index, in.codebook, Tensor(), {.block = 4});
      },
      {"vq_attention_step", "v is undefined"});
  check_error([&] { call(in.q, in.khat, narrow_codes(in.code_index, 6, 0, 5), in.codebook, in.v, 4); },
              {"code_index holds 10 codes but (B,H,T) = (1,2,6) needs 12"});
  check_error([&] { call(in.q, in.khat, in.code_index, randn({3, 5, 4}), in.v, 4); },
              {"codebook must be (H,S,D) = (2,S,4)", "(3,5,4)", "attend with H = 1"});
  check_error([&] { call(in.q, in.khat, in.code_index, randn({1, 5, 4}), in.v, 4); },
              {"codebook must be (H,S,D) = (2,S,4)", "(1,5,4)"});
  check_error([&] { call(in.q, in.khat, in.code_index, randn({5, 4}), in.v, 4); }, {"codebook must be", "(5,4)"});
  std::vector<int64_t> bad_index = in.code_index;
  bad_index[7] = 5;
  check_error([&] { call(in.q, in.khat, bad_index, in.codebook, in.v, 4); },
              {"code_index holds 5 at flat position 7", "in [0, 5)", "S = 5", "-1 for a key no query reads"});
  bad_index[7] = -2;
  check_error([&] { call(in.q, in.khat, bad_index, in.codebook, in.v, 4); }, {"code_index holds -2"});
  bad_index[7] = -1;
  check_error(
      [&] {
        VQAttentionCache fresh;
        vq_attention_step(fresh, in.q, bad_index, in.codebook, in.v, {.block = 4});
      },
      {"vq_attention_step", "code_index holds -1", "in [0, 5)"});
  check_error([&] { call(in.q, in.khat, in.code_index, in.codebook, in.v, 0); },
              {"vq_attention", "block must be >= 1", "got 0"});
  check_error([&] { vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, {.scale = INFINITY}); },
              {"scale must be a finite number"});
  check_error([&] { vq_attention_naive(in.q, in.khat, in.code_index, in.codebook, in.v, {.block = -2}); },
              {"vq_attention_naive", "block must be >= 1", "got -2"});

  const Tensor qp = randn(in.q.shape()), r = randn({2, 5, 4});
  check_error([&] { vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, {.block = 4}, {qp, Tensor()}); },
              {"vq_attention", "needs both its queries (B,H,T,D) and its offsets (H,P,D)", "only the queries"});
  check_error([&] { vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, {.block = 4}, {narrow(qp, 2, 0, 5), r}); },
              {"queries must have q's shape (1,2,6,4)", "(1,2,5,4)"});
  check_error([&] { vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, {.block = 4}, {qp, randn({2, 4, 4})}); },
              {"offsets must be (H,P,D) = (2,5,4)", "from L down to 0", "block L = 4", "(2,4,4)"});
  check_error(
      [&] { vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, {.block = 4, .causal = false}, {qp, r}); },
      {"offsets must be (H,P,D) = (2,9,4)", "from L down to -L"});
  check_error(
      [&] {
        VQAttentionCache fresh;
        vq_attention_step(fresh, in.q, in.code_index, in.codebook, in.v, {.block = 4, .causal = false});
      },
      {"vq_attention_step", "generation is causal", "causal = true", "use vq_attention"});

  VQAttentionCache cache;
  vq_attention_step(cache, in.q, in.code_index, in.codebook, in.v, {.block = 4});
  check_error([&] { vq_attention_step(cache, in.q, in.code_index, in.codebook, in.v, {.block = 3}); },
              {"vq_attention_step", "the cache was filled with another shape", "start a new VQAttentionCache"});
}
