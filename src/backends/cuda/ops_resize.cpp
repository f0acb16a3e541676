// The cuda backend's Resize: nearest (every nearest_mode, Resize-10's
// rounding too), linear and cubic, under every coordinate transformation but
// tf_crop_and_resize, over the last two axes. The geometry is worked out
// here when a plan is built; hone_resize (kernels/tensor_ops.cu) maps each
// output index to its taps per axis as the reference does, in double.
#include <cmath>

#include "backends/cuda/op.h"
#include "backends/cuda/resize_geometry.h"
#include "ops/attrs.h"
#include "ops/axis.h"

namespace hone::cuda {

Result<ResizeGeometry> resize_modes(const Node& n, int64_t opset) {
  HONE_TRY(const ops::ResizeAttrs a, ops::resize_attrs(n, opset));
  ResizeGeometry r;
  if (a.mode == "nearest")
    r.mode = 0;
  else if (a.mode == "linear" || a.mode == "bilinear" || a.mode == "trilinear")
    r.mode = 1;
  else if (a.mode == "cubic" || a.mode == "bicubic")
    r.mode = 2;
  else
    return fail(ErrorCode::kInvalidArgument,
                "Resize mode '" + a.mode + "' is not nearest, linear or cubic");
  static const char* const kTransforms[] = {"half_pixel",           "asymmetric",
                                            "pytorch_half_pixel",   "align_corners",
                                            "tf_half_pixel_for_nn", "half_pixel_symmetric"};
  const std::string& t = a.coordinate_transformation_mode;
  r.transform = -1;
  for (int i = 0; i < 6; ++i)
    if (t == kTransforms[i]) r.transform = i;
  if (t == "tf_crop_and_resize")
    return fail(ErrorCode::kUnsupported,
                "Resize coordinate_transformation_mode "
                "'tf_crop_and_resize' (cuda resizes without a roi)");
  if (r.transform < 0)
    return fail(ErrorCode::kInvalidArgument,
                "Resize coordinate_transformation_mode '" + t + "' is not valid");
  static const char* const kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                         "ceil"};
  r.nearest = -1;
  for (int i = 0; i < 4; ++i)
    if (a.nearest_mode == kNearest[i]) r.nearest = i;
  if (r.nearest < 0)
    return fail(ErrorCode::kInvalidArgument,
                "Resize nearest_mode '" + a.nearest_mode + "' is not valid");
  if (opset < 11) r.nearest = 4;
  if (a.antialias && r.mode != 0)
    return fail(ErrorCode::kUnsupported, "Resize with antialias (cuda filters without it)");
  r.cubic_a = a.cubic_coeff_a;
  r.exclude_outside = a.exclude_outside;
  return r;
}

