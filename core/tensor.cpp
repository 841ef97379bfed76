#include "core/tensor.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"

namespace ladder {

// ---- the handle ----

void Tensor::undefined_error(const char* op) {
  fail(op, "the tensor is undefined (a default-constructed Tensor holds no values)");
}

TensorImpl& Tensor::checked_impl(const char* op) const {
  if (!impl_) undefined_error(op);
  return *impl_;
}

const Shape& Tensor::shape() const { return checked_impl("shape").shape; }

int64_t Tensor::size(int64_t d) const { return shape()[normalize_dim(d, dim(), "size")]; }

void Tensor::mark_modified() const { ++*checked_impl("mark_modified").version; }

uint64_t Tensor::version() const { return *checked_impl("version").version; }

const Tensor& Tensor::fill_(float value) const {
  std::fill_n(mutable_data(), numel(), value);
  return *this;
}

const Tensor& Tensor::copy_(const Tensor& source) const {
  if (source.shape() != shape())
    fail("copy_", "source has shape ", shape_str(source.shape()), " but this tensor has ", shape_str(shape()),
         "; they must match");
  std::copy_n(source.data(), numel(), mutable_data());
  return *this;
}

float Tensor::item() const {
  if (numel() != 1)
    fail("item", "needs a tensor with exactly one element, got shape ", shape_str(shape()));
  return data()[0];
}

float Tensor::at(std::initializer_list<int64_t> index) const {
  const Shape& s = shape();
  if (static_cast<int64_t>(index.size()) != dim())
    fail("at", index.size(), " indices given for a tensor of shape ", shape_str(s));
  int64_t offset = 0;
  int64_t d = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= s[d])
      fail("at", "index ", i, " is out of range for dim ", d, " of size ", s[d], " (shape ", shape_str(s), ")");
    offset = offset * s[d] + i;
    ++d;
  }
  return data()[offset];
}

std::vector<float> Tensor::to_vector() const { return {data(), data() + numel()}; }

bool Tensor::requires_grad() const { return impl_ && impl_->requires_grad; }

Tensor& Tensor::requires_grad_(bool on) {
  TensorImpl& self = checked_impl("requires_grad_");
  if (self.grad_fn)
    fail("requires_grad_", "can only be set on a leaf; this tensor was produced by '", self.grad_fn->op,
         "'. Use detach() first to make a new leaf from its values");
  self.requires_grad = on;
  return *this;
}

bool Tensor::is_leaf() const { return !checked_impl("is_leaf").grad_fn; }

Tensor Tensor::grad() const { return Tensor(checked_impl("grad").grad); }

void Tensor::set_grad(const Tensor& grad) const {
  TensorImpl& self = checked_impl("set_grad");
  if (grad.defined() && grad.shape() != self.shape)
    fail("set_grad", "gradient of shape ", shape_str(grad.shape()), " for a tensor of shape ", shape_str(self.shape));
  self.grad = grad.impl_ptr();
}

void Tensor::zero_grad() const { checked_impl("zero_grad").grad.reset(); }

Tensor& Tensor::retain_grad() {
  TensorImpl& self = checked_impl("retain_grad");
  if (!self.requires_grad)
    fail("retain_grad", "the tensor does not require grad, so backward() will never reach it");
  self.retains_grad = true;
  return *this;
}

std::string Tensor::grad_fn_name() const {
  const TensorImpl& self = checked_impl("grad_fn_name");
  return self.grad_fn ? self.grad_fn->op : "";
}

const std::shared_ptr<Node>& Tensor::grad_fn() const { return checked_impl("grad_fn").grad_fn; }

Tensor Tensor::detach() const {
  const TensorImpl& self = checked_impl("detach");
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = self.shape;
  impl->storage = self.storage;
  impl->version = self.version;
  return Tensor(std::move(impl));
}

Tensor Tensor::clone() const { return ladder::clone(*this); }

// ---- factories ----

namespace {

// Training allocates and frees the same large buffers every step. By default glibc hands big
// freed blocks back to the operating system and faults them in again on the next step (a page
// fault per 4 KiB). Keeping freed memory in the process makes the next allocation free.
const bool keep_freed_memory = [] {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);  // blocks up to 256 MiB come from the heap...
  mallopt(M_TRIM_THRESHOLD, 1 << 30);    // ...and the heap is not shrunk below 1 GiB of free space
  return true;
}();

}  // namespace

Tensor empty(const Shape& shape) {
  for (int64_t size : shape)
    if (size < 0) fail("empty", "negative size in shape ", shape_str(shape));
  const int64_t n = numel(shape);
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  try {
    // make_shared_for_overwrite: one allocation, values left uninitialised (the op writes them).
    impl->storage = std::make_shared_for_overwrite<float[]>(static_cast<size_t>(n));
  } catch (const std::bad_alloc&) {
    fail("empty", "cannot allocate ", static_cast<double>(n) * sizeof(float) / (1 << 30), " GiB for shape ",
         shape_str(shape));
  }
  impl->version = std::make_shared<uint64_t>(0);
  return Tensor(std::move(impl));
}

Tensor full(const Shape& shape, float value) {
  Tensor t = empty(shape);
  std::fill_n(t.data(), t.numel(), value);
  return t;
}

Tensor zeros(const Shape& shape) { return full(shape, 0); }
Tensor ones(const Shape& shape) { return full(shape, 1); }
Tensor scalar(float value) { return full({}, value); }

Tensor tensor(const std::vector<float>& values, const Shape& shape) {
  if (static_cast<int64_t>(values.size()) != numel(shape))
    fail("tensor", values.size(), " values cannot fill shape ", shape_str(shape), " (", numel(shape),
         " elements)");
  Tensor t = empty(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

Tensor tensor(const std::vector<float>& values) {
  return tensor(values, {static_cast<int64_t>(values.size())});
}

Tensor arange(float end) { return arange(0, end); }

Tensor arange(float start, float end, float step) {
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step) || step == 0 || (end - start) / step < 0)
    fail("arange", "no values from ", start, " to ", end, " with step ", step);
  if ((end - start) / step > 1e9f) fail("arange", "from ", start, " to ", end, " with step ", step, " is over a billion values");
  const auto n = static_cast<int64_t>(std::ceil((end - start) / step));
  Tensor t = empty({n});
  for (int64_t i = 0; i < n; ++i) t.data()[i] = start + static_cast<float>(i) * step;
  return t;
}

Tensor empty_like(const Tensor& x) { return empty(x.shape()); }
Tensor zeros_like(const Tensor& x) { return zeros(x.shape()); }
Tensor full_like(const Tensor& x, float value) { return full(x.shape(), value); }

namespace {

template <class Draw>
Tensor generate(const Shape& shape, Draw draw) {
  Tensor t = empty(shape);
  float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = draw();  // serial: the same numbers for any thread count
  return t;
}

}  // namespace

Tensor randn(const Shape& shape, Generator& gen) {
  return generate(shape, [&] { return gen.normal(); });
}

Tensor rand(const Shape& shape, Generator& gen) {
  return generate(shape, [&] { return gen.uniform(); });
}

Tensor uniform(const Shape& shape, float low, float high, Generator& gen) {
  return generate(shape, [&] { return gen.uniform(low, high); });
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen) {
  if (high <= low) fail("randint", "empty range [", low, ", ", high, "): high must be greater than low");
  return generate(shape, [&] { return static_cast<float>(gen.randint(low, high)); });
}

}  // namespace ladder
