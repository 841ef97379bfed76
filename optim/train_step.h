// One training step, the same for every model of every lesson: zero the gradients, the model's loss
// on one batch, backward, clip the gradient's norm, the optimiser's step. A model answers
// loss(batch) (its forward and its loss function together, as makemore's forward(idx, targets)),
// and what its layers need besides is reached through nn::Module here, so that no lesson can forget
// it: the losses they add (Transformer-VQ's commitment loss) and the updates they make outside the
// optimiser (its codebook's moving average). A loop that trains on several processes passes what
// must happen to the gradient between backward and the clip: averaging it across them (lesson 16).
#pragma once

#include <cmath>
#include <concepts>
#include <functional>

#include "core/tensor.h"
#include "nn/module.h"
#include "optim/optimizer.h"

namespace ladder::optim {

// A model that trains on batches of type Batch: a Module whose loss(batch) is a 0-d tensor.
template <class Model, class Batch>
concept Trainable = std::derived_from<Model, nn::Module> && requires(Model& model, const Batch& batch) {
  { model.loss(batch) } -> std::convertible_to<Tensor>;
};

struct StepResult {
  double loss = 0;      // the model's loss on the batch, before the step (its layers' additions left out)
  float grad_norm = 0;  // the norm of the whole gradient, before clipping
};

// clip > 0 scales the gradient down to that norm when it is longer; clip = 0 leaves it as it is.
// after_backward, when given, runs once the gradient is complete and before it is clipped: data
// parallelism's all-reduce (dist/data_parallel.h), so that every process clips and steps the same one.
template <class Model, class Batch>
  requires Trainable<Model, Batch>
StepResult train_step(Model& model, Optimizer& optimizer, const Batch& batch, float clip,
                      const std::function<void()>& after_backward = {}) {
  optimizer.zero_grad();
  const Tensor loss = model.loss(batch);
  nn::with_auxiliary_loss(model, loss).backward();  // + what the layers add (vq: the commitment loss)
  if (after_backward) after_backward();
  const float norm = clip_grad_norm(model.parameters(), clip > 0 ? clip : INFINITY);
  optimizer.step();
  model.after_optimizer_step();  // the updates outside the optimiser (vq: the codebook's EMA step)
  return {loss.item(), norm};
}

}  // namespace ladder::optim
