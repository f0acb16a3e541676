#include "hone/dtype.h"

#include <string>

namespace hone {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kUndefined:
      return 0;
    case DType::kF32:
      return 4;
    case DType::kF16:
      return 2;
    case DType::kBF16:
      return 2;
    case DType::kF64:
      return 8;
    case DType::kI8:
      return 1;
    case DType::kU8:
      return 1;
    case DType::kI16:
      return 2;
    case DType::kU16:
      return 2;
    case DType::kI32:
      return 4;
    case DType::kU32:
      return 4;
    case DType::kI64:
      return 8;
    case DType::kU64:
      return 8;
    case DType::kBool:
      return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kUndefined:
      return "undefined";
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF64:
      return "f64";
    case DType::kI8:
      return "i8";
    case DType::kU8:
      return "u8";
    case DType::kI16:
      return "i16";
    case DType::kU16:
      return "u16";
    case DType::kI32:
      return "i32";
    case DType::kU32:
      return "u32";
    case DType::kI64:
      return "i64";
    case DType::kU64:
      return "u64";
    case DType::kBool:
      return "bool";
  }
  return "undefined";
}

Result<DType> dtype_from_string(std::string_view name) {
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias kAliases[] = {
      {"f32", DType::kF32},     {"float32", DType::kF32},   {"float", DType::kF32},
      {"f16", DType::kF16},     {"float16", DType::kF16},   {"half", DType::kF16},
      {"bf16", DType::kBF16},   {"bfloat16", DType::kBF16}, {"f64", DType::kF64},
      {"float64", DType::kF64}, {"double", DType::kF64},    {"i8", DType::kI8},
      {"int8", DType::kI8},     {"u8", DType::kU8},         {"uint8", DType::kU8},
      {"i16", DType::kI16},     {"int16", DType::kI16},     {"u16", DType::kU16},
      {"uint16", DType::kU16},  {"i32", DType::kI32},       {"int32", DType::kI32},
      {"u32", DType::kU32},     {"uint32", DType::kU32},    {"i64", DType::kI64},
      {"int64", DType::kI64},   {"u64", DType::kU64},       {"uint64", DType::kU64},
      {"bool", DType::kBool},
  };
  for (const auto& a : kAliases)
    if (a.name == name) return a.type;
  return fail(ErrorCode::kInvalidArgument, "unknown dtype '" + std::string(name) + "'");
}

bool is_floating(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
}

bool is_signed_integer(DType t) {
  return t == DType::kI8 || t == DType::kI16 || t == DType::kI32 || t == DType::kI64;
}

bool is_integer(DType t) {
  return is_signed_integer(t) || t == DType::kU8 || t == DType::kU16 || t == DType::kU32 ||
         t == DType::kU64;
}

}  // namespace hone
