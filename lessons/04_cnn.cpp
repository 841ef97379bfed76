// Lesson 04: convolutional networks.
//
// Digits from a small bitmap font are drawn into 20x20 images. Training images put the digit
// near the top left; the shifted test images put it where no training image ever did. A small
// CNN and an MLP with about as many parameters learn from the same batches; the CNN's shared
// filters and pooling let it recognise the digits anywhere. The note: docs/04_cnn.md.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/autograd.h"
#include "core/ops.h"
#include "data/glyphs.h"
#include "harness/cli.h"
#include "lessons/memory/model_memory.h"
#include "plot/plot.h"
#include "harness/run.h"
#include "harness/tracker.h"
#include "models/classifier.h"
#include "models/cnn.h"
#include "nn/conv.h"
#include "nn/sequential.h"
#include "optim/adam.h"
#include "optim/train_step.h"

using namespace ladder;

namespace {

constexpr int64_t kCanvas = 20;

// In eval mode: batch norm then uses its running statistics, not those of the test batch. NaN when
// a score is not finite: weights that diverged predict nothing, and the tracker stops the run.
double accuracy(nn::Module& model, const data::LabelledBatch& images) {
  NoGradGuard no_grad;
  model.eval();
  const Tensor scores = model(images.inputs);  // (N, 10)
  model.train();
  if (!std::all_of(scores.data(), scores.data() + scores.numel(), [](float s) { return std::isfinite(s); })) return NAN;
  const Tensor predicted = argmax(scores, 1);
  int64_t right = 0;
  for (int64_t i = 0; i < images.labels.numel(); ++i) right += predicted.data()[i] == images.labels.data()[i];
  return static_cast<double>(right) / static_cast<double>(images.labels.numel());
}

// The same images for the MLP, which reads them as rows of 400 pixels: (N,1,20,20) -> (N,400).
data::LabelledBatch flattened(const data::LabelledBatch& images) { return {flatten(images.inputs, 1), images.labels}; }

// The rows x cols values of a (rows, cols) block of a tensor, starting at `offset`, for plotting.
std::vector<std::vector<double>> grid_of(const Tensor& t, int64_t offset, int64_t rows, int64_t cols) {
  std::vector<std::vector<double>> g(static_cast<size_t>(rows), std::vector<double>(static_cast<size_t>(cols)));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) g[static_cast<size_t>(i)][static_cast<size_t>(j)] = t.data()[offset + i * cols + j];
  return g;
}

// What the first layer learned, and what it sees in one shifted test image.
void plot_first_layer(harness::Run& run, nn::Sequential& cnn, const data::LabelledBatch& shifted) {
  const Tensor& weight = dynamic_cast<nn::Conv2d&>(cnn[0]).weight;  // (16, 1, 3, 3)
  std::vector<std::vector<std::vector<double>>> filters;
  for (int64_t f = 0; f < weight.size(0); ++f) filters.push_back(grid_of(weight, f * 9, 3, 3));
  plot::Heatmap map{"First-layer filters (3x3, 16 of them)", "", "", "weight", plot::tile(filters, 4)};
  map.diverging = map.square_cells = true;
  run.wrote(plot::save_heatmap(run.path("filters"), map));

  NoGradGuard no_grad;
  cnn.eval();
  const Tensor image = narrow(shifted.inputs, 0, 0, 1);  // (1, 1, 20, 20)
  const Tensor maps = cnn[2](cnn[1](cnn[0](image)));  // after the first convolution, batch norm and ReLU: (1, 16, 20, 20)
  cnn.train();
  plot::Heatmap input{"A shifted test image: the digit " + std::to_string(static_cast<int>(shifted.labels.data()[0])), "", "",
                         "intensity", grid_of(image, 0, kCanvas, kCanvas)};
  input.square_cells = true;
  run.wrote(plot::save_heatmap(run.path("input"), input));
  std::vector<std::vector<std::vector<double>>> tiles;
  for (int64_t c = 0; c < maps.size(1); ++c) tiles.push_back(grid_of(maps, c * kCanvas * kCanvas, kCanvas, kCanvas));
  plot::Heatmap features{"Its 16 feature maps after conv, batch norm and ReLU", "", "", "activation", plot::tile(tiles, 4)};
  features.square_cells = true;
  run.wrote(plot::save_heatmap(run.path("feature_maps"), features));
}

}  // namespace

