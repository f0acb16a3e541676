// Resize for the aot backend: which Resize nodes aot claims and their output
// dims (shape_rules.h), and the taps of each resized axis (ops/resize.h, the
// reference's own table) that the generated code reads as static arrays.
#include <cmath>

#include "backends/aot/shape_rules.h"
#include "ops/attrs.h"

namespace hone::aot {
namespace {

struct ResizeSetup {
  ops::ResizeFilter filter;
  std::vector<double> scales;  // per axis
};

Result<ResizeSetup> resize_setup(const Program& p, const Node& n, const DimExprs& x) {
  const int64_t opset = p.graph->opset();
  if (opset < 11) return fail(unsupported("Resize before opset 11"));
  HONE_TRY(const ops::ResizeAttrs ra, ops::resize_attrs(n, opset));
  if (!ra.axes.empty()) return fail(unsupported("Resize with 'axes'"));
  if (ra.keep_aspect_ratio_policy != "stretch")
    return fail(
        unsupported("Resize keep_aspect_ratio_policy '" + ra.keep_aspect_ratio_policy + "'"));
  if (ra.coordinate_transformation_mode == "tf_crop_and_resize")
    return fail(unsupported("Resize tf_crop_and_resize"));
  if (x.size() != 3 && x.size() != 4)
    return fail(unsupported("Resize input " + to_string(x) + ": aot resizes rank 3 and 4"));
  for (size_t d = 2; d < x.size(); ++d)
    if (!x[d].is_const())
      return fail(unsupported("Resize input " + to_string(x) + " needs static spatial dims"));
  ResizeSetup s;
  if (ra.mode == "nearest") {
    s.filter.mode = ops::ResizeMode::kNearest;
  } else if (ra.mode == "linear") {
    s.filter.mode = ops::ResizeMode::kLinear;
  } else if (ra.mode == "cubic") {
    s.filter.mode = ops::ResizeMode::kCubic;
  } else {
    return fail(unsupported("Resize mode '" + ra.mode + "'"));
  }
  s.filter.transform = ra.coordinate_transformation_mode;
  s.filter.nearest_mode = ra.nearest_mode;
  s.filter.cubic_a = ra.cubic_coeff_a;
  s.filter.exclude_outside = ra.exclude_outside;
  s.filter.antialias = ra.antialias && s.filter.mode != ops::ResizeMode::kNearest;
  const ValueInfo* scales = has_input(n, 2) ? &p.values[static_cast<size_t>(n.inputs[2])] : nullptr;
  if (scales && scales->constant && scales->constant->numel() > 0) {
    if (!scales->is_f32() || scales->constant->numel() != static_cast<int64_t>(x.size()))
      return fail(unsupported("Resize scales must be " + std::to_string(x.size()) + " f32 values"));
    for (int64_t i = 0; i < scales->constant->numel(); ++i)
      s.scales.push_back(scales->constant->data<float>()[i]);
  }
  return s;
}

}  // namespace

Result<DimExprs> resize_dims(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  p.operands[id] = {xv};
  HONE_TRY(const ResizeSetup s, resize_setup(p, n, x));
  DimExprs out = x;
  if (!s.scales.empty()) {
    if (s.scales[0] != 1.0 || s.scales[1] != 1.0)
      return fail(unsupported("Resize of the batch or channel axis"));
    for (size_t d = 2; d < x.size(); ++d)
      out[d] = static_cast<int64_t>(std::floor(static_cast<double>(x[d].value()) * s.scales[d]));
  } else {
    // Sizes, constant or computed from dims: the spatial dims shape inference gave.
    const Value& y = p.graph->value(n.outputs[0]);
    if (!y.shape || y.shape->rank() != x.size())
      return fail(unsupported("Resize output has no known rank"));
    for (size_t d = 2; d < x.size(); ++d) {
      const Dim& dd = (*y.shape)[d];
      if (!dd.is_static()) return fail(unsupported("Resize output dims must be static"));
      out[d] = dd.value();
    }
    // N and C keep the input's: the same number, or the same symbol.
    for (size_t d = 0; d < 2; ++d) {
      const Dim& dd = (*y.shape)[d];
      const bool same = dd.is_static()     ? x[d].is_const() && x[d].value() == dd.value()
                        : dd.is_symbolic() ? x[d] == DimExpr::symbol(dd.symbol_name())
                                           : false;
      if (!same) return fail(unsupported("Resize of the batch or channel axis"));
    }
  }
  HONE_CHECK_OK(resize_taps(p, n, x, out));
  return out;
}

Result<std::vector<ops::AxisTaps>> resize_taps(const Program& p, const Node& n, const DimExprs& x,
                                               const DimExprs& out) {
  HONE_TRY(const ResizeSetup s, resize_setup(p, n, x));
  std::vector<ops::AxisTaps> taps;
  for (size_t d = 2; d < x.size(); ++d) {
    const int64_t in = x[d].value(), o = out[d].value();
    const double scale =
        s.scales.empty() ? static_cast<double>(o) / static_cast<double>(in) : s.scales[d];
    HONE_TRY(ops::AxisTaps a, ops::resize_axis_taps(s.filter, in, o, scale, 0.0, 1.0));
    for (char c : a.outside)
      if (c) return fail(unsupported("Resize samples outside its input"));
    taps.push_back(std::move(a));
  }
  return taps;
}

}  // namespace hone::aot
