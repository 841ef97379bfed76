// The delta rule: the chunked forward and backward against the naive twin (raw
// kernels, chunks of 1, 7, 64 and the whole sequence over a length no chunk divides, and on two
// threads), the op against finite differences and against the dense matrix the rule implies
// (solved here, in double, from its formula), and what the rule is for: a key written again keeps
// its latest value, a decay forgets.
#include "helpers.h"

#include <cmath>
#include <vector>

#include "core/gradcheck.h"
#include "core/kernels/delta_rule.h"
#include "core/kernels/parallel.h"
#include "core/linalg.h"

using namespace ladder;
using ladder::testing::check_agree;
using ladder::testing::check_error;

namespace {

// Unit rows along the last dim, as the kinds give the rule its queries and keys.
Tensor unit(const Tensor& x) { return x / sqrt(sum(x * x, {-1}, true)); }

struct Inputs {
  Tensor q, k, v, beta, log_alpha, gout;
};

// (heads,T,M) unit q and k, (heads,T,E) v, beta in (0, 1) and, gated, decays from 0.5 to 1.
Inputs random_inputs(const DeltaRuleProblem& p, bool gated, uint64_t seed) {
  Generator gen(seed);
  const Shape keys{p.heads, p.length, p.key_dim}, values{p.heads, p.length, p.value_dim};
  Inputs in{unit(randn(keys, gen)), unit(randn(keys, gen)), randn(values, gen), uniform({p.heads, p.length}, 0.05f, 0.95f, gen),
            gated ? log(uniform({p.heads, p.length}, 0.5f, 1.0f, gen)) : Tensor(), randn(values, gen)};
  return in;
}

// The raw kernels against their naive twins: the output and the five gradients.
void check_kernels(const DeltaRuleProblem& p, bool gated, uint64_t seed) {
  INFO("heads T M E chunk = ", p.heads, " ", p.length, " ", p.key_dim, " ", p.value_dim, " ", p.chunk, "; gated ", gated);
  const Inputs in = random_inputs(p, gated, seed);
  const float* decay = gated ? in.log_alpha.data() : nullptr;
  Tensor out = empty(in.v.shape()), out_naive = empty(in.v.shape());
  delta_rule_forward(p, in.q.data(), in.k.data(), in.v.data(), in.beta.data(), decay, out.data());
  delta_rule_forward_naive(p, in.q.data(), in.k.data(), in.v.data(), in.beta.data(), decay, out_naive.data());
  check_agree(out, out_naive, "out");
  std::vector<Tensor> fast, naive;
  for (std::vector<Tensor>* grads : {&fast, &naive})
    *grads = {empty(in.q.shape()), empty(in.k.shape()), empty(in.v.shape()), empty(in.beta.shape()), empty(in.beta.shape())};
  delta_rule_backward(p, in.q.data(), in.k.data(), in.v.data(), in.beta.data(), decay, in.gout.data(), fast[0].data(),
                      fast[1].data(), fast[2].data(), fast[3].data(), gated ? fast[4].data() : nullptr);
  delta_rule_backward_naive(p, in.q.data(), in.k.data(), in.v.data(), in.beta.data(), decay, in.gout.data(),
                            naive[0].data(), naive[1].data(), naive[2].data(), naive[3].data(), gated ? naive[4].data() : nullptr);
  const char* names[] = {"dq", "dk", "dv", "dbeta", "dlog_alpha"};
  for (int i = 0; i < (gated ? 5 : 4); ++i) check_agree(fast[i], naive[i], names[i]);
}

// The (T,T) matrix of one head that out = W v implies, from the formula in double:
// W = lower(D_tj q_t . k_j) (I + strictly_lower(beta_t D_tj k_t . k_j))^-1 diag(beta).
Tensor implied_matrix(const Inputs& in, int64_t head) {
  const int64_t T = in.q.size(1), M = in.q.size(2);
  const auto at = [&](const Tensor& x, int64_t t, int64_t m) { return static_cast<double>(x.data()[(head * T + t) * M + m]); };
  std::vector<double> g(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t)
    g[t] = (t ? g[t - 1] : 0.0) + (in.log_alpha.defined() ? in.log_alpha.data()[head * T + t] : 0.0);
  const auto dot = [&](const Tensor& a, int64_t t, int64_t j) {
    double s = 0;
    for (int64_t m = 0; m < M; ++m) s += at(a, t, m) * at(in.k, j, m);
    return s;
  };
  Tensor system = zeros({T, T}), scaled = zeros({T, T});  // I + L, and diag(beta)
  for (int64_t t = 0; t < T; ++t) {
    const double beta = in.beta.data()[head * T + t];
    system.data()[t * T + t] = 1;
    scaled.data()[t * T + t] = static_cast<float>(beta);
    for (int64_t j = 0; j < t; ++j) system.data()[t * T + j] = static_cast<float>(beta * std::exp(g[t] - g[j]) * dot(in.k, t, j));
  }
  Tensor reads = zeros({T, T});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j <= t; ++j) reads.data()[t * T + j] = static_cast<float>(std::exp(g[t] - g[j]) * dot(in.q, t, j));
  return matmul(reads, solve(system, scaled));
}

}  // namespace

