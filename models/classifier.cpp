#include "models/classifier.h"

#include "core/ops.h"

namespace ladder::models {

Classifier::Classifier(std::shared_ptr<nn::Module> network) : Module("Classifier") {
  net = register_module("net", std::move(network));
}

Tensor Classifier::forward(const Tensor& inputs) { return net->forward(inputs); }

Tensor Classifier::loss(const data::LabelledBatch& batch) { return cross_entropy(forward(batch.inputs), batch.labels); }

}  // namespace ladder::models
