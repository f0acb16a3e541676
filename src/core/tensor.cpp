#include "hone/tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <type_traits>

#include "core/host_blocks.h"
#include "hone/half.h"
#include "hone/limits.h"
#include "hone/shape.h"

namespace hone {
namespace {

constexpr size_t kAlignment = 64;

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

Result<size_t> checked_bytes(DType dtype, const std::vector<int64_t>& shape, int64_t* numel) {
  if (dtype == DType::kUndefined)
    return fail(ErrorCode::kInvalidArgument, "cannot allocate a tensor of undefined dtype");
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t d = shape[i];
    if (d < 0)
      return fail(ErrorCode::kInvalidArgument, "negative dim " + std::to_string(d) + " at axis " +
                                                   std::to_string(i) + " of shape " +
                                                   shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return fail(ErrorCode::kInvalidArgument,
                  "shape " + shape_to_string(shape) + " has more elements than fit in 64 bits");
    n *= d;
  }
  const size_t es = dtype_size(dtype);
  if (n != 0 && static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / es / 2)
    return fail(ErrorCode::kInvalidArgument, "shape " + shape_to_string(shape) + " is too large");
  *numel = n;
  return static_cast<size_t>(n) * es;
}

}  // namespace

Result<Tensor> Tensor::allocate(DType dtype, std::vector<int64_t> shape) {
  return make(dtype, std::move(shape), true);
}

Result<Tensor> Tensor::allocate_for_overwrite(DType dtype, std::vector<int64_t> shape) {
  return make(dtype, std::move(shape), false);
}

Result<Tensor> Tensor::make(DType dtype, std::vector<int64_t> shape, bool zero) {
  int64_t numel = 0;
  HONE_TRY(size_t bytes, checked_bytes(dtype, shape, &numel));
  HONE_CHECK_OK(check_allocation(
      bytes, "a tensor of shape " + shape_to_string(shape) + " " + std::string(dtype_name(dtype))));
  const size_t padded = ((bytes + kAlignment - 1) / kAlignment) * kAlignment;
  Tensor t;
  if (padded >= detail::large_block_min()) {
    // Mapped and cached (core/host_blocks.h): no page faults when reused.
    size_t cap = 0;
    void* p = detail::large_block_take(padded, &cap, zero);
    if (p != nullptr)
      t.storage_ = std::shared_ptr<void>(p, [cap](void* q) { detail::large_block_give(q, cap); });
  } else {
    void* p = std::aligned_alloc(kAlignment, padded == 0 ? kAlignment : padded);
    if (p != nullptr) {
      if (zero) std::memset(p, 0, padded == 0 ? kAlignment : padded);
      t.storage_ = std::shared_ptr<void>(p, AlignedFree{});
    }
  }
  if (!t.storage_)
    return fail(ErrorCode::kOutOfMemory, "cannot allocate " + std::to_string(bytes) +
                                             " bytes for a tensor of shape " +
                                             shape_to_string(shape));
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = numel;
  t.data_ = t.storage_.get();
  return t;
}

Result<size_t> Tensor::bytes_for(DType dtype, const std::vector<int64_t>& shape) {
  int64_t numel = 0;
  HONE_TRY(size_t bytes, checked_bytes(dtype, shape, &numel));
  HONE_CHECK_OK(check_allocation(
      bytes, "a tensor of shape " + shape_to_string(shape) + " " + std::string(dtype_name(dtype))));
  return bytes;
}

Result<Tensor> Tensor::adopt(DType dtype, std::vector<int64_t> shape, std::shared_ptr<void> storage,
                             size_t storage_bytes, bool zero_fill) {
  HONE_TRY(size_t bytes, bytes_for(dtype, shape));
  if (!storage || storage_bytes < bytes)
    return fail(ErrorCode::kInvalidArgument,
                "storage of " + std::to_string(storage_bytes) + " bytes for a tensor of shape " +
                    shape_to_string(shape) + " " + std::string(dtype_name(dtype)) + " (" +
                    std::to_string(bytes) + " bytes)");
  if (zero_fill) std::memset(storage.get(), 0, bytes);
  Tensor t;
  t.dtype_ = dtype;
  t.numel_ = shape_numel(shape);
  t.shape_ = std::move(shape);
  t.data_ = storage.get();
  t.storage_ = std::move(storage);
  return t;
}

namespace {

Tensor value_or_throw(Result<Tensor> t) {
  if (!t) {
    if (t.error().code() == ErrorCode::kOutOfMemory) throw std::bad_alloc();
    throw std::invalid_argument(t.error().message());
  }
  return std::move(*t);
}

}  // namespace

Tensor Tensor::zeros(DType dtype, std::vector<int64_t> shape) {
  return value_or_throw(allocate(dtype, std::move(shape)));
}

Tensor Tensor::for_overwrite(DType dtype, std::vector<int64_t> shape) {
  return value_or_throw(allocate_for_overwrite(dtype, std::move(shape)));
}

Tensor Tensor::borrow(DType dtype, std::vector<int64_t> shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.numel_ = shape_numel(shape);
  t.shape_ = std::move(shape);
  t.data_ = data;
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return Tensor();
  auto made = make(dtype_, shape_, false);
  if (!made) throw std::bad_alloc();
  Tensor t = std::move(*made);
  if (nbytes()) std::memcpy(t.data_, data_, nbytes());
  return t;
}

Result<Tensor> Tensor::reshaped(std::vector<int64_t> shape) const {
  if (shape_numel(shape) != numel_)
    return fail(ErrorCode::kInvalidArgument, "cannot view " + describe() + " as shape " +
                                                 shape_to_string(shape) +
                                                 ": element counts differ");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

std::string Tensor::describe() const {
  return std::string(dtype_name(dtype_)) + shape_to_string(shape_);
}

bool Tensor::bitwise_equal(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  return nbytes() == 0 || std::memcmp(data_, other.data_, nbytes()) == 0;
}

namespace {

/// `f(std::type_identity<T>{})` with T the C++ type of `dtype`'s elements;
/// `undefined()` for kUndefined.
template <class F, class U>
auto with_element_type(DType dtype, F&& f, U&& undefined) {
  switch (dtype) {
    case DType::kF32:
      return f(std::type_identity<float>{});
    case DType::kF64:
      return f(std::type_identity<double>{});
    case DType::kF16:
      return f(std::type_identity<Half>{});
    case DType::kBF16:
      return f(std::type_identity<BFloat16>{});
    case DType::kI8:
      return f(std::type_identity<int8_t>{});
    case DType::kU8:
      return f(std::type_identity<uint8_t>{});
    case DType::kI16:
      return f(std::type_identity<int16_t>{});
    case DType::kU16:
      return f(std::type_identity<uint16_t>{});
    case DType::kI32:
      return f(std::type_identity<int32_t>{});
    case DType::kU32:
      return f(std::type_identity<uint32_t>{});
    case DType::kI64:
      return f(std::type_identity<int64_t>{});
    case DType::kU64:
      return f(std::type_identity<uint64_t>{});
    case DType::kBool:
      return f(std::type_identity<bool>{});
    case DType::kUndefined:
      break;
  }
  return undefined();
}

template <class T>
constexpr bool kHalfType = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

}  // namespace

double tensor_element_as_double(const Tensor& t, int64_t i) {
  return with_element_type(
      t.dtype(),
      [&]<class T>(std::type_identity<T>) -> double {
        const T x = t.data<T>()[i];
        if constexpr (kHalfType<T>)
          return x.to_float();
        else if constexpr (std::is_same_v<T, bool>)
          return x ? 1.0 : 0.0;
        else
          return static_cast<double>(x);
      },
      [] { return 0.0; });
}

int64_t tensor_element_as_int64(const Tensor& t, int64_t i) {
  return with_element_type(
      t.dtype(),
      [&]<class T>(std::type_identity<T>) -> int64_t {
        if constexpr (std::is_integral_v<T>)  // bool too: 0 or 1
          return static_cast<int64_t>(t.data<T>()[i]);
        else
          return static_cast<int64_t>(tensor_element_as_double(t, i));
      },
      [&] { return static_cast<int64_t>(tensor_element_as_double(t, i)); });
}

void tensor_set_element_from_double(Tensor& t, int64_t i, double v) {
  with_element_type(
      t.dtype(),
      [&]<class T>(std::type_identity<T>) {
        T& x = t.data<T>()[i];
        if constexpr (kHalfType<T>)
          x = T::from_float(static_cast<float>(v));
        else if constexpr (std::is_same_v<T, bool>)
          x = v != 0.0;
        else if constexpr (std::is_floating_point_v<T>)
          x = static_cast<T>(v);
        else
          x = std::isnan(v) ? T{0} : static_cast<T>(v);
      },
      [] {});
}

}  // namespace hone
