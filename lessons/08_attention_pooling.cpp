// Lesson 08: attention pooling, from kernel regression to the scoring functions.
//
//  1. d2l's regression toy, y = 2 sin(x) + x^0.8 + noise: average pooling, Nadaraya-Watson with a
//     fixed Gaussian kernel, and Nadaraya-Watson with a learned width (each training point left
//     out of its own keys); the fits and the attention weights before and after training;
//  2. the scoring functions side by side (dot, scaled dot, additive, general) on one set of
//     queries and keys; why the scale 1/sqrt(d): the variance of q . k and the saturation of the
//     softmax against d;
//  3. masked softmax on padded keys.
// The note that goes with it: docs/08_attention_pooling.md.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "data/copied_keys.h"
#include "data/regression_toy.h"
#include "harness/cli.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "models/kernel_regression.h"
#include "nn/attention/masked_softmax.h"
#include "nn/attention/nadaraya_watson.h"
#include "nn/attention/scoring.h"
#include "nn/attention/scoring_modules.h"
#include "nn/attention/softmax_saturation.h"
#include "optim/sgd.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

// Part 2: the query and key sizes d of the scaling experiment.
const std::vector<int64_t> kDims = {2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 320, 384, 448, 512};

std::vector<double> doubles(const Tensor& t) {
  const std::vector<float> v = t.to_vector();
  return {v.begin(), v.end()};
}

// summary.json's metrics in the order the parts add them, each with its note for the final printout.
struct Summary {
  nlohmann::ordered_json metrics;
  harness::MetricNotes notes;
  void add(const std::string& name, double value, const std::string& note) { metrics[name] = value, notes[name] = note; }
};

// ---- 1. attention pooling on a regression toy ----

// The weights as a heatmap: test inputs (queries) down, training inputs (keys) across, every
// fifth labelled; colours from 0 to `scale_max`, shared by the maps to be compared.
plot::Heatmap weights_map(const std::string& title, const Tensor& weights, const data::RegressionToy& toy, double scale_max) {
  plot::Heatmap map{title, "training input x_i, sorted (keys)", "test input x (queries)", "attention weight",
                       plot::matrix_rows(weights.data(), weights.size(0), weights.size(1)), {}, {}};
  map.scale_min = 0, map.scale_max = scale_max;
  if (weights.size(1) <= 100)
    map.row_labels = plot::sparse_labels(doubles(toy.x_test), 5), map.col_labels = plot::sparse_labels(doubles(toy.x_train), 5);
  return map;
}

// The model's predictions at the test inputs from every training point, and its weights (Q,N).
nn::AttentionOutput predict(models::KernelRegression& model, const data::RegressionToy& toy) {
  NoGradGuard no_grad;
  return model.forward(toy.x_test, toy.x_train, toy.y_train);
}

// Part 1's figures, for the printout and summary.json.
struct Pooling {
  double mse_average = 0, mse_nonparametric = 0, mse_parametric = 0;
  double initial_w = 0, learned_w = 0, first_loss = 0, last_loss = 0, best_w = 0;
};

// The training loss against w, on a grid, with and without leaving each point out of its own keys,
// and the w that SGD visited: why training must leave the point out.
void plot_loss_against_w(harness::Run& run, const data::RegressionToy& toy, const models::RegressionBatch& batch,
                         const plot::Series& path, Pooling& result) {
  NoGradGuard no_grad;
  plot::Series left_out{"leave-one-out loss (what SGD minimises)"}, kept{"each point among its own keys"};
  const double w_max = std::max(40.0, 1.5 * *std::max_element(path.x.begin(), path.x.end()));
  double best_loss = INFINITY;
  for (int i = 0; i <= 400; ++i) {
    const double w = w_max * i / 400;
    const auto wf = static_cast<float>(w);
    const double loss = mse_loss(nn::nadaraya_watson(toy.x_train, batch.keys, batch.values, wf).context, toy.y_train).item();
    left_out.x.push_back(w), left_out.y.push_back(loss);
    kept.x.push_back(w), kept.y.push_back(mse_loss(nn::nadaraya_watson(toy.x_train, toy.x_train, toy.y_train, wf).context, toy.y_train).item());
    if (loss < best_loss) best_loss = loss, result.best_w = w;
  }
  run.wrote(plot::save_line_chart(run.path("loss_against_w"),
                                     {"Training loss against the kernel's w = 1/bandwidth", "w", "training MSE", {left_out, kept, path}}));
}

