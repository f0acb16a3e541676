// Where ONNX Resize samples its input, written once: per resized axis, for
// every output index, the input indices it reads and their weights (one tap
// for nearest, two for linear, four for cubic, more for antialiased
// downsampling), from the coordinate transformation, the nearest rounding
// and the filter. The reference kernel and onednn's own resize step (for the
// mappings oneDNN's resampling does not have) take them from here.
//
//   ops::ResizeFilter f;  f.mode = ops::ResizeMode::kLinear;  f.transform = "align_corners";
//   HONE_TRY(ops::AxisTaps a, ops::resize_axis_taps(f, 4, 8, 2.0, 0.0, 1.0));
//   // output o reads a.taps[a.begin[o]] .. a.taps[a.begin[o + 1] - 1]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hone/error.h"

namespace hone::ops {

enum class ResizeMode { kNearest, kLinear, kCubic };

/// How one axis is sampled (ops::resize_attrs gives the attribute values).
struct ResizeFilter {
  ResizeMode mode = ResizeMode::kNearest;
  std::string transform = "half_pixel", nearest_mode = "round_prefer_floor";
  /// Resize-10 / Upsample: floor when upsampling, ceil when downsampling.
  bool opset10_nearest = false;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;  ///< linear and cubic only
};

struct ResizeTap {
  int64_t index;
  double weight;
};

/// The taps of one axis: taps[begin[o] .. begin[o+1]) for output index o;
/// outside[o] is set for tf_crop_and_resize coordinates past the input (the
/// output there is the extrapolation value). `identity`: every output reads
/// its own index with weight 1.
struct AxisTaps {
  std::vector<ResizeTap> taps;
  std::vector<int64_t> begin{0};
  std::vector<char> outside;
  bool identity = true;
};

/// The taps of an axis of `in` elements resized to `out` at `scale` (the
/// scale given or out/in from sizes); `roi_start`/`roi_end` are read by
/// tf_crop_and_resize only. Invalid argument for a coordinate transformation
/// that is not ONNX's.
[[nodiscard]] Result<AxisTaps> resize_axis_taps(const ResizeFilter& f, int64_t in, int64_t out,
                                                double scale, double roi_start, double roi_end);

}  // namespace hone::ops
