// Tensor: a handle to float32 values in one contiguous row-major buffer, plus what autograd needs.
#pragma once

#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/shape.h"

namespace ladder {

struct Node;

// What a Tensor handle points at. Several handles (and reshaped views) may share one storage.
struct TensorImpl {
  Shape shape;
  std::shared_ptr<float[]> storage;  // numel(shape) floats, row-major
  // Counts the in-place writes to `storage`; shared with it by every view, so that backward can
  // tell that a value it saved was changed after the forward pass.
  std::shared_ptr<uint64_t> version;
  bool requires_grad = false;        // a leaf that wants .grad, or an op output on the way to one
  bool retains_grad = false;         // keep .grad on a non-leaf too (retain_grad())
  std::shared_ptr<TensorImpl> grad;  // filled by backward(); same shape as this tensor
  std::shared_ptr<Node> grad_fn;     // the op that made this tensor; null for leaves
};

// Copying a Tensor copies the handle, not the values (like a PyTorch tensor in Python).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  int64_t size(int64_t dim) const;  // negative dims count from the end
  int64_t numel() const { return ladder::numel(shape()); }

  // The values, row-major. The handle is shallow: a const Tensor still lets you write values.
  // Inline: kernels call it in loops.
  float* data() const {
    if (!impl_) [[unlikely]]
      undefined_error("data");
    return impl_->storage.get();
  }
  // For writing values in place into a tensor that already exists (optimizer steps, loading,
  // running statistics): the same pointer as data(), and it bumps the version, so that a backward
  // that saved these values refuses to run on the changed ones. Fresh outputs use data().
  float* mutable_data() const {
    mark_modified();
    return data();
  }
  void mark_modified() const;  // the values were changed in place (bumps the version)
  uint64_t version() const;    // how many in-place writes the values have seen
  const Tensor& fill_(float value) const;           // in place
  const Tensor& copy_(const Tensor& source) const;  // in place; the shapes must match
  float item() const;  // the one value of a one-element tensor
  float at(std::initializer_list<int64_t> index) const;
  std::vector<float> to_vector() const;

  // Autograd (see docs/architecture.md for the exact semantics).
  bool requires_grad() const;
  Tensor& requires_grad_(bool on = true);  // leaves only
  bool is_leaf() const;
  Tensor grad() const;  // undefined until backward() reaches this tensor
  void set_grad(const Tensor& grad) const;
  void zero_grad() const;  // drops .grad (like PyTorch's set_to_none)
  Tensor& retain_grad();   // ask backward() to keep .grad on this non-leaf
  std::string grad_fn_name() const;  // "" for leaves
  const std::shared_ptr<Node>& grad_fn() const;
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;

  Tensor detach() const;  // same values, no history
  Tensor clone() const;   // a copy of the values that shares nothing, no history

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

 private:
  TensorImpl& checked_impl(const char* op) const;
  [[noreturn]] static void undefined_error(const char* op);
  std::shared_ptr<TensorImpl> impl_;
};

// Factories. `empty` leaves the values uninitialised; everything else fills them.
Tensor empty(const Shape& shape);
Tensor zeros(const Shape& shape);
Tensor ones(const Shape& shape);
Tensor full(const Shape& shape, float value);
Tensor scalar(float value);  // 0-d
Tensor tensor(const std::vector<float>& values, const Shape& shape);
Tensor tensor(const std::vector<float>& values);  // 1-d
Tensor arange(float end);
Tensor arange(float start, float end, float step = 1);
Tensor empty_like(const Tensor& x);
Tensor zeros_like(const Tensor& x);
Tensor full_like(const Tensor& x, float value);

Tensor randn(const Shape& shape, Generator& gen = default_generator());
Tensor rand(const Shape& shape, Generator& gen = default_generator());
Tensor uniform(const Shape& shape, float low, float high, Generator& gen = default_generator());
// Integers in [low, high), stored as floats (exact up to 2^24).
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen = default_generator());

// Prints like PyTorch: values (summarised with ... beyond 1000 elements), then the shape.
std::ostream& operator<<(std::ostream& out, const Tensor& x);
std::string to_string(const Tensor& x);

}  // namespace ladder
