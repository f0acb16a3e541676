// Correctness checks: does a candidate compute what the reference computes?
//
//   Tolerance tol = Tolerance::for_precision("f32");          // rtol 1e-4, atol 1e-5
//   CorrectnessResult r = check_outputs(actual, expected, {"probs"}, tol);
//   if (!r.passed) std::puts(r.message.c_str());             // names the worst element
//
// A candidate passes when every output has the reference's dtype and shape,
// has no NaN or Inf where the reference has none, and every element obeys
// |actual - expected| <= atol + rtol * |expected|. Integers and bools must be
// equal. The result keeps the worst element (index, both values, errors) so
// a report can say exactly where a rejected candidate went wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hone/tensor.h"

namespace hone {

struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
  /// The declared tolerance of a precision: "f32" rtol 1e-4 / atol 1e-5;
  /// "tf32" 1e-3 / 1e-4; "bf16" 2e-2 / 1e-2; "f16" 1e-2 / 1e-3. Unknown
  /// names get f32's.
  static Tolerance for_precision(std::string_view precision);
};

struct CorrectnessResult {
  bool passed = true;
  /// The output the worst element is in (its name, or "output <i>").
  std::string output;
  int64_t worst_index = -1;  // flat index into that output; -1 when none was compared
  double actual = 0, expected = 0;
  double abs_error = 0;
  double rel_error = 0;  // abs_error / max(|expected|, tiny)
  /// Empty when passed; else what was wrong, in a sentence naming the output
  /// and element ("output 'probs' element 17: 0.31 vs reference 0.29 ...").
  std::string message;
};

/// Compares candidate outputs with the reference's. `names` labels outputs
/// in messages (may be shorter than the outputs).
CorrectnessResult check_outputs(const std::vector<Tensor>& actual,
                                const std::vector<Tensor>& expected,
                                const std::vector<std::string>& names, const Tolerance& tolerance);

/// The worse of two results (a failure beats a pass; then the larger excess).
CorrectnessResult worse_of(CorrectnessResult a, CorrectnessResult b);

}  // namespace hone
