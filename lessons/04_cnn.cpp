// Lesson 04: convolutional networks.
//
// Digits from a small bitmap font are drawn into 20x20 images. Training images put the digit
// near the top left; the shifted test images put it where no training image ever did. A small
// CNN and an MLP with about as many parameters learn from the same batches; the CNN's shared
// filters and pooling let it recognise the digits anywhere. The note: docs/04_cnn.md.
#include <cstdio>

#include "core/autograd.h"
#include "core/ops.h"
#include "data/glyphs.h"
#include "lessons/common/cli.h"
#include "lessons/common/plot.h"
#include "lessons/common/progress.h"
#include "lessons/common/run.h"
#include "models/cnn.h"
#include "nn/conv.h"
#include "nn/sequential.h"
#include "optim/adam.h"

using namespace ladder;

namespace {

constexpr int64_t kCanvas = 20;

// In eval mode: batch norm then uses its running statistics, not those of the test batch.
double accuracy(nn::Module& model, const data::Images& images) {
  NoGradGuard no_grad;
  model.eval();
  const Tensor predicted = argmax(model(images.x), 1);
  model.train();
  int64_t right = 0;
  for (int64_t i = 0; i < images.y.numel(); ++i) right += predicted.data()[i] == images.y.data()[i];
  return static_cast<double>(right) / static_cast<double>(images.y.numel());
}

// The rows x cols values of a (rows, cols) block of a tensor, starting at `offset`, for plotting.
std::vector<std::vector<double>> grid_of(const Tensor& t, int64_t offset, int64_t rows, int64_t cols) {
  std::vector<std::vector<double>> g(static_cast<size_t>(rows), std::vector<double>(static_cast<size_t>(cols)));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) g[static_cast<size_t>(i)][static_cast<size_t>(j)] = t.data()[offset + i * cols + j];
  return g;
}

// What the first layer learned, and what it sees in one shifted test image.
void plot_first_layer(lessons::Run& run, nn::Sequential& cnn, const data::Images& shifted) {
  const Tensor& weight = dynamic_cast<nn::Conv2d&>(cnn[0]).weight;  // (16, 1, 3, 3)
  std::vector<std::vector<std::vector<double>>> filters;
  for (int64_t f = 0; f < weight.size(0); ++f) filters.push_back(grid_of(weight, f * 9, 3, 3));
  lessons::Heatmap map{"First-layer filters (3x3, 16 of them)", "", "", "weight", lessons::tile(filters, 4, 0)};
  map.diverging = map.square_cells = true;
  run.wrote(lessons::save_heatmap(run.path("filters"), map));

  NoGradGuard no_grad;
  cnn.eval();
  const Tensor image = narrow(shifted.x, 0, 0, 1);  // (1, 1, 20, 20)
  const Tensor maps = cnn[2](cnn[1](cnn[0](image)));  // after the first convolution, batch norm and ReLU: (1, 16, 20, 20)
  cnn.train();
  lessons::Heatmap input{"A shifted test image: the digit " + std::to_string(static_cast<int>(shifted.y.data()[0])), "", "",
                         "intensity", grid_of(image, 0, kCanvas, kCanvas)};
  input.square_cells = true;
  run.wrote(lessons::save_heatmap(run.path("input"), input));
  std::vector<std::vector<std::vector<double>>> tiles;
  for (int64_t c = 0; c < maps.size(1); ++c) tiles.push_back(grid_of(maps, c * kCanvas * kCanvas, kCanvas, kCanvas));
  lessons::Heatmap features{"Its 16 feature maps after conv, batch norm and ReLU", "", "", "activation", lessons::tile(tiles, 4, 0)};
  features.square_cells = true;
  run.wrote(lessons::save_heatmap(run.path("feature_maps"), features));
}

}  // namespace

