#include "eval/kernel_util.h"

#include <algorithm>
#include <cstring>

#include "hone/limits.h"
#include "hone/shape.h"

namespace hone::eval {

Error unsupported_dtype(DType t, const char* what) {
  return Error(ErrorCode::kUnsupported, "dtype " + std::string(dtype_name(t)) +
                                            " is not supported here (expected " + what + ")");
}

HostVector<double> to_doubles(const Tensor& t) {
  HostVector<double> out(static_cast<size_t>(t.numel()));
  auto r = dispatch_all(t.dtype(), [&]<class T>() -> Result<void> {
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = to_f64(p[i]);
    return {};
  });
  if (!r)  // a dtype dispatch_all does not know: the per-element path names it
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = tensor_element_as_double(t, i);
  return out;
}

std::vector<int64_t> to_int64s(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = tensor_element_as_int64(t, i);
  return out;
}

Tensor from_doubles(DType dtype, std::vector<int64_t> shape, std::span<const double> values) {
  // Every element is written: the values, then zeros past their end.
  Tensor out = Tensor::for_overwrite(dtype, std::move(shape));
  auto r = dispatch_all(dtype, [&]<class T>() -> Result<void> {
    T* p = out.data<T>();
    const size_t n = std::min(values.size(), static_cast<size_t>(out.numel()));
    for (size_t i = 0; i < n; ++i) p[i] = from_f64<T>(values[i]);
    std::fill(p + n, p + out.numel(), T{});
    return {};
  });
  (void)r;
  return out;
}

Tensor cast_tensor(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = Tensor::for_overwrite(dtype, t.shape());
  const int64_t n = t.numel();
  const bool exact_int = is_integer(t.dtype()) || t.dtype() == DType::kBool;
  auto r = dispatch_all(dtype, [&]<class T>() -> Result<void> {
    T* p = out.data<T>();
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (exact_int) {
        // Integer → integer keeps all 64 bits (wraps like C++ conversion).
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(tensor_element_as_int64(t, i));
        return {};
      }
    }
    for (int64_t i = 0; i < n; ++i) p[i] = from_f64<T>(tensor_element_as_double(t, i));
    return {};
  });
  (void)r;
  return out;
}

std::vector<int64_t> broadcast_index_map(const std::vector<int64_t>& in_shape,
                                         const std::vector<int64_t>& out_shape) {
  const int64_t n = shape_numel(out_shape);
  std::vector<int64_t> map(static_cast<size_t>(n));
  const std::vector<int64_t> s = broadcast_strides(in_shape, out_shape);
  const size_t rank = out_shape.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    map[i] = off;
    // Odometer increment.
    for (int64_t a = static_cast<int64_t>(rank) - 1; a >= 0; --a) {
      if (++idx[a] < out_shape[a]) {
        off += s[a];
        break;
      }
      off -= s[a] * (out_shape[a] - 1);
      idx[a] = 0;
    }
  }
  return map;
}

Result<DType> dtype_from_onnx(int64_t code) {
  switch (code) {
    case 1:
      return DType::kF32;
    case 2:
      return DType::kU8;
    case 3:
      return DType::kI8;
    case 4:
      return DType::kU16;
    case 5:
      return DType::kI16;
    case 6:
      return DType::kI32;
    case 7:
      return DType::kI64;
    case 9:
      return DType::kBool;
    case 10:
      return DType::kF16;
    case 11:
      return DType::kF64;
    case 12:
      return DType::kU32;
    case 13:
      return DType::kU64;
    case 16:
      return DType::kBF16;
    case 8:
      return fail(ErrorCode::kUnsupported, "string tensors are not supported");
    case 14:
    case 15:
      return fail(ErrorCode::kUnsupported, "complex tensors are not supported");
    // Types of opsets 19-26 hone has no dtype for; named so the refusal says which.
    case 17:
      return fail(ErrorCode::kUnsupported, "element type FLOAT8E4M3FN (17) is not supported");
    case 18:
      return fail(ErrorCode::kUnsupported, "element type FLOAT8E4M3FNUZ (18) is not supported");
    case 19:
      return fail(ErrorCode::kUnsupported, "element type FLOAT8E5M2 (19) is not supported");
    case 20:
      return fail(ErrorCode::kUnsupported, "element type FLOAT8E5M2FNUZ (20) is not supported");
    case 21:
      return fail(ErrorCode::kUnsupported, "element type UINT4 (21) is not supported");
    case 22:
      return fail(ErrorCode::kUnsupported, "element type INT4 (22) is not supported");
    case 23:
      return fail(ErrorCode::kUnsupported, "element type FLOAT4E2M1 (23) is not supported");
    case 24:
      return fail(ErrorCode::kUnsupported, "element type FLOAT8E8M0 (24) is not supported");
    case 25:
      return fail(ErrorCode::kUnsupported, "element type UINT2 (25) is not supported");
    case 26:
      return fail(ErrorCode::kUnsupported, "element type INT2 (26) is not supported");
    default:
      return fail(ErrorCode::kUnsupported,
                  "ONNX element type " + std::to_string(code) + " is not supported");
  }
}

Result<void> check_result_size(const std::vector<int64_t>& shape, const std::string& what) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return fail(ErrorCode::kInvalidArgument,
                  what + " " + shape_to_string(shape) + " has a negative dim");
    if (d != 0 && n > (uint64_t{1} << 60) / static_cast<uint64_t>(d))
      return fail(ErrorCode::kInvalidArgument,
                  what + " " + shape_to_string(shape) + " has too many elements");
    n *= static_cast<uint64_t>(d);
  }
  return check_allocation(n * sizeof(double), what + " " + shape_to_string(shape));
}

Result<std::vector<int64_t>> read_int_list(const Tensor& t, const char* what) {
  if (!is_integer(t.dtype()))
    return fail(ErrorCode::kInvalidArgument,
                std::string(what) + " must be an integer tensor, got " + t.describe());
  if (t.rank() > 1)
    return fail(ErrorCode::kInvalidArgument,
                std::string(what) + " must be 1-D, got " + t.describe());
  return to_int64s(t);
}

}  // namespace hone::eval