// Full-batch SGD on the leave-one-out loss, one shared training step at a time. metrics.csv gets
// each step's loss and the w it was computed at; so does the returned path, for loss_against_w.png.
plot::Series train_width(harness::Run& run, models::KernelRegression& model, const models::RegressionBatch& batch,
                            const harness::CommonFlags& flags, Pooling& result) {
  optim::SGD sgd(model.named_parameters(), {.lr = flags.lr});
  harness::CsvWriter metrics(run.file("metrics.csv"), {"step", "train_loss", "w"});
  plot::Series path{"SGD's steps", {}, {}, /*dots=*/true};
  std::printf("  %6s %12s %10s\n", "step", "train MSE", "w");
  for (int64_t step = 1; step <= flags.steps; ++step) {
    const double w = model.w.item();
    const double loss = optim::train_step(model, sgd, batch, /*clip=*/0).loss;  // at w, before the step
    run.check_loss(step, loss);
    metrics.row({static_cast<double>(step), loss, w});
    path.x.push_back(w), path.y.push_back(loss);
    if (step == 1) result.first_loss = loss;
    result.last_loss = loss;
    if (step == 1 || step % std::max<int64_t>(1, flags.steps / 10) == 0 || step == flags.steps)
      std::printf("  %6lld %12.4f %10.4f\n", static_cast<long long>(step), loss, w);
  }
  run.save_checkpoint(model);  // refuses a w that the last step made infinite
  result.learned_w = model.w.item();
  return path;
}

