// hone::DType: the element types a tensor can hold, with their sizes and names.
//
//   DType t = DType::kF32;
//   size_t bytes = dtype_size(t) * numel;          // 4 * numel
//   auto parsed = dtype_from_string("bf16");        // Result<DType>
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hone/error.h"

namespace hone {

enum class DType : uint8_t {
  kUndefined = 0,
  kF32,
  kF16,
  kBF16,
  kF64,
  kI8,
  kU8,
  kI16,
  kU16,
  kI32,
  kU32,
  kI64,
  kU64,
  kBool,
};

/// Bytes per element; 0 for kUndefined.
size_t dtype_size(DType t);
/// Short lowercase name: "f32", "bf16", "i64", "bool".
std::string_view dtype_name(DType t);
/// Parses a short name ("f32") or a NumPy-ish long one ("float32", "int64").
Result<DType> dtype_from_string(std::string_view name);

bool is_floating(DType t);
bool is_integer(DType t);  // signed or unsigned, not bool
bool is_signed_integer(DType t);

/// Maps a C++ type to its DType: dtype_of<float>() == DType::kF32.
template <class T>
constexpr DType dtype_of();

struct Half;
struct BFloat16;

template <>
constexpr DType dtype_of<float>() {
  return DType::kF32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kF64;
}
template <>
constexpr DType dtype_of<Half>() {
  return DType::kF16;
}
template <>
constexpr DType dtype_of<BFloat16>() {
  return DType::kBF16;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::kI8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::kU8;
}
template <>
constexpr DType dtype_of<int16_t>() {
  return DType::kI16;
}
template <>
constexpr DType dtype_of<uint16_t>() {
  return DType::kU16;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kI32;
}
template <>
constexpr DType dtype_of<uint32_t>() {
  return DType::kU32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kI64;
}
template <>
constexpr DType dtype_of<uint64_t>() {
  return DType::kU64;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}

}  // namespace hone
