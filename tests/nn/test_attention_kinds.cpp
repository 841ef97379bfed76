// The attention kinds behind one interface (nn/attention/attention_kind.h), every kind of the registry
// (nn/attention/attention_registry.h) and every choice of its compared settings (linear: each feature
// map): a causal-only kind (Transformer-VQ) skips the non-causal cases, a bidirectional-only kind
// the causal ones, and Transformer-VQ's gradient check leaves out the keys, whose codes are piecewise
// constant (tests/nn/test_vq_kind.cpp has the rest). What every kind is held to: it equals the dense
// matrix it implies times v (values and gradients), generation with a carried state equals the
// whole-sequence pass position by position, causality, a gradient check through the masks, finite
// results for large inputs; and what linear attention adds: the chunk size changes nothing, 1 + cos
// really is 1 + cos, double-softmax rows sum to 1. Then the registry's side: each kind's settings
// struct and the descriptions of its fields, and what each kind says it costs.
#include "helpers.h"
#include "small_attention.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/gradcheck.h"
#include "nn/attention/attention_kind.h"
#include "nn/attention/attention_registry.h"
#include "nn/attention/bigbird_attention.h"
#include "nn/attention/delta_attention.h"
#include "nn/attention/favor_features.h"
#include "nn/attention/full_attention.h"
#include "nn/attention/gated_delta_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/linformer_attention.h"
#include "nn/attention/taylor_features.h"
#include "nn/attention/vq_attention.h"

using namespace ladder;
using namespace ladder::nn;
using ladder::testing::all_finite;
using ladder::testing::check_agree;
using ladder::testing::check_close;
using ladder::testing::check_error;
using ladder::testing::check_runs_agree;
using ladder::testing::max_abs;
using ladder::testing::run_attention;

namespace {

// Small sizes for the kinds that have them: blocks of 4 (BigBird is sparse already at 20 positions,
// VQ's cache is read from position 8 on), one random block, 8 codes, chunks of 8, Linformer's
// projection to 6 rows; any other kind its defaults.
const std::vector<KindSettings> kSmall = {BigBirdAttention::Settings{.block = 4, .random_blocks = 1},
                                          VQAttention::Settings{.block = 4, .codes = 8},
                                          LinearAttention::Settings{.chunk = 8}, LinformerAttention::Settings{.k = 6},
                                          DeltaAttention::Settings{.chunk = 8}, GatedDeltaAttention::Settings{.chunk = 8}};

// Every kind of the registry as settings, once per choice of each compared setting.
std::vector<AttentionSettings> every_kind() {
  std::vector<AttentionSettings> all;
  for (const KindDescription& kind : attention_kinds()) {
    std::vector<AttentionSettings> runs = {ladder::testing::small_attention(kind.name, kSmall)};
    for (const KindSetting& setting : kind.settings) {
      if (!setting.compared) continue;
      std::vector<AttentionSettings> each_choice;
      for (const AttentionSettings& run : runs)
        for (const std::string& choice : setting.choices) {
          AttentionSettings with_choice = run;
          setting.set(with_choice.kind, choice);
          each_choice.push_back(with_choice);
        }
      runs = each_choice;
    }
    all.insert(all.end(), runs.begin(), runs.end());
  }
  return all;
}

// "linear/elu": the kind and its compared choices.
std::string label(const AttentionSettings& s) {
  std::string text = s.kind_name();
  for (const KindSetting& setting : registered_kind(s.kind).settings)
    if (setting.compared) text += "/" + std::get<std::string>(setting.get(s.kind));
  return text;
}

bool attends(const AttentionSettings& s, bool causal) { return registered_kind(s.kind).attends(causal); }

// The kind for heads (B,H,T,D) like x, over sequences of up to `longest` positions (vq sizes its
// codebooks by H and D, linformer its projections by the longest sequence).
std::shared_ptr<AttentionKind> make_kind(AttentionSettings settings, const Tensor& x, int64_t longest = 64) {
  settings.heads = x.size(1);
  settings.head_dim = x.size(3);
  settings.max_length = longest;
  return make_attention(settings);
}

struct Heads {
  Tensor q, k, v, gout;
};

Heads random_heads(int64_t B, int64_t H, int64_t T, int64_t S, int64_t D, uint64_t seed) {
  Generator gen(seed);
  return {randn({B, H, T, D}, gen), randn({B, H, S, D}, gen), randn({B, H, S, D}, gen), randn({B, H, T, D}, gen)};
}

// Batch 1 of 2 has its last `padded` keys padded.
Tensor padding_mask(int64_t S, int64_t padded) {
  Tensor m = ones({2, S});
  for (int64_t j = S - padded; j < S; ++j) m.data()[S + j] = 0;
  return m;
}

}  // namespace

