// Transformer-VQ attention: the block-wise kernels against the quadratic reference in double (odd
// sizes, two threads), the op against its plain-op twin, full causal attention when every key has its
// own code, generation with the carried cache, causality, large queries, the gradients (none to the
// codebook, a gradient check) and the error messages.
#include "helpers.h"

#include <algorithm>
#include <cmath>

#include "core/gradcheck.h"
#include "core/kernels/parallel.h"
#include "core/kernels/vq_attention.h"

using namespace ladder;
using ladder::testing::all_finite;
using ladder::testing::AttentionRun;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::max_abs;

namespace {

// The tolerance of the issue: within 5e-4 of the reference, relative to its largest element.
void check_within(const Tensor& fast, const Tensor& reference, const char* what) {
  INFO(what);
  CHECK(all_finite(fast));
  check_close(fast, reference, 5e-4f * std::max(1.0f, max_abs(reference)), 5e-4f);
}

// Random inputs whose keys are codes: a random codebook (H,S,D), random code indices (B,H,T),
// khat gathered from them.
struct VQInputs {
  Tensor q, khat, codebook, v, gout;
  std::vector<int64_t> code_index;
};

VQInputs make_inputs(int64_t B, int64_t H, int64_t T, int64_t D, int64_t S, uint64_t seed) {
  Generator gen(seed);
  VQInputs in;
  in.q = randn({B, H, T, D}, gen);
  in.codebook = randn({H, S, D}, gen);
  for (int64_t row = 0; row < B * H * T; ++row) in.code_index.push_back(gen.randint(0, S));
  in.v = randn({B, H, T, D}, gen);
  in.gout = randn({B, H, T, D}, gen);
  in.khat = gather_codes(in.codebook, in.code_index, {B, H, T});
  return in;
}

// The code indices of positions [start, start + n) of every head: code_index (B*H rows of T).
std::vector<int64_t> narrow_codes(const std::vector<int64_t>& code_index, int64_t T, int64_t start, int64_t n) {
  std::vector<int64_t> out;
  for (size_t row = 0; row < code_index.size(); row += static_cast<size_t>(T))
    out.insert(out.end(), code_index.begin() + static_cast<std::ptrdiff_t>(row) + start,
               code_index.begin() + static_cast<std::ptrdiff_t>(row) + start + n);
  return out;
}

// The raw kernels against their naive twins: out and the three gradients.
void check_kernels(int64_t B, int64_t H, int64_t T, int64_t D, int64_t S, int64_t L, uint64_t seed) {
  INFO("B H T D S L = ", B, " ", H, " ", T, " ", D, " ", S, " ", L);
  const VQInputs in = make_inputs(B, H, T, D, S, seed);
  const VQAttentionProblem p{
      .batch = B, .heads = H, .length = T, .dim = D, .codes = S, .block = L, .scale = 1.0f / std::sqrt(float(D))};
  Tensor out = empty(in.q.shape()), lse = empty({B, H, T}), out_naive = empty(in.q.shape());
  vq_attention_forward(p, in.q.data(), in.khat.data(), in.code_index.data(), in.codebook.data(), in.v.data(),
                       out.data(), lse.data());
  vq_attention_forward_naive(p, in.q.data(), in.khat.data(), in.v.data(), out_naive.data());
  check_within(out, out_naive, "out");
  Tensor dq = empty(in.q.shape()), dk = empty(in.q.shape()), dv = empty(in.q.shape());
  Tensor dq_naive = empty(in.q.shape()), dk_naive = empty(in.q.shape()), dv_naive = empty(in.q.shape());
  vq_attention_backward(p, in.q.data(), in.khat.data(), in.code_index.data(), in.codebook.data(), in.v.data(),
                        out.data(), lse.data(), in.gout.data(), dq.data(), dk.data(), dv.data());
  vq_attention_backward_naive(p, in.q.data(), in.khat.data(), in.v.data(), in.gout.data(), dq_naive.data(),
                              dk_naive.data(), dv_naive.data());
  check_within(dq, dq_naive, "dq");
  check_within(dk, dk_naive, "dkhat");
  check_within(dv, dv_naive, "dv");
}

// vq_attention's output and gradients to q, khat and v.
AttentionRun run_vq(const VQInputs& in, const VQAttentionOptions& options) {
  const auto call = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    return vq_attention(q, k, in.code_index, in.codebook, v, options);
  };
  return ladder::testing::run_attention(call, in.q, in.khat, in.v, in.gout);
}