void attention_pooling(harness::Run& run, const harness::CommonFlags& flags, int64_t points, float noise, Generator& gen,
                       Summary& summary) {
  std::printf("== 1. attention pooling: y = 2 sin(x) + x^0.8 + noise (sd %g), %lld training points ==\n", noise,
              static_cast<long long>(points));
  const data::RegressionToy toy = data::regression_toy(points, noise, gen);
  Pooling result;
  models::KernelRegression model(gen);
  result.initial_w = model.w.item();
  // Average pooling: every key weighs 1/N, whatever the query.
  const Tensor average = full({toy.x_test.numel()}, mean(toy.y_train).item());
  // Non-parametric: a Gaussian kernel of fixed width (w = 1).
  const nn::AttentionOutput fixed = nn::nadaraya_watson(toy.x_test, toy.x_train, toy.y_train);
  const nn::AttentionOutput before = predict(model, toy);
  // Parametric: the same formula, w learned by SGD, each training point predicted from the others.
  const models::RegressionBatch batch{toy.x_train, models::leave_one_out(toy.x_train), models::leave_one_out(toy.y_train),
                                      toy.y_train};
  const plot::Series path = train_width(run, model, batch, flags, result);
  const nn::AttentionOutput after = predict(model, toy);
  result.mse_average = mse_loss(average, toy.y_truth).item();  // test MSE against the noise-free curve
  result.mse_nonparametric = mse_loss(fixed.context, toy.y_truth).item();
  result.mse_parametric = mse_loss(after.context, toy.y_truth).item();
  std::printf("  w: %.4f before training, %.4f after %lld steps\n", result.initial_w, result.learned_w, static_cast<long long>(flags.steps));
  std::printf("  test MSE against the noise-free curve, %lld test inputs:\n", static_cast<long long>(toy.x_test.numel()));
  std::printf("    average pooling           %.4f\n", result.mse_average);
  std::printf("    non-parametric, w = 1     %.4f\n", result.mse_nonparametric);
  std::printf("    parametric, learned w     %.4f\n", result.mse_parametric);

  const std::vector<double> x_test = doubles(toy.x_test);
  run.wrote(plot::save_line_chart(
      run.path("fits"), {"Three attention poolings of the same points", "x", "y",
                         {{"truth", x_test, doubles(toy.y_truth)},
                          {"training data", doubles(toy.x_train), doubles(toy.y_train), /*dots=*/true},
                          {"average", x_test, doubles(average)},
                          {"w = 1", x_test, doubles(fixed.context)},
                          {"learned w", x_test, doubles(after.context)}}}));
  // One colour scale for the three maps: a wider kernel spreads the weight thinner.
  const double largest = amax(concat({flatten(fixed.weights), flatten(before.weights), flatten(after.weights)})).item();
  char title[96];
  run.wrote(plot::save_heatmap(run.path("weights_nonparametric"),
                                  weights_map("Non-parametric Nadaraya-Watson: w = 1", fixed.weights, toy, largest)));
  std::snprintf(title, sizeof title, "Parametric, before training: w = %.3f", result.initial_w);
  run.wrote(plot::save_heatmap(run.path("weights_before_training"), weights_map(title, before.weights, toy, largest)));
  std::snprintf(title, sizeof title, "Parametric, after training: w = %.3f", result.learned_w);
  run.wrote(plot::save_heatmap(run.path("weights_after_training"), weights_map(title, after.weights, toy, largest)));
  plot_loss_against_w(run, toy, batch, path, result);
  std::printf("  the leave-one-out loss is lowest at w = %.2f on a grid; SGD ended at %.4f\n", result.best_w, result.learned_w);
  summary.add("mse_average", result.mse_average, "part 1: test MSE against the noise-free curve, average pooling");
  summary.add("mse_nonparametric", result.mse_nonparametric, "part 1: the same, Nadaraya-Watson with w = 1");
  summary.add("mse_parametric", result.mse_parametric, "part 1: the same, Nadaraya-Watson with the learned w");
  summary.add("initial_w", result.initial_w, "the parametric model's w before training, drawn from U(0, 1)");
  summary.add("learned_w", result.learned_w, "its w after training");
  summary.add("best_w_on_grid", result.best_w, "the w of the lowest leave-one-out loss, on a grid (loss_against_w.png)");
  summary.add("train_loss_first", result.first_loss, "leave-one-out training MSE at the first step");
  summary.add("train_loss", result.last_loss, "leave-one-out training MSE at the last step");
}

// ---- 2. scoring functions ----

