// The rank of the attention matrices the kinds imply (lesson 12, part 3), on a small case: a
// bidirectional linear map's (T,T) matrix is phi(Q) phi(K)^T with its rows scaled, so its rank is at
// most the map's M features (Based's Taylor map: its 1 + D + D(D+1)/2 distinct ones), Linformer's at
// most its k projected rows; softmax's is T; the causal mask lifts every bound.
#include "helpers.h"

#include "core/linalg.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/feature_map.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/linformer_attention.h"
#include "nn/attention/taylor_features.h"

using namespace ladder;
using namespace ladder::nn;

namespace {

constexpr int64_t T = 40, D = 4;
constexpr double kTolerance = 1e-5;  // as lesson 12's: far above float rounding, far below a real value

int64_t rank_of(AttentionKind& kind, const Tensor& q, const Tensor& k, bool causal) {
  return numerical_rank(singular_values(reshape(kind.implied_weights(q, k, {.causal = causal}), {T, T})), kTolerance);
}

}  // namespace

TEST_CASE("rank: bidirectional linear attention has rank at most its features, causal and softmax do not") {
  Generator gen(21);
  const Tensor q = randn({1, 1, T, D}, gen), k = randn(q.shape(), gen);
  for (const std::string& name : feature_map_names()) {
    SUBCASE(name.c_str()) {
      const int64_t features = make_feature_map(name)->features(D);
      // x x^T is symmetric: of Taylor's D^2 products only D(D+1)/2 differ.
      const int64_t bound = name == TaylorFeatures::kName ? 1 + D + D * (D + 1) / 2 : features;
      REQUIRE(bound < T / 2);
      const auto layer = make_attention(linear_attention_settings(name));
      CHECK(rank_of(*layer, q, k, false) == bound);  // at most the bound, and random inputs reach it
      CHECK(rank_of(*layer, q, k, true) > 2 * bound);  // the mask is not a product of features
    }
  }
}

TEST_CASE("rank: softmax's matrix has full rank, Linformer's at most its k rows") {
  Generator gen(21);
  const Tensor q = randn({1, 1, T, D}, gen), k = randn(q.shape(), gen);
  const auto softmax = make_attention(full_attention());
  CHECK(rank_of(*softmax, q, k, false) == T);
  // Causal, lower triangular with a positive diagonal: full rank in exact arithmetic, though its
  // smallest singular values can fall below the tolerance (measured: 39 of 40).
  CHECK(rank_of(*softmax, q, k, true) > T * 3 / 4);
  const auto linformer = make_attention({.kind = LinformerAttention::Settings{.k = 6}, .max_length = T});
  CHECK(rank_of(*linformer, q, k, false) == 6);
}
