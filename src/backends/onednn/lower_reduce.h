// Private to the onednn backend: the Reduce* family over constant axes
// (lower_reduce.cpp), oneDNN's reduction where it has the algorithm, hone's
// own step in double for the rest.
//
//   if (op.starts_with("Reduce")) return lower_reduce(b, n);   // lower_simple.cpp
#pragma once

#include "backends/onednn/plan.h"

namespace hone::onednn {

/// ReduceSum ... ReduceSumSquare of `n` (axes as an attribute or a constant
/// input, keepdims, noop_with_empty_axes); kUnsupported for non-constant
/// axes or an empty input.
[[nodiscard]] Result<void> lower_reduce(PlanBuilder& b, const Node& n);

}  // namespace hone::onednn