TEST_CASE("every kind equals the matrix it implies times v, values and gradients") {
  for (const AttentionSettings& settings : every_kind()) {
    const auto check = [&](const Heads& h, const AttendMasks& masks) {
      const std::shared_ptr<AttentionKind> kind = make_kind(settings, h.q);
      const auto fast = [&](const Tensor& q, const Tensor& k, const Tensor& v) { return kind->attend(q, k, v, masks); };
      const auto dense = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
        return matmul(kind->implied_weights(q, k, masks), v);
      };
      check_runs_agree(run_attention(fast, h.q, h.k, h.v, h.gout), run_attention(dense, h.q, h.k, h.v, h.gout));
    };
    if (attends(settings, true)) {
      SUBCASE((label(settings) + ": causal").c_str()) { check(random_heads(2, 2, 21, 21, 6, 1), {.causal = true}); }
      SUBCASE((label(settings) + ": causal, padding").c_str()) {
        check(random_heads(2, 2, 21, 21, 6, 2), {.causal = true, .key_padding_mask = padding_mask(21, 5)});
      }
    }
    if (!attends(settings, false)) continue;
    SUBCASE((label(settings) + ": not causal").c_str()) { check(random_heads(2, 2, 21, 21, 6, 4), {}); }
    SUBCASE((label(settings) + ": not causal, padding").c_str()) {
      check(random_heads(2, 1, 14, 14, 5, 3), {.key_padding_mask = padding_mask(14, 4)});
    }
    if (registered_kind(settings.kind).self_attention_only) continue;
    SUBCASE((label(settings) + ": more keys than queries, padding").c_str()) {
      check(random_heads(2, 1, 9, 14, 5, 3), {.key_padding_mask = padding_mask(14, 4)});
    }
  }
}

TEST_CASE("generation with a carried state equals the whole sequence, position by position") {
  for (const AttentionSettings& settings : every_kind()) {
    if (!attends(settings, true)) continue;  // generation is causal
    SUBCASE(label(settings).c_str()) {
      const Heads h = random_heads(2, 3, 23, 23, 5, 4);
      const std::shared_ptr<AttentionKind> kind = make_kind(settings, h.q);
      const Tensor whole = kind->attend(h.q, h.k, h.v, {.causal = true});
      const std::unique_ptr<AttentionState> state = kind->start();
      std::vector<Tensor> pieces;
      for (const auto& [start, length] : {std::pair<int64_t, int64_t>{0, 1}, {1, 3}, {4, 1}, {5, 18}}) {
        pieces.push_back(kind->step(narrow(h.q, 2, start, length), narrow(h.k, 2, start, length),
                                    narrow(h.v, 2, start, length), *state));
        CHECK(state->length() == start + length);
      }
      check_agree(concat(pieces, 2), whole, "stepped");
      // A clone steps on independently: the same next position from both gives the same output.
      const std::unique_ptr<AttentionState> copy = state->clone();
      const Heads next = random_heads(2, 3, 1, 1, 5, 5);
      check_agree(kind->step(next.q, next.k, next.v, *copy), kind->step(next.q, next.k, next.v, *state), "clone");
      CHECK(copy->length() == 24);
    }
  }
}

TEST_CASE("causal linear attention: recurrent == chunked (chunks 1, 7, 64, n) == the masked quadratic form") {
  for (const std::string& map : feature_map_names()) {
    SUBCASE(map.c_str()) {
      const Heads h = random_heads(2, 2, 37, 37, 6, 5);
      const std::shared_ptr<AttentionKind> reference = make_attention(linear_attention_settings(map));
      const Tensor quadratic = matmul(reference->implied_weights(h.q, h.k, {.causal = true}), h.v);
      for (const int64_t chunk : {1, 7, 64, 37}) {
        const auto kind = make_attention(linear_attention_settings(map, chunk));
        const std::string what = "chunk " + std::to_string(chunk);
        check_agree(kind->attend(h.q, h.k, h.v, {.causal = true}), quadratic, what.c_str());
      }
      const std::unique_ptr<AttentionState> state = reference->start();
      check_agree(reference->step(h.q, h.k, h.v, *state), quadratic, "recurrent");
    }
  }
}

