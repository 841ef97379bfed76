// Checkpoints: a module's parameters and buffers (and an optimizer's state) in safetensors files.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "io/safetensors.h"
#include "nn/module.h"
#include "optim/optimizer.h"

namespace ladder::io {

// The first value of `tensors` that is NaN or infinite, and the tensor's name; none when all are finite.
struct NonFinite {
  std::string tensor;
  float value;
};
std::optional<NonFinite> first_non_finite(const std::map<std::string, Tensor>& tensors);

// load_safetensors, refusing a tensor that holds NaN or infinity (weights that diverged are of no
// use, and a sampler would only draw its last token from them), naming the tensor.
TensorFile load_checkpoint(const std::string& path, Checksum checksum = Checksum::required);

void save_module(const std::string& path, const nn::Module& module,
                 const std::map<std::string, std::string>& metadata = {});
// Strict: every parameter and buffer must be in the file with its shape, finite, and nothing else.
// Returns the file's metadata. Use Checksum::if_present for a file written by another tool.
std::map<std::string, std::string> load_module(const std::string& path, nn::Module& module,
                                               Checksum checksum = Checksum::required);

}  // namespace ladder::io
