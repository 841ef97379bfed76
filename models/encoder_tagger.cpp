#include "models/encoder_tagger.h"

#include "core/error.h"
#include "core/ops.h"

namespace ladder::models {

EncoderTagger::EncoderTagger(const EncoderClassifierConfig& config, Generator& gen) : nn::Module("EncoderTagger") {
  body = register_module("body", std::make_shared<EncoderClassifier>(config, gen));
}

Tensor EncoderTagger::forward(const Tensor& ids, const Tensor& valid, std::vector<Tensor>* maps) {
  if (ids.dim() != 2) fail("EncoderTagger", "ids must be (B,T) token ids, got ", shape_str(ids.shape()));
  if (valid.defined() && valid.shape() != ids.shape())
    fail("EncoderTagger", "valid must have the shape of ids ", shape_str(ids.shape()), ", got ", shape_str(valid.shape()));
  const nn::EncoderMasks masks{.src_key_padding_mask = valid, .causal = config().causal};
  Tensor x = body->positions->forward(body->token_embedding->forward(ids));  // (B,T,E)
  if (!maps) {
    x = body->encoder->forward(x, masks);
  } else {  // layer by layer, each handing back its weights
    for (const auto& layer : body->encoder->layers) {
      Tensor weights;  // (B,H,T,T)
      x = layer->forward(x, masks, &weights);
      maps->push_back(weights);
    }
    x = body->encoder->norm->forward(x);
  }
  return body->head->forward(x);  // (B,T,num_classes)
}

Tensor EncoderTagger::loss(const data::LabelledBatch& batch) {
  if (batch.labels.shape() != batch.inputs.shape())
    fail("EncoderTagger::loss", "labels must be (B,T), one per position as the inputs ", shape_str(batch.inputs.shape()),
         " (data::kNoAnswer where nothing is asked), got ", shape_str(batch.labels.shape()));
  return cross_entropy(forward(batch.inputs, batch.valid), batch.labels, {.ignore_index = data::kNoAnswer});
}

}  // namespace ladder::models
