// hone::Precision: the arithmetic a backend computes an f32 model in, one
// type shared by every backend, the gate and the tuner.
//
//   HONE_TRY(Precision p, parse_precision("bf16"));   // also "f32", "fp16", "half", ...
//   to_string(p);                                     // "bf16": the name configs and reports use
//   is_reduced(p);                                    // true: below fp32, judged by a looser bound
//
// A backend lists the precisions it has (BackendCapabilities::precisions) and
// is asked for one through its `precision` config field (`--config
// precision=bf16`), which Backend::configure parses into this type; the gate
// judges each precision by its own bound (GateTolerance::for_precision).
// Whatever the precision, a model's tensors keep their dtypes at the
// backend's edges: bf16 means bf16 arithmetic inside, not bf16 outputs.
#pragma once

#include <cstdint>
#include <string_view>

#include "hone/error.h"

namespace hone {

enum class Precision : uint8_t {
  kFp64,  ///< f64 arithmetic: the reference's ground truth
  kFp32,  ///< strict f32: every backend's default
  kTf32,  ///< f32 data, matrix products on 10-bit-mantissa tensor cores
  kBf16,  ///< bf16 operands (8-bit mantissa), f32 accumulation
  kFp16,  ///< f16 operands (11-bit mantissa, range 6.5e4), f32 accumulation
  /// e4m3 operands (4-bit significand, range 448) with per-tensor scales,
  /// f32 accumulation, for the matrix products by constant weights; the rest
  /// as under bf16 (cuda on compute capability 8.9 or newer)
  kFp8,
};

/// The canonical name: "fp64", "fp32", "tf32", "bf16", "fp16", "fp8".
std::string_view to_string(Precision p);
/// Parses the spellings users type, case-insensitively: fp64/f64/double,
/// fp32/f32/float/float32, tf32, bf16/bfloat16, fp16/f16/half/float16,
/// fp8/e4m3/float8_e4m3.
/// kInvalidArgument naming the text and the accepted names otherwise.
[[nodiscard]] Result<Precision> parse_precision(std::string_view text);
/// Below fp32 (tf32, bf16, fp16, fp8): judged by a looser bound than fp32.
bool is_reduced(Precision p);

}  // namespace hone
