// Helpers shared by reference kernels: dtype dispatch, scalar conversion
// through double, axis normalization and ONNX (NumPy-style) broadcasting.
//
//   return dispatch_numeric(x.dtype(), [&]<class T>() -> Result<void> {
//     for (i...) out[i] = from_f64<T>(std::exp(to_f64(in[i])));  return {};
//   });
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/host_blocks.h"
#include "hone/error.h"
#include "hone/half.h"
#include "hone/tensor.h"
#include "ops/axis.h"
#include "ops/broadcast.h"

namespace hone::eval {

// --- scalar conversion ------------------------------------------------------

template <class T>
inline double to_f64(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return static_cast<double>(v.to_float());
  else
    return static_cast<double>(v);
}

/// double → T with C++ conversion semantics for integers (callers clamp or
/// round first where ONNX asks for it) and round-to-nearest for floats.
template <class T>
inline T from_f64(double v) {
  if constexpr (std::is_same_v<T, Half>)
    return Half::from_float(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>)
    return BFloat16::from_float(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bool>)
    return v != 0.0;
  else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T{0};
    return static_cast<T>(v);
  } else
    return static_cast<T>(v);
}

template <class T>
inline constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// --- dtype dispatch -----------------------------------------------------------

[[nodiscard]] Error unsupported_dtype(DType t, const char* what);

/// Calls f.template operator()<T>() for float types (f32, f64, f16, bf16).
template <class F>
auto dispatch_float(DType t, F&& f) -> decltype(f.template operator()<float>()) {
  switch (t) {
    case DType::kF32:
      return f.template operator()<float>();
    case DType::kF64:
      return f.template operator()<double>();
    case DType::kF16:
      return f.template operator()<Half>();
    case DType::kBF16:
      return f.template operator()<BFloat16>();
    default:
      return std::unexpected(unsupported_dtype(t, "a floating-point type"));
  }
}

/// Integer types (signed and unsigned), not bool.
template <class F>
auto dispatch_integer(DType t, F&& f) -> decltype(f.template operator()<int64_t>()) {
  switch (t) {
    case DType::kI8:
      return f.template operator()<int8_t>();
    case DType::kU8:
      return f.template operator()<uint8_t>();
    case DType::kI16:
      return f.template operator()<int16_t>();
    case DType::kU16:
      return f.template operator()<uint16_t>();
    case DType::kI32:
      return f.template operator()<int32_t>();
    case DType::kU32:
      return f.template operator()<uint32_t>();
    case DType::kI64:
      return f.template operator()<int64_t>();
    case DType::kU64:
      return f.template operator()<uint64_t>();
    default:
      return std::unexpected(unsupported_dtype(t, "an integer type"));
  }
}

/// Every numeric type (floats and integers), not bool.
template <class F>
auto dispatch_numeric(DType t, F&& f) -> decltype(f.template operator()<float>()) {
  if (is_floating(t)) return dispatch_float(t, f);
  if (is_integer(t)) return dispatch_integer(t, f);
  return std::unexpected(unsupported_dtype(t, "a numeric type"));
}

/// Every type including bool.
template <class F>
auto dispatch_all(DType t, F&& f) -> decltype(f.template operator()<float>()) {
  if (t == DType::kBool) return f.template operator()<bool>();
  return dispatch_numeric(t, f);
}

// --- tensor conversion --------------------------------------------------------

/// All elements as double (f64 accumulation for reference math); a large
/// copy's buffer comes from the block cache (core/host_blocks.h).
HostVector<double> to_doubles(const Tensor& t);
/// All elements as int64 (integer and bool tensors; floats truncate).
std::vector<int64_t> to_int64s(const Tensor& t);
/// A new tensor of `dtype` holding `values` converted with from_f64.
Tensor from_doubles(DType dtype, std::vector<int64_t> shape, std::span<const double> values);
/// Casts any tensor to `dtype` (ONNX Cast semantics for numeric types).
Tensor cast_tensor(const Tensor& t, DType dtype);

// --- shapes and axes --------------------------------------------------------------

// Strides, axis normalisation and broadcasting are ONNX rules with one home,
// src/ops; the kernels use them by these names.
using ops::broadcast_shapes;
using ops::broadcast_strides;
using ops::normalize_axis;
using ops::strides_of;

/// For each linear index of `out_shape`, the linear index into a tensor of
/// `in_shape` broadcast to it. `in_shape` must broadcast to `out_shape`.
std::vector<int64_t> broadcast_index_map(const std::vector<int64_t>& in_shape,
                                         const std::vector<int64_t>& out_shape);

/// ONNX TensorProto.DataType code (Cast's `to`, `dtype`, `output_datatype`
/// attributes) → DType, for the types hone holds; kUnsupported otherwise.
[[nodiscard]] Result<DType> dtype_from_onnx(int64_t code);

/// Checks that a result of `shape` fits in int64 and, held as doubles (the
/// reference's working precision), in the memory budget (hone/limits.h):
/// kInvalidArgument or kOutOfMemory naming `what`, before a kernel allocates
/// a size it computed from attributes or input values.
[[nodiscard]] Result<void> check_result_size(const std::vector<int64_t>& shape,
                                             const std::string& what);

/// Reads a 1-D (or scalar) integer tensor, e.g. a shape or axes input.
[[nodiscard]] Result<std::vector<int64_t>> read_int_list(const Tensor& t, const char* what);

}  // namespace hone::eval
