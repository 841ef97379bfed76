#include "nn/attention/transformer_stack.h"

namespace ladder::nn {

TransformerEncoder::TransformerEncoder(int64_t d_model, int64_t nhead, TransformerLayerOptions layer,
                                       TransformerStackOptions stack, Generator& gen)
    : TransformerStack("TransformerEncoder", d_model, nhead, layer, stack, gen) {}

Tensor TransformerEncoder::forward(const Tensor& src, const EncoderMasks& masks) {
  Tensor x = src;
  for (const auto& layer : layers) x = layer->forward(x, masks);
  return final_norm(x);
}

TransformerDecoder::TransformerDecoder(int64_t d_model, int64_t nhead, TransformerLayerOptions layer,
                                       TransformerStackOptions stack, Generator& gen)
    : TransformerStack("TransformerDecoder", d_model, nhead, layer, stack, gen) {}

Tensor TransformerDecoder::forward(const Tensor& tgt, const Tensor& memory, const DecoderMasks& masks) {
  Tensor x = tgt;
  for (const auto& layer : layers) x = layer->forward(x, memory, masks);
  return final_norm(x);
}

}  // namespace ladder::nn