// Queries that are noisy copies of some of the keys, scored four ways; a heatmap of each one's weights.
void scoring_side_by_side(harness::Run& run, Generator& gen, Summary& summary) {
  constexpr int64_t kQueries = 6, kKeys = 10, kDim = 8, kHidden = 16;
  std::printf("\n== 2. scoring functions on the same %lld queries and %lld keys (d = %lld) ==\n", static_cast<long long>(kQueries),
              static_cast<long long>(kKeys), static_cast<long long>(kDim));
  NoGradGuard no_grad;
  const auto [keys, queries, copied] = data::copied_keys(kKeys, kQueries, kDim, 0.5f, gen);  // query i ~ key copied[i]
  nn::AdditiveAttention additive(kDim, kDim, kHidden, 0, gen);  // untrained: random W_q, W_k, w_v
  nn::GeneralAttention general(kDim, kDim, 0, gen);              // untrained: random W
  std::vector<std::string> query_names, key_names;
  for (int64_t q = 0; q < kQueries; ++q) query_names.push_back("q" + std::to_string(q) + " ~ k" + std::to_string(copied[static_cast<size_t>(q)]));
  for (int64_t k = 0; k < kKeys; ++k) key_names.push_back("k" + std::to_string(k));
  std::printf("  each query is a key plus noise of sd 0.5 (q0 ~ k%lld: a copy of key %lld)\n", static_cast<long long>(copied[0]),
              static_cast<long long>(copied[0]));
  std::printf("  %-12s %22s %26s\n", "scoring", "mean largest weight", "top key = the copied key");
  // A row of the table, a metric (the share of queries whose top key is the one they copy) and a heatmap.
  auto report = [&](const char* name, const char* metric, const char* stem, const char* title, const Tensor& weights) {  // (1,Q,S)
    const Tensor top = argmax(weights, -1);  // (1,Q)
    int64_t right = 0;
    for (int64_t q = 0; q < kQueries; ++q) right += static_cast<int64_t>(top.data()[q]) == copied[static_cast<size_t>(q)];
    const double largest = mean(amax(weights, {-1})).item();
    std::printf("  %-12s %22.3f %20lld of %lld\n", name, largest, static_cast<long long>(right), static_cast<long long>(kQueries));
    summary.add(metric, static_cast<double>(right) / kQueries, "part 2: share of queries whose largest weight is on the key they copy");
    plot::Heatmap map{title, "key", "query (~ the key it copies)", "attention weight",
                         plot::matrix_rows(weights.data(), kQueries, kKeys), query_names, key_names};
    map.scale_min = 0, map.scale_max = 1;  // one scale for the four
    run.wrote(plot::save_heatmap(run.path(stem), map));
  };
  report("dot", "top_key_right_dot", "scores_dot", "Dot product: q . k", nn::dot_attention(queries, keys, keys).weights);
  report("scaled dot", "top_key_right_scaled_dot", "scores_scaled_dot", "Scaled dot product: q . k / sqrt(d)",
         nn::scaled_dot_attention(queries, keys, keys).weights);
  report("additive", "top_key_right_additive", "scores_additive", "Additive (untrained): w_v . tanh(W_q q + W_k k)",
         additive.forward(queries, keys, keys).weights);
  report("general", "top_key_right_general", "scores_general", "General (untrained): q^T W k", general.forward(queries, keys, keys).weights);
}

