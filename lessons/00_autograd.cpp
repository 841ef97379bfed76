// Lesson 00: tensors and autograd from the inside.
//
// Part 1 builds a tiny expression graph (one neuron and its squared error), runs backward()
// and puts every gradient next to its finite-difference estimate and the chain rule by hand.
// Part 2 trains a 2-layer MLP to fit y = sin(x) with Adam, then saves, reloads and checks it.
// The note that goes with it: docs/00_autograd.md.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numbers>

#include "core/autograd.h"
#include "core/error.h"
#include "core/graphviz.h"
#include "core/ops.h"
#include "io/checkpoint.h"
#include "harness/cli.h"
#include "plot/plot.h"
#include "harness/progress.h"
#include "harness/run.h"
#include "nn/sequential.h"
#include "optim/adam.h"
#include "optim/schedule.h"

using namespace ladder;

namespace {

Tensor leaf(float value) {
  Tensor t = scalar(value);
  return t.requires_grad_();
}

// ---- part 1: one neuron, by hand and by autograd ----
void expression_graph(harness::Run& run) {
  std::printf("== part 1: the graph of one neuron ==\n");
  Tensor x1 = leaf(2), x2 = leaf(-1), w1 = leaf(-0.5f), w2 = leaf(-1.5f), b = leaf(0.25f);
  const Tensor n = x1 * w1 + x2 * w2 + b;  // the neuron's input
  const Tensor o = tanh(n);                 // its output
  const Tensor L = pow(o - 1.0f, 2);        // squared error against the target 1
  std::printf("forward:  n = x1*w1 + x2*w2 + b = %.4f   o = tanh(n) = %.4f   L = (o - 1)^2 = %.6f\n", n.item(),
              o.item(), L.item());
  L.backward(Tensor(), /*retain_graph=*/true);  // kept, so that the graph can be drawn with its gradients

  // The chain rule by hand: dL/do = 2(o - 1), do/dn = 1 - o^2, dn/dw1 = x1, ...
  const float dL_do = 2 * (o.item() - 1), dL_dn = dL_do * (1 - o.item() * o.item());
  const std::vector<std::tuple<const char*, Tensor, float>> leaves = {
      {"x1", x1, dL_dn * w1.item()}, {"x2", x2, dL_dn * w2.item()}, {"w1", w1, dL_dn * x1.item()},
      {"w2", w2, dL_dn * x2.item()}, {"b", b, dL_dn}};
  // Finite differences: nudge one leaf by +-h and watch L move: dL/dv ~ (L(v+h) - L(v-h)) / 2h.
  auto loss_now = [&] {
    NoGradGuard no_grad;
    return pow(tanh(x1 * w1 + x2 * w2 + b) - 1.0f, 2).item();
  };
  constexpr float h = 1e-3f;
  std::printf("\n%-4s %9s %14s %16s %16s\n", "leaf", "value", "backward()", "finite diff.", "chain rule");
  double worst = 0;
  for (const auto& [name, t, by_hand] : leaves) {
    float& v = t.data()[0];
    const float saved = v;
    v = saved + h;
    const double up = loss_now();
    v = saved - h;
    const double down = loss_now();
    v = saved;
    const double numeric = (up - down) / (2 * h);
    worst = std::max(worst, std::fabs(numeric - t.grad().item()));
    std::printf("%-4s %9.4f %14.6f %16.6f %16.6f\n", name, t.item(), t.grad().item(), numeric, by_hand);
  }
  std::printf("largest difference between backward() and finite differences: %.1e\n", worst);
  if (worst > 1e-3) fail("00_autograd", "backward() and finite differences disagree by ", worst);

  const std::string dot_path = run.file("graph.dot");
  std::ofstream(dot_path) << graph_to_dot(L, {{"x1", x1}, {"x2", x2}, {"w1", w1}, {"w2", w2}, {"b", b}, {"n", n}, {"o", o}, {"L", L}});
  const std::string png_path = run.file("graph.png");
  const std::string render = "command -v dot >/dev/null 2>&1 && dot -Tpng '" + dot_path + "' -o '" + png_path + "'";
  if (std::system(render.c_str()) != 0) {
    std::printf("(install graphviz to render %s as a picture)\n", dot_path.c_str());
    std::remove(png_path.c_str());
  }
}

// ---- part 2: an MLP fits sin(x) ----
struct FitResult {
  double train_loss, val_loss;
};

FitResult fit_sine(harness::Run& run, const harness::CommonFlags& flags, int64_t hidden) {
  std::printf("\n== part 2: a 2-layer MLP fits y = sin(x) on [-pi, pi] ==\n");
  const float pi = std::numbers::pi_v<float>;
  const Tensor x_train = uniform({256, 1}, -pi, pi), y_train = sin(x_train);
  const Tensor x_val = reshape(arange(-pi, pi, 2 * pi / 200), {-1, 1}), y_val = sin(x_val);

  auto model = nn::mlp({1, hidden, 1}, {.activation = nn::ActivationKind::tanh});
  std::printf("%s", model->summary().c_str());
  optim::Adam optimizer(model->named_parameters(), {.lr = flags.lr});
  const optim::Schedule schedule = optim::cosine_lr(flags.lr, flags.steps / 20, flags.steps, flags.lr / 100);

  harness::CsvWriter metrics(run.file("metrics.csv"), {"step", "train_loss", "val_loss", "lr", "examples_per_s"});
  harness::Progress progress(flags.steps, "ex", /*show_ppl=*/false);
  plot::Series train_curve{"train MSE"}, val_curve{"validation MSE"};
  Generator batches(flags.seed + 1);
  double train_loss = 0, val_loss = 0;
  for (int64_t step = 1; step <= flags.steps; ++step) {
    const Tensor rows = randint(0, 256, {flags.batch}, batches);
    const Tensor loss = mse_loss((*model)(index_select(x_train, 0, rows)), index_select(y_train, 0, rows));
    optimizer.zero_grad();
    loss.backward();
    optimizer.set_lr(schedule(step - 1));
    optimizer.step();
    train_loss = loss.item();
    run.check_loss(step, train_loss);
    progress.update(step, train_loss, step * flags.batch);
    if (step % 20 == 0 || step == flags.steps) {
      NoGradGuard no_grad;
      val_loss = mse_loss((*model)(x_val), y_val).item();
      const double seconds = run.seconds();
      metrics.row({static_cast<double>(step), train_loss, val_loss, optimizer.lr(),
                   static_cast<double>(step * flags.batch) / seconds});
      train_curve.x.push_back(static_cast<double>(step));
      train_curve.y.push_back(train_loss);
      val_curve.x.push_back(static_cast<double>(step));
      val_curve.y.push_back(val_loss);
    }
  }
  progress.finish();
  std::printf("validation MSE %.2e (target: below 1e-3) %s\n", val_loss, val_loss < 1e-3 ? "reached" : "not reached");

  run.wrote(plot::save_line_chart(run.path("loss"), {"Fitting sin(x): mean squared error", "step", "MSE (log scale)",
                                                         {train_curve, val_curve}, /*log_y=*/true}));
  Tensor prediction;
  {
    NoGradGuard no_grad;
    prediction = (*model)(x_val);
  }
  const std::vector<float> xs = x_val.to_vector(), truth = y_val.to_vector(), fit = prediction.to_vector();
  run.wrote(plot::save_line_chart(run.path("fit"), {"The MLP against sin(x)", "x", "y",
                                                        {{"sin(x)", {xs.begin(), xs.end()}, {truth.begin(), truth.end()}},
                                                         {"MLP", {xs.begin(), xs.end()}, {fit.begin(), fit.end()}}}}));

  // Save, load into a fresh model, and check that it predicts exactly the same.
  const std::string checkpoint = run.save_checkpoint(*model, {{"hidden", std::to_string(hidden)}});
  auto reloaded = nn::mlp({1, hidden, 1}, {.activation = nn::ActivationKind::tanh});
  io::load_module(checkpoint, *reloaded);
  NoGradGuard no_grad;
  if ((*reloaded)(x_val).to_vector() != fit) fail("00_autograd", "the reloaded model predicts differently");
  std::printf("checkpoint %s reloaded: predictions identical\n", checkpoint.c_str());
  return {train_loss, val_loss};
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("00_autograd", "Lesson 00: tensors and autograd from the inside; an MLP fits sin(x).",
                           {.steps = 3000, .lr = 0.01f, .batch = 64});
    int64_t hidden = 32;
    cli.option("--hidden", hidden, "hidden units of the MLP", {1, 1 << 16});
    cli.parse(argc, argv);
    if (cli.common.quick) cli.common.steps = std::min<int64_t>(cli.common.steps, 300);
    harness::Run run(cli);

    expression_graph(run);
    const FitResult fit = fit_sine(run, cli.common, hidden);
    run.finish({{"train_loss", fit.train_loss}, {"val_loss", fit.val_loss}, {"reached_target_mse_1e-3", fit.val_loss < 1e-3}},
               {{"train_loss", "MSE of the MLP on the last training batch"},
                {"val_loss", "MSE of the MLP on 200 evenly spaced x in [-pi, pi]"},
                {"reached_target_mse_1e-3", "is val_loss below 1e-3?"}},
               "docs/00_autograd.md, section 6 (Part 2: an MLP fits sin(x)); then exercise 5: run with --lr 0.1 and with\n"
               "      --lr 0.0001 and read loss.png for each");
  });
}
