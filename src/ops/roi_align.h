// Where ONNX RoiAlign samples its input, written once: each roi scaled and
// shifted (half_pixel, or output_half_pixel as torchvision's aligned=False),
// split into output_height x output_width bins, each bin's grid of sampling
// points read bilinearly (points over a pixel outside read nothing, others
// clamp, as ONNX and ONNX Runtime define it), averaged or maxed. The
// reference kernel and onednn's own RoiAlign step (the R-CNN box heads'
// MultiScaleRoIAlign) both call it, in double; its points and weights are C
// (roi_align_points.h), which aot's generated code carries too.
//
//   HONE_TRY(ops::RoiAlignAttrs a, ops::roi_align_attrs(node, opset));
//   HONE_CHECK_OK(ops::check_roi_batches(batch, num, n));
//   ops::roi_align_rois(a, c, h, w, x, rois, batch, y, 0, num);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "ops/roi_align_points.h"

namespace hone::ops {

struct RoiAlignAttrs {
  bool max_mode = false;
  bool half_pixel = true;
  int64_t out_h = 1, out_w = 1, sampling = 0;
  double spatial_scale = 1.0;
};

/// RoiAlign `n`'s attributes at `opset` (coordinate_transformation_mode
/// defaults to half_pixel from opset 16, output_half_pixel before);
/// invalid argument naming a bad mode, transformation or size.
[[nodiscard]] Result<RoiAlignAttrs> roi_align_attrs(const Node& n, int64_t opset);

/// Invalid argument naming the first batch index outside [0, n).
template <class I>
Result<void> check_roi_batches(const I* batch, int64_t num, int64_t n) {
  for (int64_t r = 0; r < num; ++r)
    if (batch[r] < 0 || batch[r] >= n)
      return fail(ErrorCode::kInvalidArgument, "RoiAlign batch index " +
                                                   std::to_string(static_cast<int64_t>(batch[r])) +
                                                   " of roi " + std::to_string(r) +
                                                   " is outside [0, " + std::to_string(n) + ")");
  return {};
}

/// Rois [r0, r1) of x [n, c, h, w] (rois [num, 4] as x0, y0, x1, y1, their
/// batch indices checked) into y [num, c, out_h, out_w].
template <class T, class I>
void roi_align_rois(const RoiAlignAttrs& a, int64_t c, int64_t h, int64_t w, const T* x,
                    const T* rois, const I* batch, T* y, int64_t r0, int64_t r1) {
  const int64_t oh = a.out_h, ow = a.out_w;
  std::vector<hone_roi_point> pts;
  for (int64_t r = r0; r < r1; ++r) {
    const double roi[4] = {static_cast<double>(rois[r * 4]), static_cast<double>(rois[r * 4 + 1]),
                           static_cast<double>(rois[r * 4 + 2]),
                           static_cast<double>(rois[r * 4 + 3])};
    const hone_roi_bins b =
        hone_roi_bins_of(roi, a.spatial_scale, a.half_pixel ? 1 : 0, oh, ow, a.sampling);
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw) {
        pts.clear();
        for (int64_t iy = 0; iy < b.gh; ++iy)
          for (int64_t ix = 0; ix < b.gw; ++ix)
            pts.push_back(hone_roi_sample(&b, ph, pw, iy, ix, h, w));
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* plane = x + (static_cast<int64_t>(batch[r]) * c + ch) * h * w;
          double acc = 0.0;
          bool first = true;
          for (const hone_roi_point& q : pts) {
            const double v = hone_roi_point_value(&q, static_cast<double>(plane[q.y0 * w + q.x0]),
                                                  static_cast<double>(plane[q.y0 * w + q.x1]),
                                                  static_cast<double>(plane[q.y1 * w + q.x0]),
                                                  static_cast<double>(plane[q.y1 * w + q.x1]),
                                                  a.max_mode ? 1 : 0);
            acc = hone_roi_fold(acc, v, first ? 1 : 0, a.max_mode ? 1 : 0);
            first = false;
          }
          y[((r * c + ch) * oh + ph) * ow + pw] = static_cast<T>(a.max_mode ? acc : acc / b.count);
        }
      }
  }
}

}  // namespace hone::ops