TEST_CASE("causal kinds: an output does not change when later inputs change") {
  for (const AttentionSettings& settings : every_kind()) {
    if (!attends(settings, true)) continue;
    SUBCASE(label(settings).c_str()) {
      const Heads h = random_heads(1, 2, 30, 30, 4, 6);
      const std::shared_ptr<AttentionKind> kind = make_kind(settings, h.q);
      const Tensor before = kind->attend(h.q, h.k, h.v, {.causal = true});
      const Heads later = random_heads(1, 2, 30, 30, 4, 7);  // replaces positions 20.. of q, k and v
      const auto mix = [](const Tensor& a, const Tensor& b) {
        return concat({narrow(a, 2, 0, 20), narrow(b, 2, 20, 10)}, 2);
      };
      const Tensor after = kind->attend(mix(h.q, later.q), mix(h.k, later.k), mix(h.v, later.v), {.causal = true});
      check_close(narrow(after, 2, 0, 20), narrow(before, 2, 0, 20), 1e-6f);
      CHECK(max_abs(narrow(after, 2, 20, 10) - narrow(before, 2, 20, 10)) > 0.01f);
    }
  }
}

TEST_CASE("every kind passes a gradient check through its masks") {
  for (const AttentionSettings& settings : every_kind()) {
    for (const bool causal : {false, true}) {
      if (!attends(settings, causal)) continue;
      SUBCASE((label(settings) + (causal ? ": causal" : ": not causal")).c_str()) {
        Generator gen(8);
        std::vector<Tensor> inputs{randn({2, 1, 5, 3}, gen), randn({2, 1, 5, 3}, gen), randn({2, 1, 5, 3}, gen)};
        const std::shared_ptr<AttentionKind> kind = make_kind(settings, inputs[0]);
        for (int i : {0, 1, 2})
          if (i != 1 || settings.kind_name() != VQAttention::kName) inputs[i].requires_grad_();  // vq: keys round to codes
        const AttendMasks masks{.causal = causal, .key_padding_mask = padding_mask(5, 2)};
        const GradcheckResult r = gradcheck(
            [&](const std::vector<Tensor>& x) { return kind->attend(x[0], x[1], x[2], masks); }, inputs);
        CHECK_MESSAGE(r.ok, r.worst);
      }
    }
  }
}

TEST_CASE("every kind stays finite for queries and keys scaled by 100") {
  for (const AttentionSettings& settings : every_kind()) {
    SUBCASE(label(settings).c_str()) {
      Heads h = random_heads(2, 2, 40, 40, 8, 9);
      const std::shared_ptr<AttentionKind> kind = make_kind(settings, h.q);
      h.q = h.q * 100.0f;
      h.k = h.k * 100.0f;
      for (const bool causal : {false, true})
        if (attends(settings, causal)) CHECK(all_finite(kind->attend(h.q, h.k, h.v, {.causal = causal})));
      if (!attends(settings, true)) continue;
      const std::unique_ptr<AttentionState> state = kind->start();
      CHECK(all_finite(kind->step(h.q, h.k, h.v, *state)));
    }
  }
}

