// Dims of the ops aot runs as strided copies (Slice, Gather by one index,
// Expand, Pad with a constant), and of a Reshape or Expand whose shape is computed from dims.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/aot/dim_traits.h"
#include "backends/aot/edge_dims.h"
#include "backends/aot/shape_rules.h"
#include "backends/aot/typed_values.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/pad.h"
#include "ops/run_length.h"
#include "ops/shape_fn.h"
#include "ops/slice.h"
#include "ops/split.h"

namespace hone::aot {
namespace {

/// Slice with constant bounds over static sliced axes, and Gather of one
/// constant index: a strided copy (Program::copies), the rule from
/// ops::slice_window and ops::gather_shape.
Result<DimExprs> strided_copy(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  p.operands[id] = {xv};
  const auto r = static_cast<int64_t>(x.size());
  DimExprs in_stride(x.size(), DimExpr(1));
  for (size_t i = x.size(); i-- > 1;) in_stride[i - 1] = in_stride[i] * x[i];
  Program::Copy c;
  DimExprs out;
  if (n.op_type == "Gather") {
    HONE_TRY(const std::vector<int64_t> idx, const_ints(p, n, 1));
    const Tensor& t = *p.values[static_cast<size_t>(n.inputs[1])].constant;
    if (t.rank() != 0) return fail(unsupported("Gather of more than one index"));
    HONE_TRY(const int64_t axis, ops::normalize_axis(ops::axis_attr(n), r, "Gather axis"));
    const auto a = static_cast<size_t>(axis);
    if (!x[a].is_const()) return fail(unsupported("Gather along a symbolic dim"));
    int64_t k = idx[0];
    if (k < -x[a].value() || k >= x[a].value())
      return fail(ErrorCode::kInvalidArgument, "Gather index " + std::to_string(k) +
                                                   " is out of range for dim " + x[a].to_string());
    if (k < 0) k += x[a].value();
    c.base = in_stride[a] * k;
    for (size_t i = 0; i < x.size(); ++i)
      if (i != a) out.push_back(x[i]), c.strides.push_back(in_stride[i]);
  } else {
    if (ops::slice_length_at_run_time(*p.graph, n)) return run_length_slice(p, id, n);
    if (has_input(n, 1) && has_input(n, 2) &&
        (!p.values[static_cast<size_t>(n.inputs[1])].constant ||
         !p.values[static_cast<size_t>(n.inputs[2])].constant))
      return run_time_slice(p, id, n);  // slice_bounds.cpp
    HONE_TRY(const std::vector<int64_t> starts, const_ints(p, n, 1));
    HONE_TRY(const std::vector<int64_t> ends, const_ints(p, n, 2));
    std::vector<int64_t> axes, steps;
    if (has_input(n, 3)) {
      HONE_TRY(axes, const_ints(p, n, 3));
    } else {
      for (int64_t i = 0; i < static_cast<int64_t>(starts.size()); ++i) axes.push_back(i);
    }
    if (has_input(n, 4)) {
      HONE_TRY(steps, const_ints(p, n, 4));
    } else {
      steps.assign(starts.size(), 1);
    }
    if (axes.size() != starts.size() || ends.size() != starts.size() ||
        steps.size() != starts.size())
      return fail(ErrorCode::kInvalidArgument,
                  "Slice starts, ends, axes and steps differ in length");
    out = x;
    c.strides = in_stride;
    c.base = 0;
    std::vector<bool> seen(x.size(), false);
    for (size_t k = 0; k < axes.size(); ++k) {
      HONE_TRY(const int64_t axis, ops::normalize_axis(axes[k], r, "Slice axis"));
      const auto a = static_cast<size_t>(axis);
      if (seen[a]) return fail(ErrorCode::kInvalidArgument, "Slice names an axis twice");
      seen[a] = true;
      if (!x[a].is_const()) {
        // A run-time dim: bounds counted from either end (ops::runtime_slice),
        // the dim checked to be at least what they cut off when the code runs.
        const auto rs = ops::runtime_slice(starts[k], ends[k], steps[k]);
        if (!rs)
          return fail(unsupported("Slice of a symbolic dim " + x[a].to_string() + " from " +
                                  std::to_string(starts[k]) + " to " + std::to_string(ends[k]) +
                                  " step " + std::to_string(steps[k])));
        out[a] = rs->length_plus_dim ? x[a] + DimExpr(rs->length) : DimExpr(rs->length);
        const DimExpr begin = rs->start_from_end ? x[a] + DimExpr(rs->start) : DimExpr(rs->start);
        c.base = c.base + in_stride[a] * begin;
        if (rs->least > 1)
          p.dim_checks.push_back(
              {x[a], rs->least, false,
               "axis " + std::to_string(a) + " of the input of Slice '" + n.name + "'"});
        continue;
      }
      // One axis at a time, by the shared rule.
      const std::vector<int64_t> one_axis{0}, one_step{steps[k]};
      HONE_TRY(const ops::SliceWindow w,
               ops::slice_window({x[a].value()}, {starts[k]}, {ends[k]}, &one_axis, &one_step));
      out[a] = w.out[0];
      c.base = c.base + in_stride[a] * w.base;
      c.strides[a] = in_stride[a] * w.strides[0];
    }
  }
  p.copies[id] = std::move(c);
  return out;
}

/// Expand: a copy with stride 0 on the broadcast axes (Program::copies).
Result<DimExprs> expand(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  p.operands[id] = {xv};
  DimExprs out;
  if (const ValueInfo& s = p.values[static_cast<size_t>(n.inputs[1])]; s.constant) {
    HONE_TRY(const std::vector<int64_t> shape, const_ints(p, n, 1));
    HONE_TRY(out, refused(ops::broadcast_shape<DimExpr>(
                      n.op_type, {x, DimExprs(shape.begin(), shape.end())})));
  } else {
    HONE_TRY(out, inferred_dims(p, n));
    HONE_CHECK_OK(refused(ops::check_broadcasts_to(n.op_type, "input", x, out)));
  }
  Program::Copy c;
  c.base = 0;
  c.strides.assign(out.size(), DimExpr(0));
  DimExpr stride = 1;
  for (size_t k = x.size(); k-- > 0;) {
    const size_t o = out.size() - x.size() + k;
    if (!(is_one(x[k]) && !is_one(out[o]))) c.strides[o] = stride;
    stride = stride * x[k];
  }
  p.copies[id] = std::move(c);
  return out;
}

}  // namespace

/// The dims of `n`'s output from shape inference, each symbol read as the
/// same dim of its input 0, or else as the block binds it (edge_dims.h's
/// bound_symbol: Whisper's [(L*batch), 128] back to [L, batch, 128] names L
/// and batch, which its input does not): a Reshape or Expand whose shape is
/// a host value, known per signature only. support.cpp's
/// computed_shape_problem checked every symbol is one of the two kinds; a
/// block that binds none of a dim's symbols is refused here.
Result<DimExprs> inferred_dims(const Program& p, const Node& n) {
  const Value& x = p.graph->value(n.inputs[0]);
  const Value& y = p.graph->value(n.outputs[0]);
  if (!x.shape || !y.shape)
    return fail(unsupported("the shape " + n.op_type + " makes is not known"));
  const DimExprs& xd = dims_of(p, n.inputs[0]);
  DimExprs out;
  for (const Dim& d : y.shape->dims()) {
    if (d.is_static()) {
      out.push_back(d.value());
      continue;
    }
    // A symbol of the input's or of the block's, or an expression of them ("(4*seq)").
    auto e = dim_expr_of(d, [&](const std::string& name) -> std::optional<DimExpr> {
      for (size_t k = 0; k < x.shape->rank() && k < xd.size(); ++k)
        if ((*x.shape)[k].is_symbolic() && (*x.shape)[k].symbol_name() == name) return xd[k];
      return bound_symbol(p, name);
    });
    if (!e)
      return fail(unsupported("dim " + d.to_string() + " of " + n.op_type +
                              "'s output is none of its input's, nor an expression of the "
                              "symbols the block binds"));
    out.push_back(std::move(*e));
  }
  return out;
}

/// Split along a static axis (ops::split_sizes): one copy per output, each
/// from its own base; the dims of outputs after the first are set here.
Result<DimExprs> split(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  p.operands[id] = {xv};
  HONE_TRY(const int64_t axis,
           ops::normalize_axis(ops::axis_attr(n), static_cast<int64_t>(x.size()), "Split axis"));
  const auto a = static_cast<size_t>(axis);
  if (!x[a].is_const()) return fail(unsupported("Split along a symbolic dim"));
  std::vector<int64_t> given;
  if (has_input(n, 1)) {
    HONE_TRY(given, const_ints(p, n, 1));
  }
  HONE_TRY(const std::vector<int64_t> sizes,
           ops::split_sizes(n, x[a].value(), n.outputs.size(), has_input(n, 1) ? &given : nullptr));
  DimExprs in_stride(x.size(), DimExpr(1));
  for (size_t i = x.size(); i-- > 1;) in_stride[i - 1] = in_stride[i] * x[i];
  Program::Copy c;
  c.strides = in_stride;
  DimExprs first;
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    DimExprs d = x;
    d[a] = sizes[k];
    c.part_base.push_back(in_stride[a] * start);
    start += sizes[k];
    if (k == 0)
      first = d;
    else if (n.outputs[k] >= 0) {
      p.values[static_cast<size_t>(n.outputs[k])].dims = d;
      p.values[static_cast<size_t>(n.outputs[k])].dtype = result_dtype(p, n, n.outputs[k]);
    }
  }
  c.base = c.part_base[0];
  p.copies[id] = std::move(c);
  return first;
}