void check_runs_within(const AttentionRun& fast, const AttentionRun& reference) {
  check_within(fast.out, reference.out, "out");
  check_within(fast.dq, reference.dq, "dq");
  check_within(fast.dk, reference.dk, "dkhat");
  check_within(fast.dv, reference.dv, "dv");
}

// vq_attention against vq_attention_naive, values and gradients.
void check_against_twin(const VQInputs& in, const VQAttentionOptions& options) {
  const auto naive = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    return vq_attention_naive(q, k, in.code_index, in.codebook, v, options);
  };
  check_runs_within(run_vq(in, options), ladder::testing::run_attention(naive, in.q, in.khat, in.v, in.gout));
}

}  // namespace

TEST_CASE("the block-wise kernels equal the quadratic reference in double, on odd sizes") {
  SUBCASE("T not a multiple of L") { check_kernels(2, 2, 37, 5, 7, 8, 1); }
  SUBCASE("T < L: one block, no cache") { check_kernels(1, 2, 5, 4, 3, 8, 2); }
  SUBCASE("T = 2L + 1: one position reads the cache") { check_kernels(1, 3, 17, 6, 4, 8, 3); }
  SUBCASE("T = L") { check_kernels(2, 1, 8, 3, 5, 8, 4); }
  SUBCASE("L = 1: every older key through its code") { check_kernels(1, 2, 9, 4, 3, 1, 5); }
  SUBCASE("many blocks, more codes than a block has keys") { check_kernels(1, 1, 200, 8, 50, 16, 6); }
  SUBCASE("blocks longer than a row tile") { check_kernels(1, 1, 300, 4, 9, 100, 7); }
}

TEST_CASE("the block-wise kernels on two threads equal the quadratic reference") {
  ladder::testing::TwoThreads threads;
  const int64_t B = 2, H = 2, T = 300, D = 16, S = 32, L = 64;
  ladder::testing::require_threaded(B * H, T * (2 * L + S) * D);  // the kernel's split of the heads
  check_kernels(B, H, T, D, S, L, 11);
}

TEST_CASE("vq_attention equals its plain-op twin, values and gradients, with several heads or one") {
  for (const int64_t H : {2, 1}) {
    CAPTURE(H);
    check_against_twin(make_inputs(2, H, 29, 6, 5, 12), {.block = 6});
  }
}

TEST_CASE("with keys off their codes, vq_attention and its twin compute the same mixture") {
  // The window reads khat, the older keys the codes their indices name.
  VQInputs in = make_inputs(1, 2, 23, 4, 5, 22);
  Generator gen(23);
  in.khat = randn(in.khat.shape(), gen);
  check_against_twin(in, {.block = 5});
}

TEST_CASE("with a code for every key, vq_attention is full causal attention") {
  // S = T codes, key j takes code j: the cache summarises each older key exactly.
  const int64_t B = 1, H = 2, T = 40, D = 8, L = 8;
  VQInputs in = make_inputs(B, H, T, D, T, 13);
  for (int64_t row = 0; row < B * H * T; ++row) {
    in.code_index[static_cast<size_t>(row)] = row % T;
    std::copy_n(in.codebook.data() + row * D, D, in.khat.data() + row * D);
  }
  const AttentionRun vq = run_vq(in, {.block = L});
  const auto full = [](const Tensor& q, const Tensor& k, const Tensor& v) {
    return scaled_dot_product_attention(q, k, v, {.causal = true});
  };
  const AttentionRun reference = ladder::testing::run_attention(full, in.q, in.khat, in.v, in.gout);
  check_within(vq.out, reference.out, "out");
  check_within(vq.dq, reference.dq, "dq");
  check_within(vq.dv, reference.dv, "dv");
  // The keys of the last two blocks are read by no query through the cache: there the key
  // gradients agree too; earlier keys lack what older queries send, as the semantics say.
  check_within(narrow(vq.dk, 2, T - 2 * L, 2 * L), narrow(reference.dk, 2, T - 2 * L, 2 * L), "dkhat, last blocks");
  CHECK(max_abs(narrow(vq.dk - reference.dk, 2, 0, T - 2 * L)) > 1e-3f);
}

