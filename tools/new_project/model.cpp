// @NAME@: a model of your own on ladder. A two-layer MLP learns to tell three spiral arms apart,
// and its run folder (runs/@NAME@/) keeps what it did: summary.json, metrics.csv, the loss curve
// (loss.png) and the regions it draws (regions.png). ./ladder new wrote this file and CMakeLists.txt;
// ladder's docs/your_own_model.md says what each part is called in PyTorch.
//
//   cmake -B build && cmake --build build   # build it against ladder's libraries
//   ./build/@NAME@                          # train; --help lists the flags
//   ctest --test-dir build                  # its test: trains, and passes at 90% test accuracy
#include <cstdio>

#include "core/autograd.h"
#include "core/ops.h"
#include "data/batcher.h"
#include "data/toy2d.h"
#include "harness/cli.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "nn/linear.h"
#include "optim/adam.h"
#include "optim/train_step.h"
#include "plot/plot.h"
#include "plot/regions.h"

using namespace ladder;

namespace {

// As a torch.nn.Module does, the model registers its layers: parameters(), state_dict() and
// summary() then find them under the names given ("layer1.weight", ...).
class TwoLayerMLP : public nn::Module {
 public:
  TwoLayerMLP(int64_t hidden, int64_t classes, Generator& gen)
      : Module("TwoLayerMLP"),
        layer1(register_module("layer1", std::make_shared<nn::Linear>(2, hidden, nn::LinearOptions{}, gen))),
        layer2(register_module("layer2", std::make_shared<nn::Linear>(hidden, classes, nn::LinearOptions{}, gen))) {}

  // points (N, 2) -> a score per class (N, classes)
  Tensor forward(const Tensor& points) override { return (*layer2)(relu((*layer1)(points))); }
  // What optim::train_step makes smaller: the cross entropy of the scores against the labels.
  Tensor loss(const data::LabelledBatch& batch) { return cross_entropy(forward(batch.inputs), batch.labels); }

  std::shared_ptr<nn::Linear> layer1, layer2;
};

// The share of points whose highest score is their own class's.
double accuracy(TwoLayerMLP& model, const data::LabelledBatch& set) {
  NoGradGuard no_grad;  // as torch.no_grad(): nothing is recorded for a backward
  const Tensor predicted = argmax(model(set.inputs), 1);
  int64_t right = 0;
  for (int64_t i = 0; i < set.labels.numel(); ++i) right += predicted.data()[i] == set.labels.data()[i];
  return static_cast<double>(right) / static_cast<double>(set.labels.numel());
}

}  // namespace

int main(int argc, char** argv) {
  // lesson_main turns an error into one line on stderr and exit status 2.
  return harness::lesson_main([&] {
    harness::LessonCli cli("@NAME@", "A two-layer MLP learns to tell three spiral arms apart.",
                           {.steps = 2000, .lr = 0.02f, .batch = 64});
    int64_t hidden = 64;
    double expect_accuracy = 0;
    cli.option("--hidden", hidden, "hidden units", harness::positive);
    cli.option("--expect-accuracy", expect_accuracy, "fail unless the test accuracy reaches this (the project's test)", {0, 1});
    cli.parse(argc, argv);

    Generator gen(cli.common.seed);
    const data::Points train_points = data::spirals(100, 3, 0.15f, gen), test_points = data::spirals(100, 3, 0.15f, gen);
    const data::LabelledBatch train{train_points.x, train_points.y}, test{test_points.x, test_points.y};
    TwoLayerMLP model(hidden, 3, gen);
    std::printf("%s", model.summary().c_str());
    optim::Adam adam(model.named_parameters(), {.lr = cli.common.lr});

    harness::Run run(cli);  // the run folder: runs/@NAME@/, or --out
    harness::Tracker tracker(run, {.steps = cli.common.steps, .eval_every = 100, .figures = {"test_acc"},
                                   .unit = "ex", .items_per_step = cli.common.batch, .loss_kind = harness::LossKind::plain});
    // From step 1, or with --resume from the step after the run's last checkpoint.
    for (int64_t step = tracker.resume({model, adam, {&gen}}); step <= cli.common.steps; ++step) {
      const data::LabelledBatch batch = data::sample_examples(train, cli.common.batch, gen);
      tracker.step(step, optim::train_step(model, adam, batch, /*clip=*/0), adam.lr());
      if (tracker.evaluation_due(step)) tracker.evaluated(step, {accuracy(model, test)});
    }
    tracker.finish();

    run.wrote(plot::save_line_chart(run.path("loss"), {"@NAME@: training loss", "step", "cross entropy",
                                                        {tracker.curve("train_loss")}, /*log_y=*/true}));
    const auto classify = [&](const Tensor& points) { return argmax(model(points), 1); };
    run.wrote(plot::save_decision_regions(run.path("regions"), plot::decision_regions(classify, test.inputs, test.labels,
                                                                                      {"arm 0", "arm 1", "arm 2"}, "@NAME@ (test points)")));
    run.save_checkpoint(model);  // model.safetensors: its state_dict()

    const double test_acc = tracker.last("test_acc");
    if (test_acc < expect_accuracy) fail("@NAME@", "test accuracy ", test_acc, " is below --expect-accuracy ", expect_accuracy);
    run.finish({{"train_loss", tracker.train_loss()}, {"test_acc", test_acc}},
               {{"train_loss", "mean cross entropy of the steps since the evaluation before"}, {"test_acc", "on 300 test points"}},
               "change the model, its --hidden or the task (ladder's data/toy2d.h), and train it again");
  });
}
