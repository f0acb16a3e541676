// Resize (opsets 10, 11, 13, 18, 19) and the deprecated Upsample (7, 9).
//
// Each resized axis gets a table of taps (ops/resize.h): for every output
// index, the input indices it reads and their weights. Nearest copies
// elements exactly; linear and cubic apply the axes one after another on a
// double buffer (the filters are separable), rounding once at the end.
#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/kernel_util.h"
#include "eval/ops_nn_internal.h"
#include "ops/attrs.h"
#include "ops/resize.h"

namespace hone::eval::nn {
namespace {

using Mode = ops::ResizeMode;
using ops::AxisTaps;

/// What resize() and upsample() run: the sampling of each axis
/// (ops/resize.h) and the value outside tf_crop_and_resize's region.
struct ResizeParams : ops::ResizeFilter {
  double extrapolation = 0.0;
};

template <class T>
T saturate_round(double v) {
  if constexpr (kIsFloat<T>) {
    return from_f64<T>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    if (std::isnan(v)) return T{0};
    const double r = std::nearbyint(v);
    if (r <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  }
}

/// Runs the resize once the output dims and per-axis scales are known.
Result<void> run_resize(KernelContext& ctx, const Tensor& x, const ResizeParams& p,
                        const std::vector<int64_t>& out_shape, const HostVector<double>& scales,
                        const HostVector<double>& roi) {
  const size_t rank = x.rank();
  HONE_TRY(Tensor y, Tensor::allocate(x.dtype(), out_shape));
  if (y.numel() == 0) {
    ctx.set_output(0, std::move(y));
    return {};
  }
  if (x.numel() == 0)
    return fail(ErrorCode::kInvalidArgument, "Resize cannot fill output " + y.describe() +
                                                 " from an empty input " + x.describe());
  std::vector<AxisTaps> axes;
  for (size_t d = 0; d < rank; ++d) {
    const double rs = roi.empty() ? 0.0 : roi[d], re = roi.empty() ? 1.0 : roi[d + rank];
    HONE_TRY(AxisTaps a, ops::resize_axis_taps(p, x.dim(d), out_shape[d], scales[d], rs, re));
    axes.push_back(std::move(a));
  }
  const std::vector<int64_t> in_stride = strides_of(x.shape());
  if (p.mode == Mode::kNearest) {
    // Exact element copies (any dtype); -1 marks an extrapolated position.
    return dispatch_all(x.dtype(), [&]<class T>() -> Result<void> {
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      const T extra = saturate_round<T>(p.extrapolation);
      std::vector<int64_t> o(rank, 0);
      for (int64_t flat = 0; flat < y.numel(); ++flat) {
        int64_t src = 0;
        bool out = false;
        for (size_t d = 0; d < rank; ++d) {
          const AxisTaps& a = axes[d];
          if (a.outside[o[d]]) {
            out = true;
            break;
          }
          src += a.taps[a.begin[o[d]]].index * in_stride[d];
        }
        yp[flat] = out ? extra : xp[src];
        for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
          if (++o[d] < out_shape[d]) break;
          o[d] = 0;
        }
      }
      ctx.set_output(0, std::move(y));
      return {};
    });
  }
  HostVector<double> cur = to_doubles(x), next;
  std::vector<int64_t> shape = x.shape();
  for (size_t d = 0; d < rank; ++d) {
    const AxisTaps& a = axes[d];
    if (a.identity) continue;
    const int64_t outer = product(std::vector<int64_t>(shape.begin(), shape.begin() + d));
    const int64_t inner = product(shape, d + 1);
    const int64_t in_d = shape[d], out_d = out_shape[d];
    next.assign(static_cast<size_t>(outer * out_d * inner), 0.0);
    ctx.pool().parallel_for(outer, [&](int64_t b, int64_t e) {
      for (int64_t ou = b; ou < e; ++ou)
        for (int64_t o = 0; o < out_d; ++o) {
          double* dst = next.data() + (ou * out_d + o) * inner;
          if (a.outside[o]) {
            std::fill(dst, dst + inner, p.extrapolation);
            continue;
          }
          for (int64_t t = a.begin[o]; t < a.begin[o + 1]; ++t) {
            const double w = a.taps[t].weight;
            const double* src = cur.data() + (ou * in_d + a.taps[t].index) * inner;
            for (int64_t i = 0; i < inner; ++i) dst[i] += w * src[i];
          }
        }
    });
    cur.swap(next);
    shape[d] = out_d;
  }
  HONE_CHECK_OK(dispatch_numeric(x.dtype(), [&]<class T>() -> Result<void> {
    T* yp = y.data<T>();
    for (int64_t i = 0; i < y.numel(); ++i) yp[i] = saturate_round<T>(cur[i]);
    return {};
  }));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<Mode> parse_mode(const std::string& m, const std::string& op) {
  if (m == "nearest") return Mode::kNearest;
  if (m == "linear" || m == "bilinear" || m == "trilinear") return Mode::kLinear;
  if (m == "cubic" || m == "bicubic") return Mode::kCubic;
  return fail(ErrorCode::kInvalidArgument,
              op + " mode '" + m + "' is not nearest, linear or cubic");
}

/// Output dims from per-axis scales: floor(in * scale).
Result<std::vector<int64_t>> dims_from_scales(const Tensor& x, const HostVector<double>& scales,
                                              const std::string& op) {
  std::vector<int64_t> out(x.rank());
  for (size_t d = 0; d < x.rank(); ++d) {
    if (!(scales[d] > 0.0))
      return fail(ErrorCode::kInvalidArgument, op + " scale " + std::to_string(scales[d]) +
                                                   " for axis " + std::to_string(d) +
                                                   " must be positive");
    out[d] = static_cast<int64_t>(std::floor(static_cast<double>(x.dim(d)) * scales[d]));
  }
  return out;
}

Result<void> resize(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& node = ctx.node();
  const int64_t opset = ctx.opset();
  const size_t rank = x->rank();
  ResizeParams p;
  HONE_TRY(const ops::ResizeAttrs ra, ops::resize_attrs(node, opset));
  HONE_TRY(p.mode, parse_mode(ra.mode, "Resize"));
  p.transform = ra.coordinate_transformation_mode;
  p.nearest_mode = ra.nearest_mode;
  p.opset10_nearest = opset < 11;
  p.cubic_a = ra.cubic_coeff_a;
  p.exclude_outside = ra.exclude_outside;
  p.extrapolation = ra.extrapolation_value;
  p.antialias = ra.antialias && p.mode != Mode::kNearest;
  const std::string& policy = ra.keep_aspect_ratio_policy;
  const std::vector<std::string> nearest_modes{"round_prefer_floor", "round_prefer_ceil", "floor",
                                               "ceil"};
  if (std::find(nearest_modes.begin(), nearest_modes.end(), p.nearest_mode) == nearest_modes.end())
    return fail(ErrorCode::kInvalidArgument,
                "Resize nearest_mode '" + p.nearest_mode + "' is not valid");
  // Which axes the scales/sizes/roi inputs talk about (opset 18 'axes').
  std::vector<int64_t> axes;
  for (int64_t a : ra.axes) {
    HONE_TRY(const int64_t ax, normalize_axis(a, static_cast<int64_t>(rank), "Resize axes"));
    axes.push_back(ax);
  }
  if (axes.empty())
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  const size_t scales_at = opset < 11 ? 1 : 2;
  HostVector<double> scale_list;
  std::vector<int64_t> size_list;
  if (ctx.has_input(scales_at) && ctx.input(scales_at).numel() > 0)
    scale_list = to_doubles(ctx.input(scales_at));
  if (opset >= 11 && ctx.has_input(3) && ctx.input(3).numel() > 0) {
    HONE_TRY(size_list, read_int_list(ctx.input(3), "Resize sizes"));
  }
  if (scale_list.empty() == size_list.empty())
    return fail(ErrorCode::kInvalidArgument, "Resize needs exactly one of 'scales' and 'sizes'");
  const size_t given = scale_list.empty() ? size_list.size() : scale_list.size();
  if (given != axes.size())
    return fail(ErrorCode::kInvalidArgument,
                "Resize " + std::string(scale_list.empty() ? "sizes" : "scales") + " has " +
                    std::to_string(given) + " values, expected " + std::to_string(axes.size()) +
                    " (one per resized axis of " + x->describe() + ")");
  HostVector<double> scales(rank, 1.0);
  std::vector<int64_t> out_shape = x->shape();
  if (!scale_list.empty()) {
    for (size_t i = 0; i < axes.size(); ++i) scales[axes[i]] = scale_list[i];
    HONE_TRY(out_shape, dims_from_scales(*x, scales, "Resize"));
  } else {
    for (int64_t s : size_list)
      if (s < 0)
        return fail(ErrorCode::kInvalidArgument,
                    "Resize sizes " + list_to_string(size_list) + " must be non-negative");
    if (policy == "not_larger" || policy == "not_smaller") {
      double common = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
      for (size_t i = 0; i < axes.size(); ++i) {
        const double s = static_cast<double>(size_list[i]) / static_cast<double>(x->dim(axes[i]));
        common = policy == "not_larger" ? std::min(common, s) : std::max(common, s);
      }
      for (int64_t a : axes) {
        scales[a] = common;
        out_shape[a] = static_cast<int64_t>(std::round(common * static_cast<double>(x->dim(a))));
      }
    } else if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        out_shape[axes[i]] = size_list[i];
        const int64_t in = x->dim(axes[i]);
        scales[axes[i]] =
            in > 0 ? static_cast<double>(size_list[i]) / static_cast<double>(in) : 1.0;
      }
    } else {
      return fail(ErrorCode::kInvalidArgument,
                  "Resize keep_aspect_ratio_policy '" + policy + "' is not valid");
    }
  }
  HostVector<double> roi;
  if (p.transform == "tf_crop_and_resize") {
    roi.assign(2 * rank, 0.0);
    for (size_t d = 0; d < rank; ++d) roi[d + rank] = 1.0;
    if (ctx.has_input(1) && ctx.input(1).numel() > 0) {
      const HostVector<double> r = to_doubles(ctx.input(1));
      if (r.size() != 2 * axes.size())
        return fail(ErrorCode::kInvalidArgument, "Resize roi has " + std::to_string(r.size()) +
                                                     " values, expected " +
                                                     std::to_string(2 * axes.size()));
      for (size_t i = 0; i < axes.size(); ++i) {
        roi[axes[i]] = r[i];
        roi[axes[i] + rank] = r[i + axes.size()];
      }
    }
  }
  return run_resize(ctx, *x, p, out_shape, scales, roi);
}

Result<void> upsample(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  ResizeParams p;
  HONE_TRY(const ops::ResizeAttrs ra, ops::resize_attrs(ctx.node(), ctx.opset()));
  HONE_TRY(p.mode, parse_mode(ra.mode, "Upsample"));
  if (p.mode == Mode::kCubic)
    return fail(ErrorCode::kInvalidArgument, "Upsample has no cubic mode");
  p.transform = "asymmetric";
  p.nearest_mode = ra.nearest_mode;
  p.opset10_nearest = true;
  HostVector<double> scales;
  if (ctx.has_input(1)) {
    scales = to_doubles(ctx.input(1));
  } else {
    for (float f : ctx.node().attr_floats("scales")) scales.push_back(f);
  }
  if (scales.size() != x->rank())
    return fail(ErrorCode::kInvalidArgument,
                "Upsample scales has " + std::to_string(scales.size()) +
                    " values, expected one per dim of " + x->describe());
  HONE_TRY(auto out_shape, dims_from_scales(*x, scales, "Upsample"));
  return run_resize(ctx, *x, p, out_shape, scales, {});
}

}  // namespace

void register_resize_ops(OpRegistry& r) {
  r.add("Resize", resize);
  r.add("Upsample", upsample);
}

}  // namespace hone::eval::nn
