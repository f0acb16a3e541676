// The cuda backend's standalone BatchNormalization (inference: one pass,
// y = (x - mean[c]) · scale[c] / sqrt(var[c] + eps) + B[c], the statistics
// read from device constants) and Pad: constant mode fills the output with
// the value, then copies the input into its window by the strided copy
// (negative pads crop); reflect, edge and wrap read each output element's
// source as ops::pad_source_offsets defines it (kernels/index_ops.cu). A BatchNormalization after a
// Conv or Gemm never gets here: passes/batch_norm.cpp folds it into the weights.
#include <algorithm>

#include "backends/cuda/op.h"
#include "ops/attrs.h"
#include "ops/pad.h"

namespace hone::cuda {
namespace {

Result<OpPlan> plan_batchnorm(const Node& n, const std::vector<dims_t>& in) {
  HONE_TRY(const ops::BatchNormAttrs a, ops::batch_norm_attrs(n));
  if (a.training_mode) return fail(ErrorCode::kUnsupported, "BatchNormalization in training mode");
  const dims_t& x = in[0];
  if (x.size() < 2)
    return fail(ErrorCode::kInvalidArgument,
                "BatchNormalization input of rank " + std::to_string(x.size()) + " (needs N, C)");
  const int64_t channels = x[1];
  for (size_t i = 1; i < 5; ++i)
    if (numel_of(in[i]) != channels)
      return fail(ErrorCode::kInvalidArgument, "BatchNormalization input " + std::to_string(i) +
                                                   " has " + std::to_string(numel_of(in[i])) +
                                                   " values for " + std::to_string(channels) +
                                                   " channels");
  int64_t inner = 1;
  for (size_t d = 2; d < x.size(); ++d) inner *= x[d];
  OpPlan p;
  p.outputs = {x};
  p.kernel = "batchnorm.f32.cuda.affine";
  const long long count = numel_of(x), in_c = inner;
  const int ch = static_cast<int>(channels);
  const float eps = a.epsilon;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    HONE_TRY(CUfunction f, c.fixed.function("hone_batchnorm"));
    CUdeviceptr xi = b.in[0], s = b.in[1], bi = b.in[2], m = b.in[3], v = b.in[4], y = b.out[0];
    long long n_ = count, inner_ = in_c;
    int ch_ = ch;
    float e = eps;
    return launch_1d(c.d, f, c.stream, count, {&xi, &s, &bi, &m, &v, &y, &n_, &inner_, &ch_, &e});
  };
  return p;
}

/// The constant fill value of Pad `n`: its constant_value input (opset 11+)
/// or its value attribute; 0 when neither is given.
Result<float> pad_value(const Node& n, int opset, const ops::PadAttrs& a, const PlanEnv& env) {
  if (opset < 11) return a.value;
  if (n.inputs.size() < 3 || n.inputs[2] < 0) return 0.0f;
  const Tensor* t = env.value(n.inputs[2]);
  if (t == nullptr || t->numel() > 1)
    return fail(ErrorCode::kUnsupported, "Pad constant_value is not one known value");
  return t->numel() == 0 ? 0.0f : static_cast<float>(tensor_element_as_double(*t, 0));
}

/// Pad in reflect, edge or wrap mode: one kernel reading, for each output
/// element, the input element ops::pad_source_offsets names (the same fold
/// of each axis, computed on the device: hone_pad_modes).
Result<OpPlan> plan_pad_modes(const std::string& mode, const dims_t& x, const ops::PadWindow& w) {
  // The reference's checks (an empty axis padded, an unknown mode) come from
  // the one place that defines where Pad reads.
  HONE_TRY(const auto offsets, ops::pad_source_offsets(x, w, mode));
  (void)offsets;
  if (x.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported,
                "Pad of rank " + std::to_string(x.size()) + " (cuda pads up to 6 dims)");
  PadShape s;
  s.rank = static_cast<int32_t>(x.size());
  s.mode = mode == "reflect" ? 1 : mode == "edge" ? 2 : 3;
  const dims_t xs = strides_of(x);
  int64_t base = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    s.out[d] = w.out[d];
    s.begin[d] = std::max<int64_t>(0, w.begin[d]);
    s.len[d] = w.kept[d];
    s.stride[d] = xs[d];
    base += w.kept_from[d] * xs[d];
  }
  OpPlan p;
  p.outputs = {w.out};
  p.kernel = "pad.f32.cuda." + mode;
  const long long total = numel_of(w.out);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (total == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_pad_modes"));
    CUdeviceptr xi = b.in[0] + static_cast<CUdeviceptr>(base) * sizeof(float), y = b.out[0];
    PadShape sh = s;
    long long n_ = total;
    int bytes = static_cast<int>(sizeof(float));
    return launch_1d(c.d, f, c.stream, total, {&xi, &y, &sh, &n_, &bytes});
  };
  return p;
}

