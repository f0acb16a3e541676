#include "hone/precision.h"

#include <cctype>
#include <string>

namespace hone {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::kFp64:
      return "fp64";
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp8:
      return "fp8";
  }
  return "?";
}

Result<Precision> parse_precision(std::string_view text) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "fp64" || s == "f64" || s == "double" || s == "float64") return Precision::kFp64;
  if (s == "fp32" || s == "f32" || s == "float" || s == "float32") return Precision::kFp32;
  if (s == "tf32") return Precision::kTf32;
  if (s == "bf16" || s == "bfloat16") return Precision::kBf16;
  if (s == "fp16" || s == "f16" || s == "half" || s == "float16") return Precision::kFp16;
  if (s == "fp8" || s == "e4m3" || s == "float8_e4m3" || s == "fp8_e4m3") return Precision::kFp8;
  return fail(
      ErrorCode::kInvalidArgument,
      "unknown precision '" + std::string(text) +
          "' (known: fp64, fp32, tf32, bf16, fp16, fp8; also f64, f32, f16, bfloat16, half, e4m3)");
}

bool is_reduced(Precision p) {
  return p == Precision::kTf32 || p == Precision::kBf16 || p == Precision::kFp16 ||
         p == Precision::kFp8;
}

}  // namespace hone
