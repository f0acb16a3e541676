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
// Blocked (nChw16c, [N][C/16][H][W][16]) instead of NHWC, program-wide
// (Program::blocked), when the region has a depthwise conv and every 4-D value
// it walks has C % 16 == 0 (C = 1 operands broadcast and stay NCHW). Why:
// oneDNN 2.6 runs depthwise convs on NHWC as brdgmm_dw, whose C++ driver takes
// ~41% of its time; on nChw16c as jit_dw. Measured standalone, batch 8,
// 1 thread, us (NHWC / nChw16c): dw 16ch 3x3 16x16 12 / 6.5, dw 64ch 3x3 8x8
// 8.2 / 5.5, 1x1 16->32 16x16 10 / 9.5, 1x1 64->64 8x8 17.5 / 18.2, but dense
// 3x3 16->16 32x32 190 / 213: nets without depthwise convs (resnet) stay NHWC.
// Blocked convs read an NCHW image of < 16 channels directly (dst nChw16c, no
// reorder); other NCHW inputs get a copy into nChw16c scratch. models/mobilenet
// at batch 8, 1 thread, p50 ms (aot NHWC / aot blocked / onednn, same
// minute): 0.104 / 0.081 / 0.082.
//
//   lower(): place_values(); choose_layouts(p); plan_arena();
//   emit:    if (step.nhwc) emit_anchor_nhwc(...); chain loops use nhwc_dims()
//   plan:    "Conv+Relu [conv.f32.aot.dnnl_nhwc+post_ops]", "... [conv.f32.aot.dnnl_nChw16c]"
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

/// `d` right-aligned to rank 4 as N, C/16, H, W, 16 (a C of 1 stays 1, 1):
/// the dims an element-wise loop walks over a blocked step.
DimExprs blocked_dims(const DimExprs& d);

/// Whether the blocked rule above holds (after the NHWC decisions are made).
bool blocked_fits(const Program& p);

/// Whether `v`, as stored, reads as nChw16c of its own dims.
bool reads_blocked(const Program& p, ValueId v);

/// Sets the scratch and nchw_src_blocked of a conv step in a blocked program.
void set_blocked_conv(Program& p, Step& s);

/// The kernel name of a step in a blocked program's channels-last region.
std::string describe_blocked(const Program& p, const Step& s);

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
