// Private to the cuda backend: times a planned op on the device, for choosing
// between candidate kernels of one op at plan time (fastest(): the attention
// units, cuBLASLt epilogues, bf16/f16 products against TF32 ones, cuDNN (f32,
// or bf16/f16 NHWC) or im2col + cuBLAS per conv geometry), and replays the
// choices a backend has recorded (kernel_choices.h).
//
//   HONE_TRY(double ms, time_op(plan, input_dims, math_mode, dnn));
//   HONE_CHECK_OK(run_op_once(plan, input_dims, math_mode, dnn));  // runs, untimed
//
// Runs on a process-wide planning stream (one per math mode) with scratch
// buffers filled with 0.01f (never zeros: they can run faster than data), one
// warm-up run, then the mean of a few. Serialised by a mutex.
#pragma once

#include <vector>

#include "backends/cuda/op.h"

namespace hone::cuda {

/// Milliseconds one run of `p` takes with inputs of `in` dims (f32).
[[nodiscard]] Result<double> time_op(const OpPlan& p, const std::vector<dims_t>& in, int math_mode,
                                     const Cudnn* dnn);

/// Runs `p` once, as time_op would (the same scratch buffers and planning
/// stream), and waits for it: for a plan-time check that the device accepts
/// a plan at all (fp8.h's probe_fp8), where timing it would only cost time.
[[nodiscard]] Result<void> run_op_once(const OpPlan& p, const std::vector<dims_t>& in,
                                       int math_mode, const Cudnn* dnn);

/// Relative L2 distance of each candidate's output from cands[reference]'s,
/// all run on the same inputs of `in` dims: uniform in [-1, 1), or
/// fixed[i]'s contents where given (values the plans read at plan time too,
/// such as an attention scale). The inputs are made and the reference run
/// once. Outputs are poisoned with NaN first: an unwritten element makes the
/// distance infinite. The reference's own entry is 0. An input the
/// reference reads half (OpPlan::reads) is given as bf16/f16 bits of those
/// values (`half`: kCudaR16BF or kCudaR16F), and a half output (writes) is
/// read back so; every candidate must read and write as the reference does.
[[nodiscard]] std::vector<Result<double>> compare_ops(
    const std::vector<OpPlan>& cands, size_t reference, const std::vector<dims_t>& in,
    const std::vector<const Tensor*>& fixed, int math_mode, const Cudnn* dnn, int half = 0);

/// What fastest() checks before timing: every candidate other than
/// cands[reference] must match it within `tolerance` (compare_ops), else it
/// is dropped with a warning. reference < 0: no check.
struct Check {
  int reference = -1;
  double tolerance = 0;
  std::vector<const Tensor*> fixed;
};

/// The fastest of `cands` (one op's candidate plans for inputs of `in` dims,
/// in the math mode and with the cuDNN of `s`) that passes `check`. The
/// kernel recorded in s.choices for (label, in, s.math.mode) is taken untimed when
/// it is among the candidates (else a warning, and timing); otherwise the
/// candidates are timed once per process for these kernel ids, dims and
/// `problem` (what else tells problems with the same kernel ids apart) and
/// remembered, and the winner is recorded in s.choices. The timings go to the
/// debug log under `label`. One candidate is returned as is.
[[nodiscard]] Result<OpPlan> fastest(const std::string& label, const std::vector<dims_t>& in,
                                     std::vector<OpPlan> cands, const BuildSettings& s,
                                     const Check& check = {}, const std::string& problem = "");
/// The relative L2 a candidate may differ from the reference by under each
/// precision setting (gemm_half: 0 / bf16 / f16; tf32): far above rounding,
/// far below a wrong kernel's O(1).
double check_tolerance(int gemm_half, bool tf32);

}  // namespace hone::cuda