int main(int argc, char** argv) {
  return harness::lesson_main([&] {
    harness::LessonCli cli("04_cnn", "Lesson 04: a small CNN against an MLP on shifted digit images.",
                           {.steps = 1500, .lr = 3e-3f, .batch = 64});
    cli.parse(argc, argv);
    if (cli.common.quick) cli.common.steps = std::min<int64_t>(cli.common.steps, 200);
    harness::check_memory("04_cnn", lessons::glyph_cnn_memory(cli.common.batch, kCanvas));
    harness::Run run(cli);
    const harness::CommonFlags& flags = cli.common;

    // ---- data: the same digits, near the top left for training, elsewhere for the shifted test ----
    Generator gen(flags.seed);
    const data::GlyphOptions seen{.canvas = kCanvas, .min_x = 0, .max_x = 4, .min_y = 0, .max_y = 3};
    const data::GlyphOptions shifted_region{.canvas = kCanvas, .min_x = 6, .max_x = 10, .min_y = 4, .max_y = 6};
    const data::Images train_images = data::glyph_images(flags.quick ? 1000 : 4000, seen, gen);
    const data::Images seen_images = data::glyph_images(1000, seen, gen);
    const data::Images shifted_images = data::glyph_images(1000, shifted_region, gen);
    const data::LabelledBatch train{train_images.x, train_images.y}, test_seen{seen_images.x, seen_images.y},
        test_shifted{shifted_images.x, shifted_images.y};
    std::printf("data: %lld training images (digit's top-left corner at x 0-4, y 0-3); test: 1000 at the same places,\n"
                "1000 shifted to x 6-10, y 4-6, where no training digit ever was\n\n",
                static_cast<long long>(train.labels.numel()));

    // ---- models with about the same number of parameters ----
    Generator init(flags.seed + 1);
    const auto cnn_layers = models::glyph_cnn(kCanvas, 10, init), mlp_layers = nn::mlp({kCanvas * kCanvas, 12, 10}, {}, init);
    models::Classifier cnn(cnn_layers), mlp(mlp_layers);
    std::printf("CNN\n%s\nMLP (on the 400 pixels, flattened)\n%s\n", cnn_layers->shape_table({1, 1, kCanvas, kCanvas}).c_str(),
                mlp_layers->shape_table({1, kCanvas * kCanvas}).c_str());

    // ---- training: both models take a step on the same batch ----
    optim::Adam cnn_opt(cnn.named_parameters(), {.lr = flags.lr}), mlp_opt(mlp.named_parameters(), {.lr = flags.lr});
    const int64_t eval_every = std::max<int64_t>(1, flags.steps / 30);
    const std::vector<std::string> figures = {"test_acc_seen", "test_acc_shifted"};
    harness::Tracker cnn_tracker(run, {.steps = flags.steps, .eval_every = eval_every, .figures = figures, .unit = "img",
                                       .items_per_step = flags.batch, .loss_kind = harness::LossKind::plain, .name = "CNN"});
    harness::Tracker mlp_tracker(run, {.steps = flags.steps, .eval_every = eval_every, .figures = figures,
                                       .csv = "metrics_mlp.csv", .unit = "img", .items_per_step = flags.batch,
                                       .loss_kind = harness::LossKind::plain, .name = "MLP", .progress = false});
    Generator batches(flags.seed + 2);
    // 1, or after --resume's checkpoints: the two loops keep theirs at the same evaluations
    const int64_t first = std::min(cnn_tracker.resume({cnn, cnn_opt, {&batches}}), mlp_tracker.resume({mlp, mlp_opt, {&batches}}));
    for (int64_t step = first; step <= flags.steps; ++step) {
      const data::LabelledBatch batch = data::sample_examples(train, flags.batch, batches);
      cnn_tracker.step(step, optim::train_step(cnn, cnn_opt, batch, 0), cnn_opt.lr());
      mlp_tracker.step(step, optim::train_step(mlp, mlp_opt, flattened(batch), 0), mlp_opt.lr());
      if (!cnn_tracker.evaluation_due(step)) continue;
      cnn_tracker.evaluated(step, {accuracy(cnn, test_seen), accuracy(cnn, test_shifted)});
      mlp_tracker.evaluated(step, {accuracy(mlp, flattened(test_seen)), accuracy(mlp, flattened(test_shifted))});
    }
    cnn_tracker.finish();
    const double cnn_seen = cnn_tracker.last("test_acc_seen"), cnn_shifted = cnn_tracker.last("test_acc_shifted");
    const double mlp_seen = mlp_tracker.last("test_acc_seen"), mlp_shifted = mlp_tracker.last("test_acc_shifted");
    std::printf("\ntest accuracy          seen positions   shifted positions\n");
    std::printf("  CNN (%5lld params)        %.3f             %.3f\n", static_cast<long long>(cnn.num_parameters()), cnn_seen, cnn_shifted);
    std::printf("  MLP (%5lld params)        %.3f             %.3f\n", static_cast<long long>(mlp.num_parameters()), mlp_seen, mlp_shifted);

    std::vector<plot::Series> curves = {cnn_tracker.curve("test_acc_shifted"), mlp_tracker.curve("test_acc_shifted"),
                                           cnn_tracker.curve("test_acc_seen"), mlp_tracker.curve("test_acc_seen")};
    const char* names[] = {"CNN, shifted test", "MLP, shifted test", "CNN, seen positions", "MLP, seen positions"};
    for (size_t k = 0; k < curves.size(); ++k) curves[k].name = names[k];
    run.wrote(plot::save_line_chart(run.path("accuracy"), {"Test accuracy while training", "step", "accuracy", curves}));
    plot_first_layer(run, *cnn_layers, test_shifted);
    run.save_checkpoint(*cnn_layers, {{"canvas", std::to_string(kCanvas)}});  // glyph_cnn's names: 0.weight, ...
    run.finish({{"test_acc", cnn_shifted}, {"cnn_test_acc_seen", cnn_seen}, {"mlp_test_acc_shifted", mlp_shifted},
                {"mlp_test_acc_seen", mlp_seen}, {"cnn_parameters", cnn.num_parameters()},
                {"mlp_parameters", mlp.num_parameters()}},
               {{"test_acc", "the CNN on 1000 shifted test images, digits where no training image had one"},
                {"cnn_test_acc_seen", "the CNN on 1000 test images at the training positions"},
                {"mlp_test_acc_shifted", "the MLP on the same shifted images"},
                {"mlp_test_acc_seen", "the MLP at the training positions"}},
               "docs/04_cnn.md, section 4 (Equivariance, pooling and invariance); then exercise 1: give the CNN\n"
               "      LeNet's flattened head and predict its shifted accuracy before you run it");
  });
}
