#include "io/checkpoint.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "io/safetensors.h"

namespace ladder::io {

namespace {

// Runs a load step and puts the file's name in front of any error it reports.
template <class Step>
void naming_file(const std::string& path, Step step) {
  try {
    step();
  } catch (const Error& e) {
    throw Error(cat(e.what(), " (file ", path, ")"));
  }
}

}  // namespace

std::optional<NonFinite> first_non_finite(const std::map<std::string, Tensor>& tensors) {
  for (const auto& [name, tensor] : tensors) {
    const float* values = tensor.data();
    const float* bad = std::find_if(values, values + tensor.numel(), [](float v) { return !std::isfinite(v); });
    if (bad != values + tensor.numel()) return NonFinite{name, *bad};
  }
  return std::nullopt;
}

TensorFile load_checkpoint(const std::string& path, Checksum checksum) {
  TensorFile file = load_safetensors(path, checksum);
  if (const auto bad = first_non_finite(file.tensors))
    fail("load_checkpoint", path, ": tensor '", bad->tensor, "' holds ", std::isnan(bad->value) ? "nan" : cat(bad->value),
         ": the run that saved it had diverged; train again with a smaller --lr");
  return file;
}

void save_module(const std::string& path, const nn::Module& module, const std::map<std::string, std::string>& metadata) {
  save_safetensors(path, module.state_dict(), metadata);
}

std::map<std::string, std::string> load_module(const std::string& path, nn::Module& module, Checksum checksum) {
  const TensorFile file = load_checkpoint(path, checksum);
  naming_file(path, [&] { module.load_state_dict(file.tensors); });
  return file.metadata;
}

}  // namespace ladder::io