TEST_CASE("feature maps: 1 + cos, elu + 1 never negative, double-softmax rows that sum to 1") {
  const Heads h = random_heads(2, 1, 6, 6, 4, 10);
  SUBCASE("cos: phi(q) . phi(k) = 1 + cos(q, k)") {
    LinearAttention cos(linear_attention_settings(CosFeatures::kName));
    const Tensor dots =
        matmul(cos.feature_map().query_features(h.q), cos.feature_map().key_features(h.k), {.transpose_b = true});
    const Tensor norms =
        matmul(sqrt(sum(h.q * h.q, {-1}, true)), sqrt(sum(h.k * h.k, {-1}, true)), {.transpose_b = true});
    check_close(dots, 1.0f + matmul(h.q, h.k, {.transpose_b = true}) / norms, 1e-5f);
  }
  SUBCASE("elu: no feature below 0 (elu(x) + 1 underflows to exactly 0 for x < -17: the eps covers it)") {
    LinearAttention elu_map(linear_attention_settings(EluFeatures::kName));
    const Tensor features = elu_map.feature_map().query_features(h.q * 50.0f);
    for (int64_t i = 0; i < features.numel(); ++i) REQUIRE(features.data()[i] >= 0);
  }
  SUBCASE("softmax: rows of the implied matrix sum to 1, padded keys get 0") {
    const auto kind = make_attention(linear_attention_settings(DoubleSoftmaxFeatures::kName));
    for (const bool causal : {false, true}) {
      const Tensor w = kind->implied_weights(h.q, h.k, {.causal = causal, .key_padding_mask = padding_mask(6, 2)});
      check_close(sum(w, {3}), ones({2, 1, 6}), 1e-5f);
      CHECK(max_abs(narrow(narrow(w, 0, 1, 1), 3, 4, 2)) == 0);
    }
  }
}

TEST_CASE("taylor: phi(q) . phi(k) = 1 + s + s^2 / 2 with s = q . k / sqrt(D), M = 1 + D + D^2") {
  const Heads h = random_heads(2, 3, 5, 7, 4, 14);
  const TaylorFeatures taylor;
  const Tensor features = taylor.query_features(h.q);
  CHECK(features.shape() == Shape{2, 3, 5, 1 + 4 + 16});
  const Tensor s = matmul(h.q, h.k, {.transpose_b = true}) / 2.0f;  // sqrt(D) = 2
  const Tensor dots = matmul(features, taylor.key_features(h.k), {.transpose_b = true});
  check_close(dots, 1.0f + s + s * s / 2.0f, 1e-4f);
  // Never below 1/2, the smallest value of 1 + s + s^2 / 2, however large the scores.
  const Tensor large = matmul(taylor.query_features(h.q * 30.0f), taylor.key_features(h.k), {.transpose_b = true});
  for (int64_t i = 0; i < large.numel(); ++i) REQUIRE(large.data()[i] >= 0.5f - 1e-3f * std::fabs(large.data()[i]));
}

TEST_CASE("favor: positive random features whose dot products approach softmax's weights as M grows") {
  // Small queries and keys: the estimate's relative variance grows as exp(|q + k|^2 / sqrt(D)) / M.
  Heads h = random_heads(1, 2, 12, 12, 8, 12);
  h.q = h.q * 0.5f;
  h.k = h.k * 0.5f;
  const Tensor softmax_weights = softmax(matmul(h.q, h.k, {.transpose_b = true}) / std::sqrt(8.0f), -1);
  auto error_with = [&](int64_t features) {
    AttentionSettings settings = linear_attention_settings(FavorFeatures::kName);
    settings.seed = 3;
    settings.kind.as<LinearAttention::Settings>().random_features = features;
    LinearAttention favor(settings);
    const Tensor w = favor.implied_weights(h.q, h.k, {});
    return max_abs(w - softmax_weights);
  };
  // Measured 0.125 at M = 16 and 0.0028 at M = 16384 (the error falls as 1/sqrt(M): 32x).
  const float coarse = error_with(16), fine = error_with(16384);
  CHECK(fine < 0.01f);
  CHECK(fine < coarse / 10);

  AttentionSettings drawn = linear_attention_settings(FavorFeatures::kName);
  drawn.seed = 5, drawn.layer = 2;
  LinearAttention favor(drawn);
  const auto& features_of = [](const LinearAttention& layer) -> const FavorFeatures& {
    return dynamic_cast<const FavorFeatures&>(layer.feature_map());
  };
  const Tensor features = favor.feature_map().query_features(h.q * 30.0f);
  for (int64_t i = 0; i < features.numel(); ++i) REQUIRE(features.data()[i] >= 0);
  const Tensor w = features_of(favor).projection(8);  // (M, 8), M = 8 ln 8 = 17: blocks of 8, 8 and 1 rows
  CHECK(w.shape() == Shape{17, 8});
  const Tensor unit = w / sqrt(sum(w * w, {-1}, true));
  Tensor identity = zeros({8, 8});
  for (int64_t i = 0; i < 8; ++i) identity.data()[i * 9] = 1;
  const Tensor cosines = matmul(narrow(unit, 0, 8, 8), narrow(unit, 0, 8, 8), {.transpose_b = true});
  check_close(cosines, identity, 1e-5f);  // the rows of a block are orthogonal
  CHECK(max_abs(matmul(narrow(unit, 0, 0, 8), narrow(unit, 0, 8, 8), {.transpose_b = true}) - identity) > 0.1f);

  // The same (seed, layer, redraws) give the same draw; a redraw changes it and is kept by the state.
  LinearAttention twin(drawn);
  CHECK(max_abs(features_of(twin).projection(8) - w) == 0);
  favor.redraw_features();
  CHECK(max_abs(features_of(favor).projection(8) - w) > 0.1f);
  twin.load_state_dict(favor.state_dict());
  CHECK(max_abs(features_of(twin).projection(8) - features_of(favor).projection(8)) == 0);
}