namespace {

/// Pad in reflect, edge or wrap mode: each padded (or cropped) axis must be
/// static, its positions read through ops::pad_source_offsets' table.
Result<DimExprs> pad_by_index(Program& p, NodeId id, const std::string& mode, const DimExprs& x,
                              const ops::PadWindow& w) {
  Program::PadFill f;
  f.mode = mode;
  DimExprs out;
  for (size_t k = 0; k < x.size(); ++k) {
    if (w.begin[k] == 0 && w.end[k] == 0) {
      out.push_back(x[k]);
      f.index.emplace_back();
      continue;
    }
    if (!x[k].is_const())
      return fail(unsupported("Pad mode '" + mode + "' over axis " + std::to_string(k) +
                              ", a run-time dim (aot reads static axes through a table)"));
    const std::vector<int64_t> len{x[k].value()};
    HONE_TRY(const ops::PadWindow one, ops::pad_window(len, {w.begin[k], w.end[k]}, nullptr));
    HONE_TRY(auto offs, ops::pad_source_offsets(len, one, mode));
    out.push_back(DimExpr(one.out[0]));
    f.index.push_back(std::move(offs[0]));
  }
  p.pads[id] = std::move(f);
  return out;
}

/// Pad with constant pads (and value): ops::pad_window's rule, checked on
/// the static dims with each symbolic one standing in as a dim no pad can
/// exhaust, then each axis as an expression: out = x + begin + end, the kept
/// part x - crops.
Result<DimExprs> pad(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  p.operands[id] = {xv};
  HONE_TRY(const ops::PadAttrs a, ops::pad_attrs(n));
  const int64_t opset = p.graph->opset();
  std::vector<int64_t> pads = a.pads, axes;
  const bool has_axes = opset >= 18 && has_input(n, 3);
  float value = a.value;
  if (opset >= 11) {
    HONE_TRY(pads, const_ints(p, n, 1));
    if (has_axes) {
      HONE_TRY(axes, const_ints(p, n, 3));
    }
    value = 0.0f;
    if (has_input(n, 2)) {
      const ValueInfo& v = p.values[static_cast<size_t>(n.inputs[2])];
      if (!v.constant || v.constant->numel() > 1)
        return fail(unsupported("Pad constant_value must be one constant"));
      if (v.constant->numel() == 1)
        value = static_cast<float>(tensor_element_as_double(*v.constant, 0));
    }
  }
  std::vector<int64_t> stand_in;
  for (const DimExpr& d : x) stand_in.push_back(d.is_const() ? d.value() : int64_t{1} << 30);
  HONE_TRY(const ops::PadWindow w, ops::pad_window(stand_in, pads, has_axes ? &axes : nullptr));
  if (a.mode != "constant") return pad_by_index(p, id, a.mode, x, w);
  Program::PadFill f;
  f.value = value;
  DimExprs out;
  DimExpr xs = 1, ys = 1;
  std::vector<DimExpr> x_stride(x.size()), y_stride(x.size());
  for (size_t k = x.size(); k-- > 0;) {
    const int64_t b = w.begin[k], e = w.end[k];
    out.insert(out.begin(), x[k] + DimExpr(b) + DimExpr(e));
    f.window.insert(f.window.begin(),
                    x[k] - DimExpr(std::max<int64_t>(0, -b)) - DimExpr(std::max<int64_t>(0, -e)));
    x_stride[k] = xs;
    y_stride[k] = ys;
    xs = xs * x[k];
    ys = ys * out.front();
  }
  f.src_base = 0;
  f.dst_base = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    f.src_base = f.src_base + x_stride[k] * DimExpr(w.kept_from[k]);
    f.dst_base = f.dst_base + y_stride[k] * DimExpr(std::max<int64_t>(0, w.begin[k]));
  }
  p.pads[id] = std::move(f);
  return out;
}

}  // namespace

Result<DimExprs> copy_dims(Program& p, NodeId id, const Node& n) {
  if (n.op_type == "Pad") return pad(p, id, n);
  if (n.op_type == "Split") return split(p, id, n);
  return n.op_type == "Expand" ? expand(p, id, n) : strided_copy(p, id, n);
}

}  // namespace hone::aot