TEST_CASE("generation with the carried cache equals the whole-sequence forward") {
  const int64_t B = 2, H = 2, T = 45, D = 6, S = 7, L = 8;
  const VQInputs in = make_inputs(B, H, T, D, S, 14);
  const VQAttentionOptions options{.block = L};
  const Tensor whole = vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, options);
  SUBCASE("one position at a time") {
    VQAttentionCache cache;
    for (int64_t t = 0; t < T; ++t) {
      const auto at = [&](const Tensor& x) { return narrow(x, 2, t, 1); };
      const Tensor out = vq_attention_step(cache, at(in.q), at(in.khat), narrow_codes(in.code_index, T, t, 1),
                                           in.codebook, at(in.v), options);
      check_within(out, at(whole), ("position " + std::to_string(t)).c_str());
    }
    CHECK(cache.position == T);
  }
  SUBCASE("a prompt, then pieces of uneven lengths") {
    VQAttentionCache cache;
    int64_t t = 0;
    for (const int64_t n : {19, 1, 3, 10, 12}) {
      const auto piece = [&](const Tensor& x) { return narrow(x, 2, t, n); };
      const Tensor out = vq_attention_step(cache, piece(in.q), piece(in.khat), narrow_codes(in.code_index, T, t, n),
                                           in.codebook, piece(in.v), options);
      check_within(out, piece(whole), ("positions from " + std::to_string(t)).c_str());
      t += n;
    }
  }
}

TEST_CASE("vq_attention is causal: later keys and values leave earlier outputs alone") {
  const int64_t T = 40, D = 4, S = 6, L = 8, changed_from = 21;
  const VQInputs in = make_inputs(1, 2, T, D, S, 15);
  VQInputs later = make_inputs(1, 2, T, D, S, 16);  // other codes, keys and values ...
  later.q = in.q;
  later.codebook = in.codebook;
  for (int64_t row = 0; row < 2 * T; ++row) {
    if (row % T >= changed_from) continue;  // ... only after changed_from
    later.code_index[static_cast<size_t>(row)] = in.code_index[static_cast<size_t>(row)];
    std::copy_n(in.khat.data() + row * D, D, later.khat.data() + row * D);
    std::copy_n(in.v.data() + row * D, D, later.v.data() + row * D);
  }
  for (int64_t row = 0; row < 2 * T; ++row) {  // khat follows the new codes
    const int64_t z = later.code_index[static_cast<size_t>(row)];
    std::copy_n(in.codebook.data() + ((row / T) * S + z) * D, D, later.khat.data() + row * D);
  }
  const Tensor before = vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, {.block = L});
  const Tensor after = vq_attention(later.q, later.khat, later.code_index, later.codebook, later.v, {.block = L});
  check_close(narrow(after, 2, 0, changed_from), narrow(before, 2, 0, changed_from), 0);
  CHECK(max_abs(narrow(after - before, 2, changed_from, T - changed_from)) > 0.01f);
}

