// The cuda backend's ConvTranspose, 1-D and 2-D: the window (strides,
// dilations, pads, auto_pad, output_padding, output_shape) is
// ops::make_transpose_window's, as the reference's; the kernel
// (hone_conv_transpose, kernels/tensor_ops.cu) computes each output element
// as a gather over the input rows that land on it, groups included. cuDNN's
// backward-data convolution is not loaded by cudnn_api.h, so this direct
// kernel is the one path (a generator's few layers, not a hot loop).
#include <string>

#include "backends/common/node_query.h"
#include "backends/cuda/op.h"
#include "ops/attrs.h"
#include "ops/window.h"

namespace hone::cuda {
namespace {

using node_query::rank_of;
using node_query::val;

Result<OpPlan> plan_conv_transpose(const Node& n, const std::vector<dims_t>& in, bool bias) {
  const dims_t& x = in[0];
  const dims_t& w = in[1];
  if ((x.size() != 3 && x.size() != 4) || w.size() != x.size())
    return fail(ErrorCode::kUnsupported, "ConvTranspose of input " + shape_to_string(x) +
                                             " and weights " + shape_to_string(w) +
                                             " (cuda runs 1-D and 2-D)");
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(n));
  const int64_t C = x[1], G = ca.group;
  if (G <= 0 || C % G != 0 || w[0] != C)
    return fail(ErrorCode::kInvalidArgument,
                "ConvTranspose weights " + shape_to_string(w) +
                    " must be [C, M/group, k...] with C = " + std::to_string(C) +
                    " divisible by group " + std::to_string(G));
  const int64_t M = w[1] * G;
  if (bias && numel_of(in[2]) != M)
    return fail(ErrorCode::kInvalidArgument, "ConvTranspose bias " + shape_to_string(in[2]) +
                                                 " for " + std::to_string(M) + " output channels");
  const dims_t sp(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  if (!ca.kernel_shape.empty() && ca.kernel_shape != kernel)
    return fail(ErrorCode::kInvalidArgument,
                "ConvTranspose kernel_shape disagrees with weights " + shape_to_string(w));
  HONE_TRY(const ops::Window win, ops::make_transpose_window(n, sp, kernel));
  // A 1-D transpose is a 2-D one of height 1.
  const bool one = sp.size() == 1;
  const long long H = one ? 1 : sp[0], W = sp.back(), OH = one ? 1 : win.out[0],
                  OW = win.out.back(), KH = one ? 1 : kernel[0], KW = kernel.back(),
                  sh = one ? 1 : win.strides[0], sw = win.strides.back(),
                  dh = one ? 1 : win.dilations[0], dw = win.dilations.back(),
                  ph = one ? 0 : win.pad_begin[0], pw = win.pad_begin.back();
  dims_t out = {x[0], M};
  out.insert(out.end(), win.out.begin(), win.out.end());
  OpPlan p;
  p.outputs = {out};
  p.kernel = std::string("conv_transpose") + (one ? "1d" : "2d") + ".f32.cuda.gather";
  const long long N = x[0], CC = C, MM = M, GG = G;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    const long long total = N * MM * OH * OW;
    if (total == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_conv_transpose"));
    CUdeviceptr xi = b.in[0], wi = b.in[1], bi = bias ? b.in[2] : 0, y = b.out[0];
    long long a[] = {N, CC, MM, GG, H, W, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw};
    return launch_1d(c.d, f, c.stream, total,
                     {&xi,   &wi,   &bi,   &y,    &a[0],  &a[1],  &a[2],  &a[3],  &a[4],  &a[5],
                      &a[6], &a[7], &a[8], &a[9], &a[10], &a[11], &a[12], &a[13], &a[14], &a[15]});
  };
  return p;
}

}  // namespace

std::string conv_transpose_why_not(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return "needs X and W";
  for (size_t i = 0; i < n.inputs.size() && i < 3; ++i)
    if (const Value* v = val(g, n, i);
        v != nullptr && v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
      return "input " + std::to_string(i) + " is " + std::string(dtype_name(v->dtype)) +
             "; cuda runs f32 only";
  if (node_query::extra_outputs_used(n)) return "more than one output";
  const int64_t r = rank_of(val(g, n, 1)) >= 0 ? rank_of(val(g, n, 1)) : rank_of(val(g, n, 0));
  if (r >= 0 && r != 3 && r != 4)
    return "rank " + std::to_string(r) + " (cuda runs 1-D and 2-D ConvTranspose)";
  const Result<ops::ConvAttrs> a = ops::conv_attrs(n);
  return a ? "" : a.error().message();
}

Result<Unit> create_conv_transpose(const BlockInfo& b, const Node& n) {
  (void)b;
  Unit u;
  u.label = n.describe();
  const bool bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  u.inputs = {n.inputs[0], n.inputs[1]};
  if (bias) u.inputs.push_back(n.inputs[2]);
  u.outputs = {n.outputs[0]};
  const Node node = n;
  u.op = std::make_unique<FnOp>([node, bias](const std::vector<dims_t>& in, const PlanEnv&) {
    return plan_conv_transpose(node, in, bias);
  });
  return u;
}

}  // namespace hone::cuda
