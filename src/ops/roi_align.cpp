// ONNX RoiAlign's attributes and sampling points (ops/roi_align.h).
#include "ops/roi_align.h"

namespace hone::ops {

Result<RoiAlignAttrs> roi_align_attrs(const Node& n, int64_t opset) {
  RoiAlignAttrs a;
  const std::string mode = n.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max")
    return fail(ErrorCode::kInvalidArgument, "RoiAlign mode '" + mode + "' is not avg or max");
  a.max_mode = mode == "max";
  const std::string ctm = n.attr_string("coordinate_transformation_mode",
                                        opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return fail(ErrorCode::kInvalidArgument,
                "RoiAlign coordinate_transformation_mode '" + ctm + "' is not valid");
  a.half_pixel = ctm == "half_pixel";
  a.out_h = n.attr_int("output_height", 1);
  a.out_w = n.attr_int("output_width", 1);
  a.sampling = n.attr_int("sampling_ratio", 0);
  a.spatial_scale = n.attr_float("spatial_scale", 1.0f);
  if (a.out_h <= 0 || a.out_w <= 0 || a.sampling < 0)
    return fail(ErrorCode::kInvalidArgument,
                "RoiAlign output_height/output_width must be positive and sampling_ratio "
                "non-negative");
  return a;
}

}  // namespace hone::ops
