// Private to the cuda backend: times a planned op on the device, for choosing
// between candidate kernels of one op at plan time (ops_conv.cpp: cuDNN or
// im2col + cuBLAS, per conv geometry).
//
//   HONE_TRY(double ms, time_op(plan, input_dims, math_mode, dnn));
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

/// The fastest of `cands` (one op's candidate plans for inputs of `in` dims),
/// timed once per process for these kernel ids and dims and remembered; the
/// timings go to the debug log under `label`. One candidate is returned as is.
[[nodiscard]] Result<OpPlan> fastest(const std::string& label, const std::vector<dims_t>& in,
                                     std::vector<OpPlan> cands, int math_mode, const Cudnn* dnn);

}  // namespace hone::cuda