// For each d: random queries and keys of N(0, 1) entries, each query against `keys` keys, scored
// q . k and q . k / sqrt(d); the scores' variance, and what the softmax makes of them.
void why_the_scale(harness::Run& run, int64_t trials, int64_t keys, Generator& gen, Summary& summary) {
  std::printf("\n== 2b. why 1/sqrt(d): %lld random queries against %lld random keys each, entries N(0, 1) ==\n",
              static_cast<long long>(trials), static_cast<long long>(keys));
  harness::CsvWriter csv(run.file("scaling.csv"), {"d", "var_dot", "var_scaled_dot", "max_weight", "max_weight_scaled", "grad_median",
                                                   "grad_median_scaled", "grad_mean", "grad_mean_scaled"});
  plot::Series var_dot{"var(q . k)"}, line{"y = d"}, var_scaled{"var(q . k / sqrt(d))"};
  plot::Series largest{"q . k"}, largest_scaled{"q . k / sqrt(d)"};
  plot::Series median{"q . k, median"}, median_scaled{"q . k / sqrt(d), median"}, mean_length{"q . k, mean"},
      mean_scaled{"q . k / sqrt(d), mean"};
  std::printf("  %5s %10s %16s %16s %26s\n", "d", "var(q.k)", "var(q.k/sqrt d)", "largest weight", "median gradient length");
  nn::SoftmaxSaturation plain{}, scaled{};
  for (const int64_t d : kDims) {
    const Tensor q = randn({trials, 1, d}, gen), k = randn({trials, keys, d}, gen);  // (trials,1,d), (trials,S,d)
    plain = nn::softmax_saturation(nn::dot_scores(q, k), gen), scaled = nn::softmax_saturation(nn::scaled_dot_scores(q, k), gen);
    const auto x = static_cast<double>(d);
    auto add = [x](plot::Series& s, double y) { s.x.push_back(x), s.y.push_back(y); };
    add(var_dot, plain.variance), add(line, x), add(var_scaled, scaled.variance);
    add(largest, plain.largest_weight), add(largest_scaled, scaled.largest_weight);
    add(median, plain.grad_median), add(median_scaled, scaled.grad_median);
    add(mean_length, plain.grad_mean), add(mean_scaled, scaled.grad_mean);
    csv.row({x, plain.variance, scaled.variance, plain.largest_weight, scaled.largest_weight, plain.grad_median, scaled.grad_median,
             plain.grad_mean, scaled.grad_mean});
    std::printf("  %5lld %10.2f %16.3f %8.3f / %.3f %15.2e / %.3f\n", static_cast<long long>(d), plain.variance, scaled.variance,
                plain.largest_weight, scaled.largest_weight, plain.grad_median, scaled.grad_median);
  }
  std::printf("  (largest weight and gradient length: without / with 1/sqrt(d))\n");
  run.wrote(plot::save_line_chart(run.path("scaling_variance"),
                                     {"The variance of q . k grows with d", "d (size of q and k)", "variance", {var_dot, line, var_scaled}}));
  run.wrote(plot::save_line_chart(run.path("scaling_largest_weight"), {"Softmax of the scores: the largest weight", "d (size of q and k)",
                                                                          "largest weight (mean over queries)", {largest, largest_scaled}}));
  run.wrote(plot::save_line_chart(run.path("scaling_gradient"),
                                     {"The gradient that the softmax passes back to the scores", "d (size of q and k)",
                                      "gradient length per query (log scale)", {median, median_scaled, mean_length, mean_scaled},
                                      /*log_y=*/true}));
  summary.add("var_dot_d512", plain.variance, "part 2b: variance of q . k at d = 512 (theory: 512)");
  summary.add("var_scaled_dot_d512", scaled.variance, "variance of q . k / sqrt(d) at d = 512 (theory: 1)");
  summary.add("max_weight_d512", plain.largest_weight, "largest softmax weight at d = 512, unscaled scores (mean over queries)");
  summary.add("max_weight_scaled_d512", scaled.largest_weight, "the same with 1/sqrt(d)");
  summary.add("grad_median_d512", plain.grad_median, "median gradient length through the softmax at d = 512, unscaled");
  summary.add("grad_median_scaled_d512", scaled.grad_median, "the same with 1/sqrt(d)");
}

// ---- 3. masked softmax ----

// Prints a table of weights (B,Q,S), masked keys' weights in brackets; returns the largest of those.
double print_masked(const char* what, const Tensor& scores, const nn::KeyMask& mask) {
  const Tensor weights = nn::masked_softmax(scores, mask);
  const Tensor visible = expand(mask.visible(scores.shape()), scores.shape());  // (B,Q,S) of 0/1
  const int64_t B = scores.size(0), Q = scores.size(1), S = scores.size(2);
  std::printf("  %s\n  %5s %5s   %-34s %s\n", what, "batch", "query", "weights of keys 0..3, [masked]", "sum");
  double on_masked = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t q = 0; q < Q; ++q) {
      std::printf("  %5lld %5lld  ", static_cast<long long>(b), static_cast<long long>(q));
      double total = 0;
      for (int64_t s = 0; s < S; ++s) {
        const int64_t at = (b * Q + q) * S + s;
        const float w = weights.data()[at];
        total += w;
        if (visible.data()[at] != 0) {
          std::printf(" %8.3f", w);
          continue;
        }
        char text[24];
        std::snprintf(text, sizeof text, "[%g]", w);  // exactly 0 prints as [0]
        std::printf(" %8s", text);
        on_masked = std::max(on_masked, static_cast<double>(std::fabs(w)));
      }
      std::printf("    %.3f\n", total);
    }
  return on_masked;
}

