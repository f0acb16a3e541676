// Private to the cuda backend: what its Resize kernel (kernels/tensor_ops.cu,
// hone_resize) is launched with, worked out on the host when a plan is built
// from the node's attributes (ops/attrs.h) and its known scales or sizes.
// The kernel maps each output index to input taps per axis exactly as the
// reference does (eval/ops_nn_resize.cpp), in double.
//
//   HONE_TRY(ResizeGeometry r, resize_geometry(node, opset, x_dims, scales, sizes));
//   // x as [r.outer, r.h, r.w] -> y [r.outer, r.oh, r.ow]; y's dims are r.out
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/tensor.h"

namespace hone::cuda {

struct ResizeGeometry {
  std::vector<int64_t> out;  ///< the output's dims
  /// The input as [outer, h, w] and the output as [outer, oh, ow]: only the
  /// last two axes are resized (the others keep their size at scale 1).
  int64_t outer = 1, h = 1, w = 1, oh = 1, ow = 1;
  double scale_h = 1.0, scale_w = 1.0;  ///< as the reference maps coordinates with
  int mode = 0;                         ///< 0 nearest, 1 linear, 2 cubic
  int transform = 0;  ///< 0 half_pixel, 1 asymmetric, 2 pytorch_half_pixel, 3 align_corners,
                      ///< 4 tf_half_pixel_for_nn, 5 half_pixel_symmetric
  /// 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil, 4 Resize-10's
  /// (floor when upsampling, ceil when downsampling).
  int nearest = 0;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

/// The attribute part: kUnsupported for what the kernel does not do
/// (tf_crop_and_resize, antialias), kInvalidArgument for invalid values.
[[nodiscard]] Result<ResizeGeometry> resize_modes(const Node& n, int64_t opset);

/// The whole geometry for input dims `x` and the node's `scales` (f32) or
/// `sizes` (i64) input, either may be null or empty; kUnsupported when an
/// axis other than the last two changes or the input's rank is below 2.
[[nodiscard]] Result<ResizeGeometry> resize_geometry(const Node& n, int64_t opset,
                                                     const std::vector<int64_t>& x,
                                                     const Tensor* scales, const Tensor* sizes);

}  // namespace hone::cuda
