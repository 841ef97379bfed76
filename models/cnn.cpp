#include "models/cnn.h"

#include "core/error.h"
#include "nn/activation.h"
#include "nn/conv.h"
#include "nn/linear.h"
#include "nn/norm.h"

namespace ladder::models {

std::shared_ptr<nn::Sequential> glyph_cnn(int64_t canvas, int64_t classes, Generator& gen) {
  if (canvas % 4 != 0 || canvas < 8) fail("glyph_cnn", "the canvas must be a multiple of 4, at least 8, got ", canvas);
  auto net = std::make_shared<nn::Sequential>();
  net->push_back(std::make_shared<nn::Conv2d>(1, 16, 3, Conv2dOptions{.padding = 1}, /*bias=*/false, gen));
  net->push_back(std::make_shared<nn::BatchNorm2d>(16));
  net->push_back(std::make_shared<nn::ReLU>());
  net->push_back(std::make_shared<nn::MaxPool2d>(2));
  net->push_back(std::make_shared<nn::Conv2d>(16, 32, 3, Conv2dOptions{.padding = 1}, /*bias=*/false, gen));
  net->push_back(std::make_shared<nn::BatchNorm2d>(32));
  net->push_back(std::make_shared<nn::ReLU>());
  net->push_back(std::make_shared<nn::MaxPool2d>(2));
  net->push_back(std::make_shared<nn::MaxPool2d>(canvas / 4));  // global: one value per channel
  net->push_back(std::make_shared<nn::Flatten>());
  net->push_back(std::make_shared<nn::Linear>(32, classes, nn::LinearOptions{}, gen));
  return net;
}

}  // namespace ladder::models
