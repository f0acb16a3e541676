// ONNX Resize's sampling of one axis (ops/resize.h): the coordinate
// transformations, nearest rounding and linear/cubic filters of the ONNX
// specification, in double.
#include "ops/resize.h"

#include <algorithm>
#include <cmath>

namespace hone::ops {
namespace {

Result<double> to_input_coord(const ResizeFilter& p, int64_t o, double scale, int64_t in,
                              int64_t out, double roi_start, double roi_end) {
  const double x = static_cast<double>(o);
  const std::string& t = p.transform;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "asymmetric") return x / scale;
  if (t == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (t == "align_corners")
    return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (t == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
    const double offset = static_cast<double>(in) / 2.0 * (1.0 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (t == "tf_crop_and_resize") {
    const double span = static_cast<double>(in - 1);
    if (out > 1)
      return roi_start * span + x * (roi_end - roi_start) * span / static_cast<double>(out - 1);
    return 0.5 * (roi_start + roi_end) * span;
  }
  return fail(ErrorCode::kInvalidArgument,
              "Resize coordinate_transformation_mode '" + t + "' is not valid");
}

int64_t nearest_index(const ResizeFilter& p, double x, double scale) {
  if (p.opset10_nearest) return static_cast<int64_t>(scale < 1.0 ? std::ceil(x) : std::floor(x));
  const std::string& m = p.nearest_mode;
  if (m == "floor") return static_cast<int64_t>(std::floor(x));
  if (m == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (m == "round_prefer_ceil") return static_cast<int64_t>(std::floor(x + 0.5));
  return static_cast<int64_t>(std::ceil(x - 0.5));  // round_prefer_floor
}

double cubic_weight(double d, double a) {
  d = std::abs(d);
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  return 0.0;
}

/// Adds the taps of the linear (triangle) or cubic filter centred at x (input
/// coordinates). With antialias and scale < 1 the filter is stretched by
/// 1/scale, so it covers more input samples.
void filter_taps(const ResizeFilter& p, double x, int64_t in, double scale, AxisTaps* a) {
  const double fscale = p.antialias ? std::min(scale, 1.0) : 1.0;
  const double support = p.mode == ResizeMode::kLinear ? 1.0 : 2.0;
  const int64_t base = static_cast<int64_t>(std::floor(x));
  const double ratio = x - static_cast<double>(base);
  const int64_t start = static_cast<int64_t>(std::floor(-support / fscale)) + 1;
  const int64_t stop = 2 - start;  // taps base+start .. base+stop-1
  const size_t first = a->taps.size();
  double total = 0.0;
  for (int64_t j = start; j < stop; ++j) {
    const double d = (static_cast<double>(j) - ratio) * fscale;
    double w = p.mode == ResizeMode::kLinear ? std::max(0.0, 1.0 - std::abs(d))
                                             : cubic_weight(d, p.cubic_a);
    int64_t idx = base + j;
    if (idx < 0 || idx >= in) {
      if (p.exclude_outside) w = 0.0;
      idx = std::clamp<int64_t>(idx, 0, in - 1);
    }
    if (w == 0.0) continue;
    total += w;
    a->taps.push_back({idx, w});
  }
  if ((p.exclude_outside || p.antialias) && total != 0.0 && total != 1.0)
    for (size_t i = first; i < a->taps.size(); ++i) a->taps[i].weight /= total;
}

}  // namespace

Result<AxisTaps> resize_axis_taps(const ResizeFilter& p, int64_t in, int64_t out, double scale,
                                  double roi_start, double roi_end) {
  AxisTaps a;
  a.outside.assign(static_cast<size_t>(out), 0);
  a.identity = in == out;
  for (int64_t o = 0; o < out; ++o) {
    HONE_TRY(const double x, to_input_coord(p, o, scale, in, out, roi_start, roi_end));
    if (p.transform == "tf_crop_and_resize" && (x < 0.0 || x > static_cast<double>(in - 1))) {
      a.outside[o] = 1;
      a.identity = false;
    } else if (p.mode == ResizeMode::kNearest) {
      const int64_t i = std::clamp<int64_t>(nearest_index(p, x, scale), 0, in - 1);
      a.taps.push_back({i, 1.0});
    } else {
      filter_taps(p, x, in, scale, &a);
    }
    a.begin.push_back(static_cast<int64_t>(a.taps.size()));
    const int64_t n = a.begin[o + 1] - a.begin[o];
    if (!(n == 1 && a.taps.back().index == o && a.taps.back().weight == 1.0)) a.identity = false;
  }
  return a;
}

}  // namespace hone::ops
