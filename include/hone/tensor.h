// hone::Tensor: a dense, contiguous, row-major n-d array with a dtype.
//
//   Tensor t = Tensor::zeros(DType::kF32, {2, 3});
//   t.data<float>()[0] = 1.0f;
//   Tensor v = Tensor::borrow(DType::kF32, {6}, user_ptr);  // does not own
//
// Ownership: an owning tensor holds its buffer (64-byte aligned) through a
// shared handle, so copying a Tensor is cheap and shares the bytes; use
// clone() for an independent copy. Writing through one copy is seen by all
// others, so treat shared tensors (weights, initializers) as immutable. A
// borrowed tensor never owns: the caller keeps the memory alive.
// Thread-safety: const access is safe from many threads; writes are not.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "hone/dtype.h"
#include "hone/error.h"

namespace hone {

class Tensor {
 public:
  /// An empty tensor: dtype kUndefined, no data. `defined()` is false.
  Tensor() = default;

  /// Allocates zero-filled storage. Fails with kInvalidArgument for negative
  /// dims or a size that overflows, kOutOfMemory when allocation fails.
  [[nodiscard]] static Result<Tensor> allocate(DType dtype, std::vector<int64_t> shape);
  /// As allocate(), but the bytes are unspecified: for a caller that writes
  /// every element next (a copy, a kernel's whole output).
  [[nodiscard]] static Result<Tensor> allocate_for_overwrite(DType dtype,
                                                             std::vector<int64_t> shape);
  /// The bytes a tensor of this dtype and shape holds; the errors of
  /// allocate() for a shape that cannot be held.
  [[nodiscard]] static Result<size_t> bytes_for(DType dtype, const std::vector<int64_t>& shape);
  /// An owning tensor over `storage`, which holds `storage_bytes` writable
  /// bytes (at least bytes_for()) and is released by its deleter; the bytes
  /// are zero-filled unless `zero_fill` is false (for a caller that writes
  /// every byte next). For memory a backend reads fastest, e.g. page-locked
  /// host memory (Backend::allocate_host).
  [[nodiscard]] static Result<Tensor> adopt(DType dtype, std::vector<int64_t> shape,
                                            std::shared_ptr<void> storage, size_t storage_bytes,
                                            bool zero_fill = true);
  /// As allocate(), but throws std::bad_alloc / std::invalid_argument; for
  /// callers whose shapes are already validated (kernels, tests).
  static Tensor zeros(DType dtype, std::vector<int64_t> shape);
  /// As allocate_for_overwrite(), but throws as zeros() does: for a kernel
  /// that writes every element of its output next.
  static Tensor for_overwrite(DType dtype, std::vector<int64_t> shape);
  /// Wraps caller memory without owning it.
  static Tensor borrow(DType dtype, std::vector<int64_t> shape, void* data);
  /// Owning tensor holding a copy of `values`; its size must match the shape.
  template <class T>
  static Tensor from(std::vector<int64_t> shape, const std::vector<T>& values) {
    Tensor t = zeros(dtype_of<T>(), std::move(shape));
    if (static_cast<int64_t>(values.size()) != t.numel())
      throw std::invalid_argument("Tensor::from: value count does not match shape");
    std::copy(values.begin(), values.end(), t.data<T>());
    return t;
  }
  template <class T>
  static Tensor scalar(T value) {
    return from<T>({}, std::vector<T>{value});
  }

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_[i]; }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  bool owns() const { return static_cast<bool>(storage_); }

  void* raw() { return data_; }
  const void* raw() const { return data_; }
  template <class T>
  T* data() {
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  template <class T>
  std::span<T> span() {
    return {data<T>(), static_cast<size_t>(numel_)};
  }
  template <class T>
  std::span<const T> span() const {
    return {data<T>(), static_cast<size_t>(numel_)};
  }

  /// Deep copy into fresh owned storage.
  Tensor clone() const;
  /// Same bytes viewed with another shape of equal element count.
  [[nodiscard]] Result<Tensor> reshaped(std::vector<int64_t> shape) const;
  /// "f32[2,3]"
  std::string describe() const;
  /// True when dtype, shape and bytes are identical.
  bool bitwise_equal(const Tensor& other) const;

 private:
  static Result<Tensor> make(DType dtype, std::vector<int64_t> shape, bool zero);

  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> storage_;  // null when borrowed
};

/// Reads element `i` of any numeric tensor as double (bool as 0/1).
double tensor_element_as_double(const Tensor& t, int64_t i);
/// Reads element `i` of an integer or bool tensor as int64.
int64_t tensor_element_as_int64(const Tensor& t, int64_t i);
/// Writes `v` to element `i`, converted like a C++ cast (NaN becomes 0 for
/// integers, any non-zero is true for bool, 16-bit floats round to nearest).
void tensor_set_element_from_double(Tensor& t, int64_t i, double v);

}  // namespace hone