TEST_CASE("the chunked delta rule equals its naive twin, gated or not, whatever the chunk") {
  for (const bool gated : {false, true})
    for (const int64_t chunk : {1, 7, 64, 37}) {  // 37 positions: no chunk but 1 and 37 divides them
      SUBCASE((std::string(gated ? "gated" : "ungated") + ", chunk " + std::to_string(chunk)).c_str()) {
        check_kernels({.heads = 3, .length = 37, .key_dim = 6, .value_dim = 5, .chunk = chunk}, gated, 1);
      }
    }
  SUBCASE("one position") { check_kernels({.heads = 2, .length = 1, .key_dim = 4, .value_dim = 3, .chunk = 64}, true, 2); }
}

TEST_CASE("the chunked delta rule on two threads equals its naive twin") {
  ladder::testing::TwoThreads threads;
  const DeltaRuleProblem p{.heads = 4, .length = 300, .key_dim = 16, .value_dim = 16, .chunk = 64};
  ladder::testing::require_threaded(p.heads, p.length * (p.chunk * (p.key_dim + p.value_dim) + p.key_dim * p.value_dim));
  check_kernels(p, false, 3);
  check_kernels(p, true, 4);
}

TEST_CASE("the delta_rule op equals the matrix its formula implies, and passes a gradient check") {
  for (const bool gated : {false, true}) {
    SUBCASE(gated ? "gated" : "ungated") {
      const DeltaRuleProblem p{.heads = 2, .length = 11, .key_dim = 4, .value_dim = 3};
      const Inputs in = random_inputs(p, gated, 5);
      const auto four = [](const Tensor& x) { return x.defined() ? unsqueeze(x, 0) : x; };  // (1,heads,...)
      const Tensor out = delta_rule(four(in.q), four(in.k), four(in.v), four(in.beta), four(in.log_alpha), /*chunk=*/4);
      for (int64_t h = 0; h < p.heads; ++h) {
        const Tensor dense = matmul(implied_matrix(in, h), reshape(narrow(in.v, 0, h, 1), {p.length, p.value_dim}));
        check_agree(reshape(narrow(out, 1, h, 1), {p.length, p.value_dim}), dense, "out = W v");
      }
      std::vector<Tensor> inputs{four(in.q), four(in.k), four(in.v), four(in.beta)};
      if (gated) inputs.push_back(four(in.log_alpha));
      for (Tensor& x : inputs) x.requires_grad_();
      const GradcheckResult r = gradcheck(
          [&](const std::vector<Tensor>& x) { return delta_rule(x[0], x[1], x[2], x[3], gated ? x[4] : Tensor(), 4); }, inputs);
      CHECK_MESSAGE(r.ok, r.worst);
    }
  }
}

TEST_CASE("the delta rule overwrites: a key written again reads back its latest value; a decay forgets") {
  // One head, M = E = 2: key e0 writes value (1, 0), then again (0, 1), at full strength; the query e0
  // reads what the state holds for that key.
  const Tensor q = tensor({1, 0, 1, 0}, {1, 1, 2, 2}), k = q.clone();
  const Tensor v = tensor({1, 0, 0, 1}, {1, 1, 2, 2}), strong = ones({1, 1, 2});
  const Tensor out = delta_rule(q, k, v, strong, Tensor(), 64);
  check_agree(narrow(out, 2, 1, 1), tensor({0, 1}, {1, 1, 1, 2}), "replaced");
  // Linear attention's sum would hold both: (1, 1). At half strength, with a decay of 1/2 before the
  // second write: S = e0 (1/2, 0)^T, then u = 1/2 ((0,1) - 1/2 (1/2, 0)) = (-1/8, 1/2), and the key
  // reads 1/2 (1/2, 0) + u = (1/8, 1/2).
  const Tensor half = tensor({0.5f, 0.5f}, {1, 1, 2});
  const Tensor decayed = delta_rule(q, k, v, half, log(tensor({1.0f, 0.5f}, {1, 1, 2})), 64);
  check_agree(narrow(decayed, 2, 1, 1), tensor({0.125f, 0.5f}, {1, 1, 1, 2}), "decayed");
}

TEST_CASE("delta_rule errors name the tensor and the shape it must have") {
  const Tensor q = zeros({1, 2, 5, 4}), v = zeros({1, 2, 5, 3});
  check_error([&] { delta_rule(q, zeros({1, 2, 5, 3}), v, zeros({1, 2, 5}), Tensor()); }, {"delta_rule", "q and k (B,H,T,M) of one shape"});
  check_error([&] { delta_rule(q, q, v, zeros({1, 2, 4}), Tensor()); }, {"beta must be (B,H,T) = (1,2,5)", "(1,2,4)"});
  check_error([&] { delta_rule(q, q, v, zeros({1, 2, 5}), zeros({2, 5})); }, {"log_alpha must be (B,H,T) = (1,2,5)"});
  check_error([&] { delta_rule(q, q, v, zeros({1, 2, 5}), Tensor(), 0); }, {"chunk must be >= 1, got 0"});
}