int main(int argc, char** argv) {
  return lessons::lesson_main([&] {
    lessons::LessonCli cli("04_cnn", "Lesson 04: a small CNN against an MLP on shifted digit images.",
                           {.steps = 1500, .lr = 3e-3f, .batch = 64});
    cli.parse(argc, argv);
    if (cli.common.quick) cli.common.steps = std::min<int64_t>(cli.common.steps, 200);
    lessons::Run run(cli);
    const lessons::CommonFlags& flags = cli.common;

    // ---- data: the same digits, near the top left for training, elsewhere for the shifted test ----
    Generator gen(flags.seed);
    const data::GlyphOptions seen{.canvas = kCanvas, .min_x = 0, .max_x = 4, .min_y = 0, .max_y = 3};
    const data::GlyphOptions shifted_region{.canvas = kCanvas, .min_x = 6, .max_x = 10, .min_y = 4, .max_y = 6};
    const data::Images train = data::glyph_images(flags.quick ? 1000 : 4000, seen, gen);
    const data::Images test_seen = data::glyph_images(1000, seen, gen);
    const data::Images test_shifted = data::glyph_images(1000, shifted_region, gen);
    std::printf("data: %lld training images (digit's top-left corner at x 0-4, y 0-3); test: 1000 at the same places,\n"
                "1000 shifted to x 6-10, y 4-6, where no training digit ever was\n\n",
                static_cast<long long>(train.y.numel()));

    // ---- models with about the same number of parameters ----
    Generator init(flags.seed + 1);
    const auto cnn = models::glyph_cnn(kCanvas, 10, init);
    const auto mlp = nn::mlp({kCanvas * kCanvas, 12, 10}, {}, init);
    std::printf("CNN\n%s\nMLP (on the 400 pixels, flattened)\n%s\n", cnn->shape_table({1, 1, kCanvas, kCanvas}).c_str(),
                mlp->shape_table({1, kCanvas * kCanvas}).c_str());

    // ---- training: both models see the same batches ----
    optim::Adam cnn_opt(cnn->named_parameters(), {.lr = flags.lr}), mlp_opt(mlp->named_parameters(), {.lr = flags.lr});
    lessons::CsvWriter metrics(run.file("metrics.csv"), {"step", "cnn_train_loss", "mlp_train_loss", "cnn_acc_seen",
                                                         "cnn_acc_shifted", "mlp_acc_seen", "mlp_acc_shifted", "images_per_s"});
    lessons::Progress progress(flags.steps, "img", /*show_ppl=*/false);
    std::vector<lessons::Series> curves = {{"CNN, shifted test"}, {"MLP, shifted test"}, {"CNN, seen positions"}, {"MLP, seen positions"}};
    Generator batches(flags.seed + 2);
    const int64_t eval_every = std::max<int64_t>(1, flags.steps / 30);
    for (int64_t step = 1; step <= flags.steps; ++step) {
      const Tensor rows = randint(0, train.y.numel(), {flags.batch}, batches);
      const Tensor x = index_select(train.x, 0, rows), y = index_select(train.y, 0, rows);
      const Tensor cnn_loss = cross_entropy((*cnn)(x), y);
      const Tensor mlp_loss = cross_entropy((*mlp)(flatten(x, 1)), y);
      cnn_opt.zero_grad();
      mlp_opt.zero_grad();
      cnn_loss.backward();
      mlp_loss.backward();
      cnn_opt.step();
      mlp_opt.step();
      run.check_loss(step, cnn_loss.item(), lessons::LossKind::cross_entropy, "the CNN's loss");
      run.check_loss(step, mlp_loss.item(), lessons::LossKind::cross_entropy, "the MLP's loss");
      progress.update(step, cnn_loss.item(), step * flags.batch);
      if (step % eval_every == 0 || step == flags.steps) {
        const double acc[4] = {accuracy(*cnn, test_shifted), accuracy(*mlp, {flatten(test_shifted.x, 1), test_shifted.y}),
                               accuracy(*cnn, test_seen), accuracy(*mlp, {flatten(test_seen.x, 1), test_seen.y})};
        for (int k = 0; k < 4; ++k) curves[static_cast<size_t>(k)].x.push_back(static_cast<double>(step)), curves[static_cast<size_t>(k)].y.push_back(acc[k]);
        metrics.row({static_cast<double>(step), cnn_loss.item(), mlp_loss.item(), acc[2], acc[0], acc[3], acc[1],
                     static_cast<double>(step * flags.batch) / run.seconds()});
      }
    }
    progress.finish();
    const double cnn_seen = curves[2].y.back(), cnn_shifted = curves[0].y.back();
    const double mlp_seen = curves[3].y.back(), mlp_shifted = curves[1].y.back();
    std::printf("\ntest accuracy          seen positions   shifted positions\n");
    std::printf("  CNN (%5lld params)        %.3f             %.3f\n", static_cast<long long>(cnn->num_parameters()), cnn_seen, cnn_shifted);
    std::printf("  MLP (%5lld params)        %.3f             %.3f\n", static_cast<long long>(mlp->num_parameters()), mlp_seen, mlp_shifted);

    run.wrote(lessons::save_line_chart(run.path("accuracy"), {"Test accuracy while training", "step", "accuracy", curves}));
    plot_first_layer(run, *cnn, test_shifted);
    run.save_checkpoint(*cnn, {{"canvas", std::to_string(kCanvas)}});
    run.finish({{"test_acc", cnn_shifted}, {"cnn_test_acc_seen", cnn_seen}, {"mlp_test_acc_shifted", mlp_shifted},
                {"mlp_test_acc_seen", mlp_seen}, {"cnn_parameters", cnn->num_parameters()},
                {"mlp_parameters", mlp->num_parameters()}},
               {{"test_acc", "the CNN on 1000 shifted test images, digits where no training image had one"},
                {"cnn_test_acc_seen", "the CNN on 1000 test images at the training positions"},
                {"mlp_test_acc_shifted", "the MLP on the same shifted images"},
                {"mlp_test_acc_seen", "the MLP at the training positions"}},
               "docs/04_cnn.md, section 4 (Equivariance, pooling and invariance); then exercise 1: give the CNN\n"
               "      LeNet's flattened head and predict its shifted accuracy before you run it");
  });
}
