// Lesson 02: the regression family, from the perceptron to softmax regression.
//
//  1. the perceptron rule, no gradients, on two separable clusters;
//  2. linear regression two ways: the normal equations and gradient descent with autograd;
//  3. logistic regression (a sigmoid on a linear score) on two overlapping clusters;
//  4. softmax regression on three classes;
//  5. XOR, where every linear model fails, and one hidden layer that does not.
// The note that goes with it: docs/02_regression.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "core/autograd.h"
#include "core/linalg.h"
#include "core/ops.h"
#include "data/toy2d.h"
#include "harness/cli.h"
#include "plot/plot.h"
#include "plot/regions.h"
#include "harness/run.h"
#include "models/perceptron.h"
#include "nn/linear.h"
#include "nn/sequential.h"
#include "optim/adam.h"
#include "optim/sgd.h"

using namespace ladder;

namespace {

// Full-batch training: `loss_of` computes the loss of the whole training set; returns its curve.
// With a `run`, each loss and the loss after the last step must not show divergence (run.h): the
// run stops as diverged. Linear regression trains without: its divergence is exercise 1's subject.
std::vector<double> train(optim::Optimizer& optimizer, int64_t steps, const std::function<Tensor()>& loss_of,
                          harness::Run* run = nullptr, const std::string& what = "") {
  std::vector<double> curve;
  for (int64_t step = 0; step < steps; ++step) {
    const Tensor loss = loss_of();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    curve.push_back(loss.item());
    if (run) run->check_loss(step + 1, curve.back(), harness::LossKind::plain, what);
  }
  if (run) {
    NoGradGuard no_grad;
    run->check_loss(steps, loss_of().item(), harness::LossKind::plain, what);  // what the last update did
  }
  return curve;
}

double accuracy(const Tensor& predicted, const Tensor& labels) {
  int64_t right = 0;
  for (int64_t i = 0; i < labels.numel(); ++i) right += predicted.data()[i] == labels.data()[i];
  return static_cast<double>(right) / static_cast<double>(labels.numel());
}

// Class 1 where the logit is positive (sigmoid above 1/2).
Tensor binary_decision(nn::Module& model, const Tensor& x) {
  const Tensor logits = model(x);
  Tensor out = empty({x.size(0)});
  for (int64_t i = 0; i < x.size(0); ++i) out.data()[i] = logits.data()[i] > 0 ? 1.0f : 0.0f;
  return out;
}

Tensor as_column(const Tensor& y) { return reshape(y, {-1, 1}); }

struct Parts {
  int64_t perceptron_epochs = 0;
  int64_t linear_diverged_at = 0;  // the step at which gradient descent's MSE stopped being finite; 0: never
  double weight_gap = 0, logistic_acc = 0, softmax_acc = 0, xor_linear_acc = 0, xor_mlp_acc = 0;
  std::map<std::string, std::vector<double>> curves;  // training loss per step, by model
};

// ---- 1. the perceptron ----
void perceptron(harness::Run& run, Parts& parts, Generator& gen) {
  std::printf("== 1. the perceptron rule on separable clusters ==\n");
  const data::Points d = data::separable_blobs(50, 0.8f, 0.15f, gen);
  Tensor signs = d.y * 2.0f - 1.0f;  // classes 0/1 as -1/+1
  models::Perceptron p(2);
  int64_t mistakes = -1;
  while (mistakes != 0 && parts.perceptron_epochs < 100) {
    mistakes = p.epoch(d.x, signs);
    ++parts.perceptron_epochs;
    std::printf("  epoch %lld: %lld mistakes\n", static_cast<long long>(parts.perceptron_epochs), static_cast<long long>(mistakes));
  }
  std::printf("  %s after %lld epochs: w = (%.2f, %.2f), b = %.2f\n", mistakes == 0 ? "separated" : "NOT separated",
              static_cast<long long>(parts.perceptron_epochs), p.weight.data()[0], p.weight.data()[1], p.bias);
  auto classify = [&](const Tensor& x) { return (p.predict(x) + 1.0f) / 2.0f; };
  run.wrote(plot::save_decision_regions(run.path("perceptron"),
                                           plot::decision_regions(classify, d.x, d.y, {"-1", "+1"}, "Perceptron")));
}

// ---- 2. linear regression, solved and learned ----
void linear_regression(Parts& parts, const harness::CommonFlags& flags, Generator& gen) {
  std::printf("\n== 2. linear regression: y = 2 x1 - 3 x2 + 0.5 + noise ==\n");
  const data::Points d = data::linear_targets(200, {2, -3}, 0.5f, 0.1f, gen);
  // Normal equations: with X1 = [x, 1], the least-squares w solves (X1^T X1) w = X1^T y.
  const Tensor x1 = concat({d.x, ones({d.x.size(0), 1})}, 1);
  const Tensor solved = solve(matmul(x1, x1, {.transpose_a = true}), matmul(x1, d.y, {.transpose_a = true}));
  // Gradient descent on the mean squared error, the gradients from autograd.
  nn::Linear model(2, 1);
  optim::SGD sgd(model.named_parameters(), {.lr = flags.lr});
  parts.curves["linear regression (MSE)"] =
      train(sgd, flags.steps, [&] { return mse_loss(model(d.x), as_column(d.y)); });
  // Above a critical rate gradient descent diverges (exercise 1): the lesson says where, and goes on.
  const std::vector<double>& mse = parts.curves["linear regression (MSE)"];
  const auto blown = std::find_if(mse.begin(), mse.end(), [](double loss) { return !harness::divergence(loss, harness::LossKind::plain).empty(); });
  if (blown != mse.end()) parts.linear_diverged_at = blown - mse.begin() + 1;
  const float learned[] = {model.weight.data()[0], model.weight.data()[1], model.bias.data()[0]};
  std::printf("  %-22s %8s %8s %8s\n", "", "w1", "w2", "b");
  std::printf("  %-22s %8.4f %8.4f %8.4f\n", "normal equations", solved.data()[0], solved.data()[1], solved.data()[2]);
  std::printf("  %-22s %8.4f %8.4f %8.4f\n", "gradient descent", learned[0], learned[1], learned[2]);
  for (int i = 0; i < 3; ++i) {
    const double gap = std::fabs(learned[i] - solved.data()[i]);
    if (!(gap <= parts.weight_gap)) parts.weight_gap = gap;  // written so that a NaN (divergence) is kept
  }
  std::printf("  largest difference: %.2e after %lld steps\n", parts.weight_gap, static_cast<long long>(flags.steps));
  if (parts.linear_diverged_at > 0)
    std::printf("  gradient descent diverged: its MSE was %g at step %lld; --lr %g is too large here (exercise 1)\n", *blown,
                static_cast<long long>(parts.linear_diverged_at), static_cast<double>(flags.lr));
}

// ---- 3. logistic regression ----
void logistic_regression(harness::Run& run, Parts& parts, const harness::CommonFlags& flags, Generator& gen) {
  std::printf("\n== 3. logistic regression on two overlapping clusters ==\n");
  const std::vector<std::pair<float, float>> centers = {{-1, -1}, {1, 1}};
  const data::Points train_set = data::blobs(100, centers, 0.9f, gen), test_set = data::blobs(100, centers, 0.9f, gen);
  nn::Linear model(2, 1);
  optim::SGD sgd(model.named_parameters(), {.lr = flags.lr});
  parts.curves["logistic regression (BCE)"] = train(sgd, flags.steps, [&] {
    return binary_cross_entropy_with_logits(model(train_set.x), as_column(train_set.y));
  }, &run, "logistic regression's loss");
  NoGradGuard no_grad;
  parts.logistic_acc = accuracy(binary_decision(model, test_set.x), test_set.y);
  std::printf("  test accuracy %.3f (the clusters overlap: some points lie on the other cluster's side)\n", parts.logistic_acc);
  run.wrote(plot::save_decision_regions(
      run.path("logistic"), plot::decision_regions([&](const Tensor& x) { return binary_decision(model, x); }, test_set.x,
                                                      test_set.y, {"class 0", "class 1"}, "Logistic regression (test points)")));
}

// ---- 4. softmax regression ----
void softmax_regression(harness::Run& run, Parts& parts, const harness::CommonFlags& flags, Generator& gen) {
  std::printf("\n== 4. softmax regression on three classes ==\n");
  const std::vector<std::pair<float, float>> centers = {{-1.5f, -0.5f}, {1.5f, -0.5f}, {0, 1.5f}};
  const data::Points train_set = data::blobs(100, centers, 0.6f, gen), test_set = data::blobs(100, centers, 0.6f, gen);
  nn::Linear model(2, 3);  // one score per class; softmax turns the scores into probabilities
  optim::SGD sgd(model.named_parameters(), {.lr = flags.lr});
  parts.curves["softmax regression (CE)"] =
      train(sgd, flags.steps, [&] { return cross_entropy(model(train_set.x), train_set.y); }, &run, "softmax regression's loss");
  NoGradGuard no_grad;
  auto classify = [&](const Tensor& x) { return argmax(model(x), 1); };
  parts.softmax_acc = accuracy(classify(test_set.x), test_set.y);
  std::printf("  test accuracy %.3f\n", parts.softmax_acc);
  run.wrote(plot::save_decision_regions(run.path("softmax"),
                                           plot::decision_regions(classify, test_set.x, test_set.y,
                                                                     {"class 0", "class 1", "class 2"},
                                                                     "Softmax regression (test points)")));
}

// ---- 5. XOR ----
void xor_problem(harness::Run& run, Parts& parts, const harness::CommonFlags& flags, Generator& gen) {
  std::printf("\n== 5. XOR: no straight line separates it ==\n");
  const data::Points d = data::xor_points(50, 0.3f, gen);
  nn::Linear linear(2, 1);
  optim::SGD sgd(linear.named_parameters(), {.lr = flags.lr});
  parts.curves["XOR: logistic regression"] =
      train(sgd, flags.steps, [&] { return binary_cross_entropy_with_logits(linear(d.x), as_column(d.y)); }, &run, "XOR's logistic regression's loss");
  auto mlp = nn::mlp({2, 8, 1}, {.activation = nn::ActivationKind::tanh});  // one hidden layer (lesson 03)
  optim::Adam adam(mlp->named_parameters(), {.lr = 0.05f});
  parts.curves["XOR: one hidden layer"] =
      train(adam, flags.steps, [&] { return binary_cross_entropy_with_logits((*mlp)(d.x), as_column(d.y)); }, &run, "XOR's hidden layer's loss");
  NoGradGuard no_grad;
  parts.xor_linear_acc = accuracy(binary_decision(linear, d.x), d.y);
  parts.xor_mlp_acc = accuracy(binary_decision(*mlp, d.x), d.y);
  std::printf("  training accuracy: logistic regression %.3f, one hidden layer of 8 tanh units %.3f\n", parts.xor_linear_acc,
              parts.xor_mlp_acc);
  for (auto [name, model] : {std::pair<const char*, nn::Module*>{"xor_linear", &linear}, {"xor_mlp", mlp.get()}})
    run.wrote(plot::save_decision_regions(
        run.path(name), plot::decision_regions([&](const Tensor& x) { return binary_decision(*model, x); }, d.x, d.y,
                                                  {"class 0", "class 1"},
                                                  std::string(name) == "xor_linear" ? "XOR: logistic regression"
                                                                                     : "XOR: one hidden layer")));
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("02_regression",
                           "Lesson 02: perceptron, linear, logistic and softmax regression; XOR.\n"
                           "(Full-batch gradient descent: --batch does not apply; --lr is for SGD, the XOR network uses Adam at 0.05.)",
                           {.steps = 500, .lr = 0.5f});
    cli.parse(argc, argv);
    if (cli.common.quick) cli.common.steps = std::min<int64_t>(cli.common.steps, 150);
    harness::Run run(cli);
    Generator gen(cli.common.seed);
    Parts parts;

    perceptron(run, parts, gen);
    linear_regression(parts, cli.common, gen);
    logistic_regression(run, parts, cli.common, gen);
    softmax_regression(run, parts, cli.common, gen);
    xor_problem(run, parts, cli.common, gen);

    std::vector<std::string> columns = {"step"};
    std::vector<plot::Series> series;
    for (const auto& [name, curve] : parts.curves) {
      columns.push_back(name);
      plot::Series s{name};
      for (size_t i = 0; i < curve.size(); ++i) s.x.push_back(static_cast<double>(i + 1)), s.y.push_back(curve[i]);
      series.push_back(s);
    }
    harness::CsvWriter metrics(run.file("metrics.csv"), columns);
    for (int64_t step = 0; step < cli.common.steps; ++step) {
      std::vector<double> row = {static_cast<double>(step + 1)};
      for (const auto& [name, curve] : parts.curves) row.push_back(curve[static_cast<size_t>(step)]);
      metrics.row(row);
    }
    run.wrote(plot::save_line_chart(run.path("losses"), {"Training losses", "step", "loss (log scale)", series, true}));
    nlohmann::ordered_json summary = {{"test_acc", parts.softmax_acc},
                              {"logistic_test_acc", parts.logistic_acc},
                              {"perceptron_epochs", parts.perceptron_epochs},
                              {"normal_equations_vs_gd_max_gap", parts.weight_gap},
                              {"xor_linear_train_acc", parts.xor_linear_acc},
                              {"xor_mlp_train_acc", parts.xor_mlp_acc}};
    if (parts.linear_diverged_at > 0) summary["linear_regression_diverged_at_step"] = parts.linear_diverged_at;
    // Weights that diverged have no gap to the solution: said in words, since a finished run reports no NaN.
    if (!std::isfinite(parts.weight_gap)) summary["normal_equations_vs_gd_max_gap"] = "none: gradient descent diverged";
    run.finish(summary,
               {{"test_acc", "softmax regression, 3 clusters, 300 test points"},
                {"logistic_test_acc", "logistic regression, 2 overlapping clusters, 200 test points"},
                {"perceptron_epochs", "passes the perceptron needed, the clean one included"},
                {"normal_equations_vs_gd_max_gap", "linear regression: largest weight difference, solved vs learned"},
                {"linear_regression_diverged_at_step", "the first step whose MSE was not finite"},
                {"xor_linear_train_acc", "XOR, logistic regression (a line), 200 training points"},
                {"xor_mlp_train_acc", "XOR, one hidden layer of 8 tanh units, 200 training points"}},
               "docs/02_regression.md, section 2 (Linear regression, solved and learned); then exercise 1:\n"
               "      --lr 0.9, --lr 1.0 and --lr 1.2");
  });
}