TEST_CASE("every feature map gives M = features(D) features whose dot products are >= 0, and is named by the setting") {
  const Heads h = random_heads(2, 1, 5, 5, 6, 13);
  for (const std::string& name : feature_map_names()) {
    SUBCASE(name.c_str()) {
      const std::unique_ptr<FeatureMap> map = make_feature_map(name);
      CHECK(std::string(map->name()) == name);
      const Tensor features = map->query_features(h.q);
      CHECK(features.shape() == Shape{2, 1, 5, map->features(6)});
      if (!map->keys_over_positions()) {  // double softmax's keys need the other positions
        const Tensor dots = matmul(features, map->key_features(h.k), {.transpose_b = true});
        for (int64_t i = 0; i < dots.numel(); ++i) REQUIRE(dots.data()[i] >= -1e-6f);
      }
      const LinearAttention layer(linear_attention_settings(name));
      CHECK(std::string(layer.feature_map().name()) == name);
    }
  }
}

TEST_CASE("settings: each kind's struct, its fields read and written through the registry's descriptions") {
  const AttentionSettings linear = linear_attention_settings(CosFeatures::kName, 5);
  const LinearAttention::Settings& own = linear.kind.as<LinearAttention::Settings>();
  CHECK(own.feature_map == "cos");
  CHECK(own.chunk == 5);
  CHECK(own.random_features == 0);  // not given: the default
  CHECK(linear.kind_name() == "linear");
  CHECK(AttentionSettings{}.kind_name() == "full");
  CHECK(is_default_kind(AttentionSettings{}.kind));
  CHECK_FALSE(is_default_kind(linear.kind));
  for (const KindDescription& kind : attention_kinds()) {
    CAPTURE(kind.name);
    CHECK(&registered_kind(kind.defaults) == &kind);  // the struct's type is the kind
    std::vector<std::string> keys;
    for (const KindSetting& setting : kind.settings) {
      CAPTURE(setting.key);
      keys.push_back(setting.key);
      // set writes the field get reads, and no other
      KindSettings changed = kind.defaults;
      const SettingValue other = std::visit(
          [&](const auto& d) -> SettingValue {
            using T = std::decay_t<decltype(d)>;
            if constexpr (std::is_same_v<T, bool>) return !d;
            else if constexpr (std::is_same_v<T, int64_t>) return d + 1;
            else return setting.choices.back() != d ? setting.choices.back() : setting.choices.front();
          },
          setting.get(kind.defaults));
      setting.set(changed, other);
      for (const KindSetting& each : kind.settings)
        CHECK((each.get(changed) == each.get(kind.defaults)) == (&each != &setting));
    }
    std::sort(keys.begin(), keys.end());
    CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());  // each checkpoint key once
    // What it costs is its to say: every kind fills both in.
    CHECK(kind.kept_scores);
    CHECK(kind.state_numbers);
  }
  check_error([] { AttentionSettings{}.kind.as<LinearAttention::Settings>(); },
              {"these are full attention's settings, read as linear attention's"});
  check_error([] { LinearAttention{AttentionSettings{}}; }, {"full attention's settings, read as linear"});
  KindSettings full;
  check_error([&] { registered_kind(LinearAttention::kName).settings.front().set(full, std::string("cos")); },
              {"full attention's settings, read as linear"});
  KindSettings linear_kind = LinearAttention::Settings{};
  check_error([&] { registered_kind(LinearAttention::kName).settings.front().set(linear_kind, int64_t{3}); },
              {"feature_map takes a value of another type"});
}