TEST_CASE("vq_attention stays finite and exact for queries scaled by 100") {
  const VQInputs small = make_inputs(1, 2, 50, 8, 6, 17);
  VQInputs in = small;
  in.q = small.q * 100.0f;
  const AttentionRun run = run_vq(in, {.block = 8});
  CHECK(all_finite(run.out));
  CHECK(all_finite(run.dq));
  CHECK(all_finite(run.dk));
  CHECK(all_finite(run.dv));
  const auto naive = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    return vq_attention_naive(q, k, in.code_index, in.codebook, v, {.block = 8});
  };
  // The weights are nearly one-hot here; the values and the value gradients must still agree.
  const AttentionRun reference = ladder::testing::run_attention(naive, in.q, in.khat, in.v, in.gout);
  check_within(run.out, reference.out, "out");
  check_within(run.dv, reference.dv, "dv");
}

TEST_CASE("vq_attention sends no gradient to the codebook") {
  VQInputs in = make_inputs(1, 2, 30, 4, 5, 18);
  in.codebook.requires_grad_();
  Tensor q = in.q.clone();
  q.requires_grad_();
  sum(vq_attention(q, in.khat, in.code_index, in.codebook, in.v, {.block = 4}) * in.gout).backward();
  CHECK(q.grad().defined());
  CHECK_FALSE(in.codebook.grad().defined());
}

TEST_CASE("vq_attention passes the gradient check for q, khat and v") {
  // Perturbing khat moves the keys in the window off their codes; the older keys are read through
  // the codebook, so the numeric gradient of khat is the window gradient the op promises.
  for (const int64_t L : {3, 4}) {
    CAPTURE(L);
    const VQInputs in = make_inputs(1, 2, 10, 3, 4, 19 + L);
    const auto f = [&](const std::vector<Tensor>& x) {
      return vq_attention(x[0], x[1], in.code_index, in.codebook, x[2], {.block = L});
    };
    Tensor q = in.q.clone(), khat = in.khat.clone(), v = in.v.clone();
    q.requires_grad_();
    khat.requires_grad_();
    v.requires_grad_();
    const GradcheckResult result = gradcheck(f, {q, khat, v});
    CHECK_MESSAGE(result.ok, result.worst);
  }
}

TEST_CASE("an empty sequence gives an empty output and empty gradients") {
  const VQInputs in = make_inputs(1, 2, 0, 4, 3, 21);
  const AttentionRun run = run_vq(in, {.block = 4});
  CHECK(run.out.shape() == Shape{1, 2, 0, 4});
  CHECK(run.dq.shape() == Shape{1, 2, 0, 4});
  VQAttentionCache cache;
  CHECK(vq_attention_step(cache, in.q, in.khat, in.code_index, in.codebook, in.v, {.block = 4}).numel() == 0);
  CHECK(cache.position == 0);
}

TEST_CASE("vq_attention's errors name the op, the shapes and the fix") {
  const VQInputs in = make_inputs(1, 2, 6, 4, 5, 20);
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
        vq_attention_step(fresh, in.q, in.khat, in.code_index, in.codebook, Tensor(), {.block = 4});
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
              {"code_index holds 5 at flat position 7", "in [0, 5)", "S = 5"});
  bad_index[7] = -1;
  check_error([&] { call(in.q, in.khat, bad_index, in.codebook, in.v, 4); }, {"code_index holds -1"});
  check_error([&] { call(in.q, in.khat, in.code_index, in.codebook, in.v, 0); },
              {"vq_attention", "block must be >= 1", "got 0"});
  check_error([&] { vq_attention(in.q, in.khat, in.code_index, in.codebook, in.v, {.scale = INFINITY}); },
              {"scale must be a finite number"});
  check_error([&] { vq_attention_naive(in.q, in.khat, in.code_index, in.codebook, in.v, {.block = -2}); },
              {"vq_attention_naive", "block must be >= 1", "got -2"});

  VQAttentionCache cache;
  vq_attention_step(cache, in.q, in.khat, in.code_index, in.codebook, in.v, {.block = 4});
  check_error([&] { vq_attention_step(cache, in.q, in.khat, in.code_index, in.codebook, in.v, {.block = 3}); },
              {"vq_attention_step", "the cache was filled with another shape", "start a new VQAttentionCache"});
}
