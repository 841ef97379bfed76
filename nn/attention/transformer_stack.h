// Stacks of Transformer layers, as torch.nn.TransformerEncoder and TransformerDecoder: num_layers
// layers of the same settings (each with its own weights) under `layers.0`, `layers.1`, ..., and an
// optional final LayerNorm `norm` (pre-LN stacks need it: their layers leave the output unnormalised).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.h"
#include "nn/attention/transformer_layer.h"
#include "nn/sequential.h"

namespace ladder::nn {

struct TransformerStackOptions {
  int64_t num_layers = 6;
  bool final_norm = false;
};

// What both stacks share: building the layers and the final norm.
template <class Layer>
class TransformerStack : public Module {
 public:
  std::vector<std::shared_ptr<Layer>> layers;
  std::shared_ptr<LayerNorm> norm;  // or null without final_norm

 protected:
  TransformerStack(const char* type_name, int64_t d_model, int64_t nhead, const TransformerLayerOptions& layer,
                   const TransformerStackOptions& stack, Generator& gen)
      : Module(type_name) {
    if (stack.num_layers <= 0) fail(type_name, "num_layers must be positive, got ", stack.num_layers);
    // A Sequential only as the container: it names the layers layers.0, layers.1, ... as PyTorch's ModuleList.
    auto list = register_module("layers", std::make_shared<Sequential>());
    for (int64_t i = 0; i < stack.num_layers; ++i) {
      TransformerLayerOptions options = layer;
      options.attention.layer = i;  // BigBird draws its random blocks per layer
      layers.push_back(std::make_shared<Layer>(d_model, nhead, options, gen));
      list->push_back(layers.back());
    }
    if (stack.final_norm) norm = register_module("norm", std::make_shared<LayerNorm>(Shape{d_model}, layer.layer_norm_eps));
  }
  Tensor final_norm(const Tensor& x) { return norm ? norm->forward(x) : x; }
};

class TransformerEncoder : public TransformerStack<TransformerEncoderLayer> {
 public:
  TransformerEncoder(int64_t d_model, int64_t nhead, TransformerLayerOptions layer, TransformerStackOptions stack,
                     Generator& gen = default_generator());
  Tensor forward(const Tensor& src, const EncoderMasks& masks);  // src (B,T,E) -> (B,T,E)
  Tensor forward(const Tensor& src) override { return forward(src, {}); }
};

class TransformerDecoder : public TransformerStack<TransformerDecoderLayer> {
 public:
  TransformerDecoder(int64_t d_model, int64_t nhead, TransformerLayerOptions layer, TransformerStackOptions stack,
                     Generator& gen = default_generator());
  // tgt (B,T,E), memory (B,S,E): the encoder's output, read by every layer -> (B,T,E)
  Tensor forward(const Tensor& tgt, const Tensor& memory, const DecoderMasks& masks = {});
};

}  // namespace ladder::nn