TEST_CASE("what each kind costs: the numbers a query reads per head, and the scores it keeps for backward") {
  constexpr int64_t D = 16;
  const auto state = [](const AttentionSettings& s, int64_t length, bool causal) {
    return registered_kind(s.kind).state_numbers(s, length, D, causal);
  };
  for (const bool causal : {false, true}) {
    CAPTURE(causal);
    CHECK(state(full_attention(), 100, causal) == 2 * 100 * D);
    CHECK(state(linear_attention_settings("elu"), 100, causal) == D * (D + 1));  // M = D
    CHECK(state(linear_attention_settings("taylor"), 100, causal) == (1 + D + D * D) * (D + 1));
  }
  // 8 blocks of 8, no random blocks: blocks 0 and 7 see all 8, blocks 1 and 6 four (0, i-1..i+1, 7
  // less the window's overlap), blocks 2-5 five: 44 blocks of 8 keys over 8 query blocks of 8.
  const AttentionSettings window_global = bigbird_attention_settings({.block = 8, .random_blocks = 0});
  CHECK(state(window_global, 64, false) == 2 * D * 44);
  // The same pattern over 16 positions, two blocks of 8, each listing both: both ways every query
  // reads 16 keys; causally query i reads i + 1, 136 over the 16 queries.
  CHECK(state(window_global, 16, false) == 2 * D * 16);
  CHECK(state(window_global, 16, true) == 2 * D * 136 / 16);
  const AttentionSettings linformer{.kind = LinformerAttention::Settings{.k = 12}, .max_length = 64};
  CHECK(state(linformer, 64, false) == 2 * 12 * D);
  // vq reads its own block and the one before exactly, and both ways the one after too.
  const AttentionSettings vq = vq_attention_settings(16, 32);
  const int64_t per_code = 32 * (2 * D + 1);
  CHECK(state(vq, 1000, true) == 2 * D * 2 * 16 + per_code);
  CHECK(state(vq, 1000, false) == 2 * D * 3 * 16 + per_code);

  // The scores kept: none by the fused ops and linear's chunked product; VQ's window and codes,
  // Linformer's k; at most the length.
  const auto kept = [](const AttentionSettings& s, int64_t length) { return registered_kind(s.kind).kept_scores(s, length); };
  for (const AttentionSettings& fused : {full_attention(), linear_attention_settings("elu"), window_global})
    CHECK(kept(fused, 1000) == 0);
  CHECK(kept(vq, 1000) == 2 * 16 + 32);
  CHECK(kept(vq, 40) == 40);
  CHECK(kept(linformer, 64) == 12);
  CHECK(kept(linformer, 8) == 8);
}

TEST_CASE("attention kind errors name the setting and the choices") {
  check_error([] { registered_kind("sparse"); },
              {"unknown attention kind 'sparse'", joined_names(attention_kind_names())});
  struct Unregistered {};
  check_error([] { make_attention({.kind = Unregistered{}}); }, {"no registered kind's", joined_names(attention_kind_names())});
  check_error([] { make_attention(linear_attention_settings("relu")); },
              {"linear attention", "unknown feature_map 'relu'", "elu, cos, softmax, favor, taylor"});
  check_error([] { make_feature_map("relu"); }, {"unknown feature map 'relu'", "elu, cos, softmax, favor, taylor"});
  check_error([] { make_attention({.kind = LinearAttention::Settings{.random_features = -1}}); },
              {"random_features must be >= 0", "-1"});
  check_error([] { LinearAttention(linear_attention_settings(EluFeatures::kName)).redraw_features(); },
              {"only the favor feature map", "elu"});
  check_error([] { make_attention(linear_attention_settings(EluFeatures::kName, 0)); }, {"chunk must be from 1 to 4096, got 0"});
  check_error([] { make_attention({.dropout = 1.0f}); }, {"dropout must be in [0, 1), got 1"});
  const auto kind = make_attention({.kind = LinearAttention::Settings{}});
  const Heads h = random_heads(1, 1, 4, 4, 3, 11);
  check_error([&] { kind->attend(h.q, h.k, h.v, {.causal = true, .causal_offset = 2}); },
              {"causal_offset 2 is not supported", "start() and step()"});
}
