// Private to the onednn backend: a depthwise Conv over three spatial dims as
// hone's own step (own_conv.cpp), a direct loop over channels-last values.
// oneDNN 2.6 has vectorized depthwise kernels only for 1-D and 2-D; a 3-D one
// gets its gemm kernel, an im2col and a one-row gemm per channel: 0.4 to 1.7
// ms each for MViT-V2's Q/K/V pooling convs ([heads, 96..192, 2, 16, 16],
// 3x3x3), a third of the model's time, where the direct loop takes a tenth.
//
//   if (lowers_depthwise_3d(b, n)) return lower_depthwise_3d(b, n);  // lower_misc.cpp
#pragma once

#include "backends/onednn/plan.h"

namespace hone::onednn {

/// Whether the own step takes Conv `n`: an f32 input [N, C, D, H, W], f32
/// constant weights [C, 1, kd, kh, kw] (group C, one output channel per
/// input channel) and an f32 constant bias or none.
bool lowers_depthwise_3d(const PlanBuilder& b, const Node& n);
/// Adds that step: input and output channels-last ([N, D, H, W, C] in
/// memory; a view when the value already lies so, as tokens reshaped and
/// permuted do), weights repacked to [kd, kh, kw, C] now.
[[nodiscard]] Result<void> lower_depthwise_3d(PlanBuilder& b, const Node& n);

}  // namespace hone::onednn
