// ONNX GridSample's sampling (ops/grid_sample.h), in double: its attributes
// here, its taps in grid_sample_taps.h (C, shared with aot's generated code).
#include "ops/grid_sample.h"

#include <string>
#include <utility>

#include "ops/grid_sample_taps.h"

namespace hone::ops {

Result<GridSampleAttrs> grid_sample_attrs(const Node& n, int64_t opset) {
  GridSampleAttrs a;
  std::string mode = n.attr_string("mode", opset >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  if (mode == "linear")
    a.mode = GridMode::kLinear;
  else if (mode == "nearest")
    a.mode = GridMode::kNearest;
  else if (mode == "cubic")
    a.mode = GridMode::kCubic;
  else
    return fail(ErrorCode::kInvalidArgument, "GridSample mode '" + mode + "' is not valid");
  const std::string pad = n.attr_string("padding_mode", "zeros");
  if (pad == "zeros")
    a.padding = GridPadding::kZeros;
  else if (pad == "border")
    a.padding = GridPadding::kBorder;
  else if (pad == "reflection")
    a.padding = GridPadding::kReflection;
  else
    return fail(ErrorCode::kInvalidArgument, "GridSample padding_mode '" + pad + "' is not valid");
  a.align_corners = n.attr_int("align_corners", 0) != 0;
  return a;
}

GridSampler::GridSampler(const GridSampleAttrs& a, std::vector<int64_t> dims)
    : a_(a), dims_(std::move(dims)) {}

// The taps themselves are C (grid_sample_taps.h), shared with aot's code.
static_assert(static_cast<int>(GridMode::kNearest) == HONE_GRID_NEAREST &&
              static_cast<int>(GridMode::kLinear) == HONE_GRID_LINEAR &&
              static_cast<int>(GridMode::kCubic) == HONE_GRID_CUBIC);
static_assert(static_cast<int>(GridPadding::kZeros) == HONE_GRID_ZEROS &&
              static_cast<int>(GridPadding::kBorder) == HONE_GRID_BORDER &&
              static_cast<int>(GridPadding::kReflection) == HONE_GRID_REFLECTION);

void GridSampler::taps(const double* g, std::vector<int64_t>* offsets,
                       std::vector<double>* weights) const {
  size_t most = 1;
  for (size_t d = 0; d < dims_.size(); ++d) most *= 4;
  offsets->resize(most);
  weights->resize(most);
  const int n = hone_grid_taps(g, static_cast<int>(dims_.size()), dims_.data(),
                               static_cast<int>(a_.mode), static_cast<int>(a_.padding),
                               a_.align_corners ? 1 : 0, offsets->data(), weights->data());
  offsets->resize(static_cast<size_t>(n));
  weights->resize(static_cast<size_t>(n));
}

}  // namespace hone::ops
