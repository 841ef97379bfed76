#include "io/checkpoint.h"

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

void save_module(const std::string& path, const nn::Module& module, const std::map<std::string, std::string>& metadata) {
  save_safetensors(path, module.state_dict(), metadata);
}

std::map<std::string, std::string> load_module(const std::string& path, nn::Module& module, Checksum checksum) {
  const TensorFile file = load_safetensors(path, checksum);
  naming_file(path, [&] { module.load_state_dict(file.tensors); });
  return file.metadata;
}

void save_optimizer(const std::string& path, const optim::Optimizer& optimizer) {
  save_safetensors(path, optimizer.state_dict());
}

void load_optimizer(const std::string& path, optim::Optimizer& optimizer) {
  const TensorFile file = load_safetensors(path);
  naming_file(path, [&] { optimizer.load_state_dict(file.tensors); });
}

}  // namespace ladder::io