Result<OpPlan> plan_pad(const Node& n, int opset, const std::vector<dims_t>& in,
                        const PlanEnv& env) {
  HONE_TRY(const ops::PadAttrs a, ops::pad_attrs(n));
  const dims_t& x = in[0];
  std::vector<int64_t> pads = a.pads, axes;
  bool has_axes = false;
  if (opset >= 11) {
    HONE_TRY(pads, host_eval::ints(n, 1, env, "Pad pads"));
    if (n.inputs.size() > 3 && n.inputs[3] >= 0) {
      HONE_TRY(axes, host_eval::ints(n, 3, env, "Pad axes"));
      has_axes = true;
    }
  }
  HONE_TRY(const ops::PadWindow w, ops::pad_window(x, pads, has_axes ? &axes : nullptr));
  if (a.mode != "constant") return plan_pad_modes(a.mode, x, w);
  HONE_TRY(const float value, pad_value(n, opset, a, env));
  // The output; the window of it the input fills (after crops) and where the
  // input's part starts on each side.
  const dims_t& out = w.out;
  const dims_t& window = w.kept;
  int64_t src_off = 0, dst_off = 0;
  const dims_t xs = strides_of(x);
  const dims_t ys = strides_of(out);
  for (size_t d = 0; d < x.size(); ++d) {
    src_off += w.kept_from[d] * xs[d];
    dst_off += std::max<int64_t>(0, w.begin[d]) * ys[d];
  }
  const bool padded = out != window;  // some output element is not the input's
  OpPlan p;
  p.outputs = {out};
  p.kernel = padded ? "pad.f32.cuda.fill+strided_copy" : "pad.f32.cuda.strided_copy";
  const long long total = numel_of(out);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    CUdeviceptr y = b.out[0];
    if (padded) {
      HONE_TRY(CUfunction f, c.fixed.function("hone_fill"));
      long long n_ = total;
      float v = value;
      HONE_CHECK_OK(launch_1d(c.d, f, c.stream, total, {&y, &v, &n_}));
    }
    if (numel_of(window) == 0) return {};
    return strided_copy(c, b.in[0] + static_cast<CUdeviceptr>(src_off) * sizeof(float),
                        y + static_cast<CUdeviceptr>(dst_off) * sizeof(float), window, xs, ys);
  };
  return p;
}

}  // namespace

Result<Unit> create_pad_norm(const BlockInfo& b, const Node& n) {
  Unit u;
  u.label = n.describe();
  u.outputs = {n.outputs[0]};
  const Node node = n;  // the planners keep their own copy
  Planner p;
  if (n.op_type == "BatchNormalization") {
    u.inputs = {n.inputs.begin(), n.inputs.begin() + 5};
    p = [node](const std::vector<dims_t>& in, const PlanEnv&) { return plan_batchnorm(node, in); };
  } else if (n.op_type == "Pad") {
    u.inputs = {n.inputs[0]};  // pads, value and axes are read when planning
    const auto opset = static_cast<int>(b.g.opset());
    p = [node, opset](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_pad(node, opset, in, env);
    };
  } else {
    return fail(ErrorCode::kInternal, "cuda: no unit for " + n.describe());
  }
  u.op = std::make_unique<FnOp>(std::move(p));
  return u;
}

}  // namespace hone::cuda
