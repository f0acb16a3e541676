// Private to the aot backend: the channels-last (NHWC) layout of conv nets.
// choose_layouts() marks the steps that read and write their 4-D activations
// as NHWC: convs (run by oneDNN's convolution primitive, which is about 3x
// faster on NHWC than on NCHW here), pools and element-wise chains between
// them. A value is stored NHWC only when every reader understands it; any
// other reader (Flatten, Gemm, a graph output, ...) keeps the producer on the
// NCHW path, except where both layouts are the same bytes (C = 1 or H = W = 1,
// e.g. after GlobalAveragePool). A conv reading an NCHW value (a graph input)
// converts it into its scratch first.
//
//   lower(): place_values(); choose_layouts(p); plan_arena();
//   emit:    if (step.nhwc) emit_anchor_nhwc(...); chain loops use nhwc_dims()
//   plan:    "Conv+Relu [conv.f32.aot.dnnl_nhwc+post_ops]"
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/aot/program.h"

namespace hone::aot {

/// Sets Step::nhwc, ValueInfo::nhwc, Step::post_ops and the scratch of
/// channels-last convs (the NCHW-to-NHWC copy of their input, if needed).
void choose_layouts(Program& p);

/// `d` right-aligned to rank 4 and permuted to N, H, W, C: the dims an
/// element-wise loop walks over an NHWC step (per-channel operands then
/// broadcast along the innermost index).
DimExprs nhwc_dims(const DimExprs& d);

/// Whether NCHW and NHWC storage of dims `d` are the same bytes.
bool same_bytes_either_layout(const DimExprs& d);

/// One oneDNN post-op of a channels-last conv: an eltwise op on the running
/// value, or the addition of another NHWC tensor of the conv's output dims.
struct PostOp {
  std::string alg;  // "dnnl_eltwise_relu", ..., or "dnnl_binary_add"
  float alpha = 0.0f, beta = 0.0f;
  ValueId src1 = kNoValue;  // the addend of a binary post-op
};

/// The post-ops that compute the whole chain of conv step `s`, or nothing
/// when some member has no post-op form (the chain then runs as a loop).
std::optional<std::vector<PostOp>> conv_post_ops(const Program& p, const Step& s);

/// The kernel name of a channels-last step, or nothing for other steps.
std::optional<std::string> describe_nhwc(const Program& p, const Step& s);

}  // namespace hone::aot
