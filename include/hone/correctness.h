// Correctness checks: does a candidate compute what the reference computes?
//
//   GateTolerance g = GateTolerance::for_precision(Precision::kFp32);  // factor 100, floors
//   CorrectnessResult r = calibrated_check(cand, ref_f32, ref_f64, {"probs"}, g);
//   if (!r.passed) std::puts(r.message.c_str());               // names the output and figures
//
// Two checks live here. The calibrated gate (calibrated_check, what tuning
// uses) judges a candidate against the ground truth, the reference run in
// f64, and measures each output's error on the output's own scale: relative
// L2 (||a - t|| / ||t||) and the largest |a - t| over the output's RMS. The
// f32 reference's own errors against the same truth calibrate the bound:
// a candidate passes when each of its errors is at most `factor` times the
// f32 reference's, or the precision's floor, whichever is larger (a
// bit-exact f32 reference must not give a zero bound). Integer and bool
// outputs must equal the truth, except where the f32 reference already
// differs from it (an argmax near a tie): there the f32 answer is accepted
// too; and where a TieWitness gives the float values an index output was
// chosen from (ArgMax, ArgMin, TopK's indices), another index is accepted
// exactly where its value ties the truth's within the precision's bound
// (two correct backends may order near-equal values differently; a flip
// between values that differ by more is wrong). The strict check (check_outputs, for data with
// exact expected values such as the ONNX conformance tests) asks every element for |actual -
// expected| <= atol + rtol * |expected|. Both keep the worst element (index, both values) so a
// report can say where a candidate went wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hone/error.h"
#include "hone/precision.h"
#include "hone/tensor.h"

namespace hone {

struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
  /// The declared tolerance of a precision: fp32 (and fp64) rtol 1e-4 / atol
  /// 1e-5; tf32 1e-3 / 1e-4; bf16 2e-2 / 1e-2; fp16 1e-2 / 1e-3; fp8 3e-1 /
  /// 1.5e-1 (bf16's scaled by e4m3's 16 times coarser rounding).
  static Tolerance for_precision(Precision precision);
};

/// The calibrated gate's bound for one precision: an error passes when it is
/// <= max(factor * the f32 reference's error, floor). The declared values
/// (the one place they live) are:
///
///   precision    factor  floor rel. L2  floor max|diff|/RMS
///   fp32 (fp64)   100      1e-5            1e-4
///   tf32          100      2e-3            2e-2
///   fp16          100      2e-3            2e-2
///   bf16          100      2e-2            1e-1
///   fp8           100      3e-1            1.5
///
/// Why: the f32 reference rounds each op's result to f32 but accumulates in
/// f64, so its error is rounding carried through the model, while a correct
/// f32 backend also reorders its sums (blocked GEMM, fused epilogues). On
/// models/ onednn, blas and aot land 2-20x above the f32 reference's error
/// (all under the floor); on a real line detector with outputs up to ~300
/// (M-LSD large, f32 reference 7e-6 off in relative L2) 1.4-6x. One Conv,
/// Gemm, MatMul or LSTM result off by 1% lands 14x or more above the bound
/// on all of them (tests/unit/tune/gate_models_test.cpp). The floors sit at
/// ~100 units of rounding of the precision for relative L2, 10x that for the
/// single worst element. fp8 (e4m3, 3 explicit mantissa bits) scales bf16's
/// floors by 16, the ratio of the two formats' unit roundoffs (2^-4 / 2^-8):
/// an order of magnitude looser, so `hone tune --precision auto` leaves it
/// out unless asked for (auto,fp8).
struct GateTolerance {
  double factor = 100;
  double floor_rel_l2 = 1e-5;
  double floor_max = 1e-4;
  static GateTolerance for_precision(Precision precision);
  /// "FACTOR[:FLOOR_REL_L2[:FLOOR_MAX]]" (--tolerance); floors not given are
  /// f32's. kInvalidArgument naming the part that is not a positive number.
  [[nodiscard]] static Result<GateTolerance> parse(std::string_view text);
  /// "factor 100, floors 1e-05/0.0001".
  std::string describe() const;
};

/// One output's calibrated figures (the worst over the check inputs).
struct OutputCheck {
  std::string output;
  bool exact = false;  // integer or bool output, compared element by element
  bool passed = true;
  double rel_l2 = 0, max_err = 0;          // candidate vs the truth (max_err: max|diff| / RMS)
  double ref_rel_l2 = 0, ref_max_err = 0;  // the f32 reference vs the truth
  double bound_rel_l2 = 0, bound_max_err = 0;
  int64_t mismatches = 0;  // exact outputs: elements equal to neither truth nor f32 reference
  int64_t tied_flips = 0;  // exact outputs: other indices accepted for a tie (TieWitness)
};

/// The float values an integer output's indices were chosen from, so the
/// gate can tell a tie from a wrong answer: the f64 truth's values of the
/// data input of the ArgMax, ArgMin or TopK that made graph output `output`.
struct TieWitness {
  size_t output = 0;  ///< the graph output (an index tensor) it explains
  Tensor values;      ///< the data input the indices point into (truth run)
  int64_t axis = 0;   ///< normalised into [0, values.rank())
  /// TopK's indices: the output has K entries along `axis`; ArgMax/ArgMin:
  /// one (keepdims) or none (the axis removed).
  bool along_axis = false;
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
  /// Calibrated gate only: per-output figures, what the truth was ("f64
  /// reference", or the f32 reference when the f64 run was unavailable, with
  /// why) and the tolerance applied.
  std::vector<OutputCheck> outputs;
  std::string truth;
  std::string tolerance;
};

/// Compares candidate outputs with the reference's. `names` labels outputs
/// in messages (may be shorter than the outputs).
CorrectnessResult check_outputs(const std::vector<Tensor>& actual,
                                const std::vector<Tensor>& expected,
                                const std::vector<std::string>& names, const Tolerance& tolerance);

/// The worse of two results (a failure beats a pass; then the larger excess).
CorrectnessResult worse_of(CorrectnessResult a, CorrectnessResult b);

/// The calibrated gate on one check input: `candidate` against `truth` (the
/// f64 reference's outputs), with `reference` (the f32 reference's) giving
/// the calibration. `truth` may be the f32 reference itself (no f64 run):
/// then the bound is the floor. Outputs must have the f32 reference's dtype
/// and shape; NaN/Inf must sit where the truth has them.
/// `ties` (may be empty) explains index outputs: see TieWitness.
CorrectnessResult calibrated_check(const std::vector<Tensor>& candidate,
                                   const std::vector<Tensor>& reference,
                                   const std::vector<Tensor>& truth,
                                   const std::vector<std::string>& names,
                                   const GateTolerance& tolerance,
                                   const std::vector<TieWitness>& ties = {});

/// Merges the calibrated results of two check inputs: per output the larger
/// errors (and bounds of the input they came from), the first failure's message.
CorrectnessResult merge_checks(CorrectnessResult a, const CorrectnessResult& b);

}  // namespace hone