void masked_softmax_demo(Generator& gen, Summary& summary) {
  std::printf("\n== 3. masked softmax: padded keys get weight 0 ==\n");
  NoGradGuard no_grad;
  const Tensor scores = uniform({2, 2, 4}, 0, 1, gen);  // (B,Q,S) = (2,2,4), as in d2l's example
  const nn::KeyMask lengths{.valid_lengths = tensor({2, 3})};
  const double per_row = print_masked("valid lengths [2, 3]: batch row b sees its first 2 or 3 keys", scores, lengths);
  const double per_query = print_masked("valid lengths per query [[1, 3], [0, 4]]: a query that sees no key gets zeros", scores,
                                        {.valid_lengths = tensor({1, 3, 0, 4}, {2, 2})});
  const double on_masked = std::max(per_row, per_query);  // the largest weight on a masked key
  // The values of padded keys never reach the output: give them huge values and compare.
  const Tensor values = randn({2, 4, 3}, gen);  // (B,S,Dv)
  const Tensor padding = 1.0f - reshape(lengths.visible({2, 1, 4}), {2, 4, 1});  // (B,S,1): 1 on a padded key
  const Tensor changed = values + 1000.0f * padding;
  const Tensor before = nn::attend(scores, values, {.mask = lengths}).context;
  const Tensor after = nn::attend(scores, changed, {.mask = lengths}).context;
  const double moved = amax(abs(after - before)).item();
  std::printf("  largest weight on a masked key: %g; adding 1000 to the padded keys' values moves the context by %g\n", on_masked, moved);
  summary.add("masked_weight_max", on_masked, "part 3: the largest weight on a masked key (exactly 0)");
  summary.add("padded_values_effect", moved, "part 3: how far the context moves when the padded keys' values grow by 1000");
}

// The keys of part 2b at the largest d are trials x keys x 512 floats: checked as given, before --quick.
void check_scaling_fits(int64_t trials, int64_t keys) {
  if (trials * keys > 65536)
    fail("08_attention_pooling", "--trials ", trials, " x --keys ", keys, " = ", trials * keys,
         " random keys per d, more than 65536 (at d = 512 they would take ", trials * keys * 512 * 4 / (1 << 20),
         " MB); give fewer --trials or --keys");
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("08_attention_pooling",
                           "Lesson 08: Nadaraya-Watson attention pooling, fixed and learned; scoring functions and why 1/sqrt(d); "
                           "masked softmax.\n(Full-batch SGD on the kernel's w: --batch does not apply.)",
                           {.steps = 100, .lr = 5.0f});
    int64_t points = 50, trials = 1000, keys = 16;
    float noise = 0.5f;
    cli.option("--points", points, "training points of the regression toy", {3, 1000});
    cli.option("--noise", noise, "standard deviation of the noise on the training targets", {0, 10});
    cli.option("--trials", trials, "random queries per d in part 2b", {1, 10000});
    cli.option("--keys", keys, "keys per query in part 2b", {2, 1024});
    cli.parse(argc, argv);
    check_scaling_fits(trials, keys);
    if (cli.common.quick) cli.common.steps = std::min<int64_t>(cli.common.steps, 20), trials = std::min<int64_t>(trials, 200);
    harness::Run run(cli);
    Generator gen(cli.common.seed);

    Summary summary;
    attention_pooling(run, cli.common, points, noise, gen, summary);
    scoring_side_by_side(run, gen, summary);
    why_the_scale(run, trials, keys, gen, summary);
    masked_softmax_demo(gen, summary);
    run.finish(summary.metrics, summary.notes,
               "docs/08_attention_pooling.md, section 3 (Learning the width); then exercise 1: --noise 0 and --noise 1.5,\n"
               "      and compare learned_w");
  });
}