Result<ResizeGeometry> resize_geometry(const Node& n, int64_t opset, const std::vector<int64_t>& x,
                                       const Tensor* scales, const Tensor* sizes) {
  HONE_TRY(ResizeGeometry r, resize_modes(n, opset));
  HONE_TRY(const ops::ResizeAttrs a, ops::resize_attrs(n, opset));
  const auto rank = static_cast<int64_t>(x.size());
  if (rank < 2)
    return fail(ErrorCode::kUnsupported,
                "Resize of rank " + std::to_string(rank) + " (cuda resizes the last two axes)");
  std::vector<int64_t> axes;
  for (int64_t ax : a.axes) {
    HONE_TRY(const int64_t d, ops::normalize_axis(ax, rank, "Resize axes"));
    axes.push_back(d);
  }
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  if (scales && scales->numel() == 0) scales = nullptr;
  if (sizes && sizes->numel() == 0) sizes = nullptr;
  if ((scales == nullptr) == (sizes == nullptr))
    return fail(ErrorCode::kInvalidArgument, "Resize needs exactly one of 'scales' and 'sizes'");
  const Tensor& given = scales ? *scales : *sizes;
  if (given.numel() != static_cast<int64_t>(axes.size()))
    return fail(ErrorCode::kInvalidArgument,
                "Resize " + std::string(scales ? "scales" : "sizes") + " has " +
                    std::to_string(given.numel()) + " values, expected " +
                    std::to_string(axes.size()) + " (one per resized axis of " +
                    shape_to_string(x) + ")");
  if (sizes && a.keep_aspect_ratio_policy != "stretch")
    return fail(ErrorCode::kUnsupported, "Resize keep_aspect_ratio_policy '" +
                                             a.keep_aspect_ratio_policy +
                                             "' (cuda resizes with 'stretch')");
  std::vector<double> scale(x.size(), 1.0);
  r.out = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto d = static_cast<size_t>(axes[i]);
    const double v = tensor_element_as_double(given, static_cast<int64_t>(i));
    if (scales) {
      if (!(v > 0.0))
        return fail(ErrorCode::kInvalidArgument, "Resize scale " + std::to_string(v) +
                                                     " for axis " + std::to_string(d) +
                                                     " must be positive");
      scale[d] = v;
      r.out[d] = static_cast<int64_t>(std::floor(static_cast<double>(x[d]) * v));
    } else {
      if (v < 0) return fail(ErrorCode::kInvalidArgument, "Resize sizes must be non-negative");
      r.out[d] = static_cast<int64_t>(v);
      scale[d] = x[d] > 0 ? v / static_cast<double>(x[d]) : 1.0;
    }
  }
  for (size_t d = 0; d + 2 < x.size(); ++d) {
    if (r.out[d] != x[d] || scale[d] != 1.0)
      return fail(ErrorCode::kUnsupported,
                  "Resize of axis " + std::to_string(d) + " (" + shape_to_string(x) + " -> " +
                      shape_to_string(r.out) + "); cuda resizes the last two axes");
    r.outer *= x[d];
  }
  const size_t hd = x.size() - 2, wd = x.size() - 1;
  r.h = x[hd];
  r.w = x[wd];
  r.oh = r.out[hd];
  r.ow = r.out[wd];
  r.scale_h = scale[hd];
  r.scale_w = scale[wd];
  return r;
}

namespace {

/// Input `i` of `n` when it is given and known (a constant or host value).
const Tensor* known_input(const Node& n, size_t i, const PlanEnv& env) {
  return i < n.inputs.size() && n.inputs[i] >= 0 ? env.value(n.inputs[i]) : nullptr;
}

Result<OpPlan> plan_resize(const Node& n, int64_t opset, const std::vector<dims_t>& in,
                           const PlanEnv& env) {
  const Tensor* scales = known_input(n, opset < 11 ? 1 : 2, env);
  const Tensor* sizes = opset < 11 ? nullptr : known_input(n, 3, env);
  HONE_TRY(const ResizeGeometry r, resize_geometry(n, opset, in[0], scales, sizes));
  if (r.h == 0 || r.w == 0)
    return fail(ErrorCode::kInvalidArgument, "Resize of an empty input " + shape_to_string(in[0]));
  OpPlan p;
  p.outputs = {r.out};
  static const char* const kModes[] = {"nearest", "linear", "cubic"};
  p.kernel = std::string("resize.f32.cuda.") + kModes[r.mode];
  const long long total = r.outer * r.oh * r.ow;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (total == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_resize"));
    CUdeviceptr x = b.in[0], y = b.out[0];
    long long outer = r.outer, h = r.h, w = r.w, oh = r.oh, ow = r.ow;
    double sh = r.scale_h, sw = r.scale_w, a = r.cubic_a;
    int mode = r.mode, t = r.transform, nearest = r.nearest, excl = r.exclude_outside ? 1 : 0;
    return launch_1d(c.d, f, c.stream, total,
                     {&x, &y, &outer, &h, &w, &oh, &ow, &sh, &sw, &mode, &t, &nearest, &a, &excl});
  };
  return p;
}

}  // namespace

Result<Unit> create_resize(const BlockInfo& b, const Node& n) {
  Unit u;
  u.label = n.describe();
  u.inputs = {n.inputs[0]};  // roi, scales and sizes are read when planning
  u.outputs = {n.outputs[0]};
  const Node node = n;
  const int64_t opset = b.g.opset();
  u.op = std::make_unique<FnOp>([node, opset](const std::vector<dims_t>& in, const PlanEnv& env) {
    return plan_resize(node, opset, in, env);
  });
  return u;
}

}  // namespace hone::cuda
