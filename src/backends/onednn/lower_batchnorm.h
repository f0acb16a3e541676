// Private to the onednn backend: inference BatchNormalization
// (lower_batchnorm.cpp), oneDNN's batch normalization where it has a jit
// kernel for the input's layout, else a per-channel multiply-add.
//
//   if (op == "BatchNormalization") return lower_batchnorm(b, n);   // lower_simple.cpp
#pragma once

#include "backends/onednn/plan.h"

namespace hone::onednn {

/// BatchNormalization of `n` with constant scale, bias, mean and variance of
/// C elements, and the Relu that alone reads its result; kUnsupported
/// otherwise.
[[nodiscard]] Result<void> lower_batchnorm(PlanBuilder& b, const Node& n);

}  // namespace hone::onednn
