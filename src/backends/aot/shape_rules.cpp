// Dims inference for every op aot claims. Anything outside what the emitter
// handles is kUnsupported here, so build() fails before writing any code.
#include "backends/aot/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "backends/aot/dim_traits.h"
#include "backends/aot/eltwise.h"
#include "backends/aot/lstm.h"
#include "backends/aot/nms.h"
#include "backends/aot/rnn.h"
#include "backends/aot/typed_values.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/shape_fn.h"
#include "ops/shape_fn_tensor.h"
#include "ops/window.h"

namespace hone::aot {
namespace {

/// The table's arity of `op` (eltwise.h), or 0.
int eltwise_arity(const std::string& op) {
  const EltwiseOp* e = find_eltwise(op);
  return e ? e->arity : 0;
}

ValueInfo& info(Program& p, ValueId v) {
  return p.values[static_cast<size_t>(v)];
}

/// support() has checked the axis; ops/axis.h maps it.
int64_t norm_axis(int64_t a, int64_t rank) {
  return ops::try_normalize_axis(a, rank).value_or(a);
}

Result<void> check_static(const DimExprs& d, size_t from, const std::string& what) {
  for (size_t i = from; i < d.size(); ++i)
    if (!d[i].is_const())
      return fail(unsupported(what + " dims " + to_string(d) + " must be static from axis " +
                              std::to_string(from)));
  return {};
}

/// Dims from axis 2 on (the spatial ones) are numbers.
bool spatial_static(const DimExprs& x) {
  return std::all_of(x.begin() + std::min<std::ptrdiff_t>(2, std::ssize(x)), x.end(),
                     [](const DimExpr& d) { return d.is_const(); });
}

/// A dynamic window (Window2d::dynamic) whose run-time dims' bounds cover it:
/// else no input in bounds could run, and the memory plan, sized at the
/// bounds, would be negative.
Result<void> check_window_bounds(const Program& p, const Window2d& w, const DimExprs& x) {
  for (const auto& [in, window, pads] : {std::tuple{w.ih_e, (w.kh - 1) * w.dh + 1, w.pt + w.pb},
                                         std::tuple{w.iw_e, (w.kw - 1) * w.dw + 1, w.pl + w.pr}})
    if (!in.is_const() && p.at_bounds(in) + pads < window)
      return fail(unsupported("input " + to_string(x) + " at its bounds (" +
                              std::to_string(p.at_bounds(in)) + ") is smaller than the window (" +
                              std::to_string(window - pads) + " with the padding)"));
  return {};
}

void mark_literal(Program& p, ValueId v) {
  ValueInfo& i = info(p, v);
  if (i.constant && i.is_f32() && i.constant->numel() == 1)
    i.literal = i.constant->data<float>()[0];
}

Result<std::vector<float>> const_floats(const Program& p, const Node& n, size_t i, int64_t count,
                                        const std::string& what) {
  const ValueInfo& v = p.values[static_cast<size_t>(n.inputs[i])];
  if (!v.constant || !v.is_f32()) return fail(unsupported(what + " must be a constant f32 tensor"));
  if (count >= 0 && v.constant->numel() != count)
    return fail(ErrorCode::kInvalidArgument, what + " has " + std::to_string(v.constant->numel()) +
                                                 " values, expected " + std::to_string(count));
  const float* d = v.constant->data<float>();
  return std::vector<float>(d, d + v.constant->numel());
}

Result<void> batch_norm(Program& p, NodeId id, const Node& n, const DimExprs& x) {
  if (x.size() < 2 || !x[1].is_const())
    return fail(unsupported("BatchNormalization needs a static channel dim, got " + to_string(x)));
  const int64_t c = x[1].value();
  HONE_TRY(auto scale, const_floats(p, n, 1, c, "scale"));
  HONE_TRY(auto bias, const_floats(p, n, 2, c, "B"));
  HONE_TRY(auto mean, const_floats(p, n, 3, c, "input_mean"));
  HONE_TRY(auto var, const_floats(p, n, 4, c, "input_var"));
  HONE_TRY(const ops::BatchNormAttrs ba, ops::batch_norm_attrs(n));
  const double eps = ba.epsilon;
  // y = x * s + t with s = scale / sqrt(var + eps), t = B - mean * s, folded in double.
  std::vector<int64_t> shape{c};
  for (size_t i = 2; i < x.size(); ++i) shape.push_back(1);
  Tensor s = Tensor::zeros(DType::kF32, shape), t = Tensor::zeros(DType::kF32, shape);
  for (int64_t i = 0; i < c; ++i) {
    const double k = scale[i] / std::sqrt(static_cast<double>(var[i]) + eps);
    s.data<float>()[i] = static_cast<float>(k);
    t.data<float>()[i] = static_cast<float>(bias[i] - mean[i] * k);
  }
  const ValueId sv = add_synthetic(p, n.name + ".scale_folded", std::move(s));
  const ValueId tv = add_synthetic(p, n.name + ".shift_folded", std::move(t));
  p.operands[id] = {n.inputs[0], sv, tv};
  return {};
}

Result<DimExprs> conv(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  HONE_TRY(ValueId wv, data_input(p, n, 1));
  const DimExprs x = dims_of(p, xv), w = dims_of(p, wv);
  if (x.size() < 3 || x.size() > 5)
    return fail(
        unsupported("Conv input " + to_string(x) + ": aot runs 1-D, 2-D and 3-D convolutions"));
  if (w.size() != x.size()) return fail(unsupported("Conv weights rank differs from the input's"));
  HONE_CHECK_OK(check_static(w, 0, "Conv weight"));
  if (!x[1].is_const())
    return fail(unsupported("Conv input " + to_string(x) + " needs a static channel dim"));
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(n));
  const int64_t group = ca.group;
  const int64_t m = w[0].value(), cg = w[1].value();
  if (m % group != 0 || x[1].value() != cg * group)
    return fail(ErrorCode::kInvalidArgument, "Conv group " + std::to_string(group) +
                                                 " does not fit input " + to_string(x) +
                                                 " and weights " + to_string(w));
  DimExprs out;
  if (spatial_static(x)) {
    HONE_TRY(out, ops::conv_shape(n, ca, x, w));
  } else {
    std::vector<int64_t> k;
    for (size_t i = 2; i < w.size(); ++i) k.push_back(w[i].value());
    if (!ca.kernel_shape.empty() && ca.kernel_shape != k)
      return fail(ErrorCode::kInvalidArgument,
                  "Conv kernel_shape disagrees with weights " + to_string(w));
    HONE_TRY(const Window2d win, window_of(n, x, k, false));
    HONE_CHECK_OK(check_window_bounds(p, win, x));
    out = window_out_dims(win, x, m);
  }
  p.operands[id] = {xv, wv};
  if (has_input(n, 2)) {
    HONE_TRY(ValueId bv, data_input(p, n, 2));
    if (!(dims_of(p, bv) == DimExprs{m}))
      return fail(ErrorCode::kInvalidArgument,
                  "Conv bias must have shape [" + std::to_string(m) + "]");
    p.operands[id].push_back(bv);
  }
  return out;
}

Result<DimExprs> gemm(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId av, data_input(p, n, 0));
  HONE_TRY(ValueId bv, data_input(p, n, 1));
  const DimExprs a = dims_of(p, av), b = dims_of(p, bv);
  if (a.size() != 2 || b.size() != 2) return fail(unsupported("Gemm A and B must be 2-D"));
  HONE_TRY(const ops::GemmAttrs ga, ops::gemm_attrs(n));
  p.operands[id] = {av, bv};
  if (!has_input(n, 2)) return refused(ops::gemm_shape(ga, a, b));
  HONE_TRY(ValueId cv, data_input(p, n, 2));
  const DimExprs c = dims_of(p, cv);
  p.operands[id].push_back(cv);
  return refused(ops::gemm_shape(ga, a, b, &c));
}

Result<DimExprs> matmul(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId av, data_input(p, n, 0));
  HONE_TRY(ValueId bv, data_input(p, n, 1));
  p.operands[id] = {av, bv};
  return refused(ops::matmul_shape(dims_of(p, av), dims_of(p, bv)));
}

Result<DimExprs> pool(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  p.operands[id] = {xv};
  if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") {
    if (x.size() < 3) return fail(unsupported("input " + to_string(x) + " has no spatial dims"));
    return refused(ops::global_pool_shape(n.op_type, x));
  }
  if (x.size() < 3 || x.size() > 5)
    return fail(
        unsupported(n.op_type + " input " + to_string(x) + ": aot runs 1-D, 2-D and 3-D pools"));
  HONE_TRY(const ops::PoolAttrs pa, ops::pool_attrs(n));
  if (spatial_static(x)) return ops::pool_shape(n, pa, x);
  // window_of refuses a 3-D window over run-time dims (emit_pool3d's loops are static).
  HONE_TRY(const Window2d win, window_of(n, x, pa.kernel_shape, pa.ceil_mode));
  HONE_CHECK_OK(check_window_bounds(p, win, x));
  return window_out_dims(win, x, x[1]);
}

Result<DimExprs> layer_norm(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(n));
  const int64_t axis = norm_axis(na.axis, static_cast<int64_t>(x.size()));
  if (axis < 0 || axis >= static_cast<int64_t>(x.size()))
    return fail(ErrorCode::kInvalidArgument,
                "LayerNormalization axis out of range for " + to_string(x));
  HONE_CHECK_OK(check_static(x, static_cast<size_t>(axis), "LayerNormalization normalized"));
  std::vector<int64_t> norm;
  for (size_t i = static_cast<size_t>(axis); i < x.size(); ++i) norm.push_back(x[i].value());
  const int64_t cols = shape_numel(norm);
  p.operands[id] = {xv};
  for (size_t i = 1; i < 3; ++i) {
    if (!has_input(n, i)) continue;
    const ValueInfo& v = p.values[static_cast<size_t>(n.inputs[i])];
    if (!v.constant || !v.is_f32())
      return fail(unsupported("LayerNormalization scale and bias must be f32 constants"));
    // Expanded to one value per normalized element, so the loop reads it by column.
    const auto& s = v.constant->shape();
    if (s.size() > norm.size())
      return fail(ErrorCode::kInvalidArgument, "LayerNormalization parameter " +
                                                   v.constant->describe() +
                                                   " has more dims than the normalized part");
    const auto fits = ops::broadcast_shapes({s, norm});
    if (!fits || *fits != norm)
      return fail(ErrorCode::kInvalidArgument,
                  "LayerNormalization parameter " + v.constant->describe() +
                      " does not broadcast to " + shape_to_string(norm));
    const std::vector<int64_t> st = ops::broadcast_strides(s, norm);
    Tensor e = Tensor::zeros(DType::kF32, {cols});
    for (int64_t j = 0; j < cols; ++j) {
      int64_t rem = j, off = 0;
      for (size_t d = norm.size(); d-- > 0;) {
        off += (rem % norm[d]) * st[d];
        rem /= norm[d];
      }
      e.data<float>()[j] = v.constant->data<float>()[off];
    }
    p.operands[id].push_back(
        add_synthetic(p, n.name + (i == 1 ? ".scale_expanded" : ".bias_expanded"), std::move(e)));
  }
  if (p.operands[id].size() < 2)
    return fail(ErrorCode::kInvalidArgument, "LayerNormalization needs Scale");
  return x;
}

/// InstanceNormalization: each [n, c] plane normalized over the spatial dims
/// (which may be run-time ones), then scaled and shifted per channel.
Result<DimExprs> instance_norm(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  if (x.size() < 3 || !x[1].is_const())
    return fail(unsupported("InstanceNormalization input " + to_string(x) +
                            " needs spatial dims and a static channel dim"));
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(n));
  (void)na;
  p.operands[id] = {xv};
  for (size_t i = 1; i < 3; ++i) {
    HONE_TRY(ValueId v, data_input(p, n, i));
    HONE_CHECK_OK(const_floats(p, n, i, x[1].value(), i == 1 ? "scale" : "B"));
    p.operands[id].push_back(v);
  }
  return x;
}

Result<DimExprs> reduce(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  p.operands[id] = {xv};
  HONE_TRY(auto axes, reduce_axes(p, n));
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  return ops::reduce_shape(n.op_type, ra, x, &axes);
}

Result<DimExprs> transpose(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  HONE_TRY(const std::vector<int64_t> perm, ops::transpose_perm(n, static_cast<int64_t>(x.size())));
  p.operands[id] = {xv};
  return ops::transpose_shape(x, perm);
}

Result<DimExprs> concat(Program& p, NodeId id, const Node& n) {
  p.operands[id].clear();
  std::vector<DimExprs> inputs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    HONE_TRY(ValueId v, data_input(p, n, i));
    inputs.push_back(dims_of(p, v));
    p.operands[id].push_back(v);
  }
  return ops::concat_shape(ops::axis_attr(n), inputs);
}

Result<DimExprs> view(Program& p, NodeId id, const Node& n) {
  HONE_TRY(ValueId xv, data_input(p, n, 0));
  const DimExprs x = dims_of(p, xv);
  p.operands[id] = {xv};
  if (n.op_type == "Identity") return x;
  if (n.op_type == "Flatten") return ops::flatten_shape(ops::axis_attr(n), x);
  if (n.op_type == "Reshape") {
    if (!p.values[static_cast<size_t>(n.inputs[1])].constant) {
      HONE_TRY(DimExprs out, inferred_dims(p, n));
      if (!(product(out) == product(x)))
        return fail(unsupported("Reshape from " + to_string(x) + " to " + to_string(out) +
                                " keeps a number of elements aot cannot prove equal"));
      return out;
    }
    HONE_TRY(auto shape, const_ints(p, n, 1));
    return ops::reshape_shape(x, shape, ops::reshape_allowzero(n));
  }
  std::vector<int64_t> axes;
  if (n.attr_ints("axes").size() || !has_input(n, 1)) {
    axes = n.attr_ints("axes");
  } else {
    HONE_TRY(axes, const_ints(p, n, 1));
  }
  if (n.op_type == "Unsqueeze") return ops::unsqueeze_shape(x, axes);
  return ops::squeeze_shape(x, axes);
}

}  // namespace

Error unsupported(std::string what) {
  return Error(ErrorCode::kUnsupported, std::move(what));
}

bool has_input(const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0;
}

Result<ValueId> data_input(const Program& p, const Node& n, size_t i) {
  if (!has_input(n, i))
    return fail(ErrorCode::kInvalidArgument, n.op_type + " is missing input " + std::to_string(i));
  const ValueInfo& v = p.values[static_cast<size_t>(n.inputs[i])];
  if (!v.is_f32() && !carries_any_dtype(n.op_type))  // typed_values.h
    return fail(unsupported("input " + std::to_string(i) + " '" + v.name + "' is not f32"));
  return n.inputs[i];
}

Result<ValueId> index_input(const Program& p, const Node& n, size_t i) {
  HONE_TRY(ValueId iv, data_input(p, n, i));
  const ValueInfo& idx = p.values[static_cast<size_t>(iv)];
  if (idx.dtype != DType::kI64 && idx.dtype != DType::kI32)
    return fail(unsupported(n.op_type + " indices '" + idx.name + "' are " +
                            std::string(dtype_name(idx.dtype)) + "; aot reads i64 or i32"));
  return iv;
}

ValueId add_synthetic(Program& p, const std::string& name, Tensor t) {
  p.synthetic.push_back(std::move(t));
  ValueInfo v;
  v.name = name;
  v.constant = &p.synthetic.back();
  for (int64_t d : v.constant->shape()) v.dims.push_back(d);
  v.place = Place::kWeight;
  v.offset = -1;
  p.values.push_back(std::move(v));
  return static_cast<ValueId>(p.values.size() - 1);
}

bool is_elementwise_op(const std::string& op) {
  return find_eltwise(op) || op == "PRelu" || op == "Clip" || op == "BatchNormalization" ||
         op == "Cast";
}

bool is_view_op(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
         op == "Identity";
}

const DimExprs& dims_of(const Program& p, ValueId v) {
  return p.values[static_cast<size_t>(v)].dims;
}

Result<std::vector<int64_t>> const_ints(const Program& p, const Node& n, size_t i) {
  if (!has_input(n, i))
    return fail(ErrorCode::kInvalidArgument, "input " + std::to_string(i) + " is missing");
  const ValueInfo& v = p.values[static_cast<size_t>(n.inputs[i])];
  if (!v.constant || (v.constant->dtype() != DType::kI64 && v.constant->dtype() != DType::kI32))
    return fail(unsupported("input " + std::to_string(i) + " '" + v.name +
                            "' must be a constant integer tensor"));
  std::vector<int64_t> out;
  for (int64_t k = 0; k < v.constant->numel(); ++k)
    out.push_back(tensor_element_as_int64(*v.constant, k));
  return out;
}

Result<Window2d> window_of(const Node& n, const DimExprs& x, const std::vector<int64_t>& k,
                           bool ceil_mode) {
  const size_t r = k.size();
  if (r + 2 != x.size() || r < 1 || r > 3)
    return fail(ErrorCode::kInvalidArgument,
                "kernel rank does not match the input " + to_string(x));
  // A run-time dim stands in as a size every window fits: with explicit pads
  // the window's geometry does not depend on it.
  constexpr int64_t kStandIn = int64_t{1} << 30;
  std::vector<int64_t> in;
  bool dynamic = false;
  for (size_t d = 0; d < r; ++d) {
    dynamic |= !x[d + 2].is_const();
    in.push_back(x[d + 2].is_const() ? x[d + 2].value() : kStandIn);
  }
  if (dynamic && r == 3) return fail(unsupported("a 3-D window over dims known at run time"));
  if (dynamic) {
    HONE_TRY(const ops::AutoPad ap, ops::auto_pad_attr(n));
    if (ceil_mode || (ap != ops::AutoPad::kNotSet && ap != ops::AutoPad::kValid))
      return fail(unsupported("a window with auto_pad SAME or ceil_mode over spatial dims " +
                              to_string(x) + " known only at run time"));
  }
  HONE_TRY(ops::Window win, ops::make_window(n, in, k, ceil_mode, n.op_type));
  Window2d w;
  w.dynamic = dynamic;
  // The output extent of spatial axis d, as an expression.
  auto out_e = [&](size_t d) -> DimExpr {
    if (x[d + 2].is_const()) return win.out[d];
    const int64_t c = win.pad_begin[d] + win.pad_end[d] - win.dilated(d);
    // Stride 1: in + c + 1, so a "same" window keeps the input's dim as is.
    const int64_t add = win.strides[d] == 1 ? c + 1 : c;
    const DimExpr e = add < 0 ? x[d + 2] - DimExpr(-add) : x[d + 2] + DimExpr(add);
    return win.strides[d] == 1 ? e : e / win.strides[d] + 1;
  };
  if (r == 3)
    w.id = in[0], w.kd = k[0], w.sd = win.strides[0], w.dd = win.dilations[0],
    w.pf = win.pad_begin[0], w.pk = win.pad_end[0], w.od = win.out[0];
  const size_t h = r - 2, wd = r - 1;  // h > r (r == 1, wrapped): no height dim
  if (h < r)
    w.ih = in[h], w.kh = k[h], w.sh = win.strides[h], w.dh = win.dilations[h],
    w.pt = win.pad_begin[h], w.pb = win.pad_end[h], w.oh = win.out[h], w.ih_e = x[h + 2],
    w.oh_e = out_e(h);
  w.iw = in[wd], w.kw = k[wd], w.sw = win.strides[wd], w.dw = win.dilations[wd],
  w.pl = win.pad_begin[wd], w.pr = win.pad_end[wd], w.ow = win.out[wd], w.iw_e = x[wd + 2],
  w.ow_e = out_e(wd);
  return w;
}

DimExprs window_out_dims(const Window2d& w, const DimExprs& x, const DimExpr& channels) {
  if (x.size() == 3) return {x[0], channels, w.ow_e};
  return {x[0], channels, w.oh_e, w.ow_e};
}

Result<std::vector<int64_t>> reduce_axes(const Program& p, const Node& n) {
  const int64_t r = static_cast<int64_t>(dims_of(p, n.inputs[0]).size());
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  std::vector<int64_t> axes = ra.axes;
  if (axes.empty() && has_input(n, 1)) {
    HONE_TRY(axes, const_ints(p, n, 1));
  }
  if (axes.empty() && !ra.noop_with_empty_axes)
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  for (int64_t& a : axes) {
    a = norm_axis(a, r);
    if (a < 0 || a >= r) return fail(ErrorCode::kInvalidArgument, "reduce axis out of range");
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

Result<std::pair<int64_t, int64_t>> softmax_range(const Program& p, const Node& n) {
  const int64_t r = static_cast<int64_t>(dims_of(p, n.inputs[0]).size());
  HONE_TRY(const ops::SoftmaxAttrs sa, ops::softmax_attrs(n, p.graph->opset()));
  const bool legacy = sa.coerce_2d;
  const int64_t a = norm_axis(sa.axis, r);
  if (a < 0 || a > r || (!legacy && a == r))
    return fail(ErrorCode::kInvalidArgument, "axis out of range for rank " + std::to_string(r));
  return std::pair<int64_t, int64_t>{a, legacy ? r : a + 1};
}

DimExpr scratch_floats(const Program& p, NodeId id) {
  const Node& n = p.node(id);
  if (n.op_type == "LSTM") return lstm_scratch_floats(p, id);
  if (n.op_type == "GRU") return gru_scratch_floats(p, id);
  if (n.op_type == "ConvTranspose") return conv_transpose_scratch(p, id);
  if (n.op_type == "NonMaxSuppression") return nms_scratch_floats(p, id);  // nms.cpp
  if (n.op_type != "Conv") return 0;
  const DimExprs& w = dims_of(p, n.inputs[1]);
  const DimExprs& x = dims_of(p, n.inputs[0]);
  const int64_t group = ops::conv_group(n);
  // Depthwise 1-D and 2-D: a direct loop (3-D ones take im2col with the others).
  if (x.size() < 5 && group == x[1].value() && w[0].value() == group) return 0;
  std::vector<int64_t> k;
  for (size_t i = 2; i < w.size(); ++i) k.push_back(w[i].value());
  auto win = window_of(n, x, k, false);
  if (!win) return 0;
  const bool pointwise = win->kd == 1 && win->kh == 1 && win->kw == 1 && win->sd == 1 &&
                         win->sh == 1 && win->sw == 1 &&
                         win->pf + win->pk + win->pt + win->pl + win->pb + win->pr == 0;
  if (pointwise) return 0;
  return win->oh_e * win->ow_e * (w[1].value() * win->kd * win->kh * win->kw * win->od);
}

Result<void> infer_node(Program& p, NodeId id) {
  const Node& n = p.node(id);
  if (!n.domain.empty() && n.domain != "ai.onnx")
    return fail(unsupported("domain '" + n.domain + "' is not ONNX's default"));
  if (n.op_type == "LSTM") return infer_lstm(p, id);  // several outputs, any may be omitted
  if (n.op_type == "TopK") return infer_topk(p, id);
  if (n.op_type == "GRU") return infer_gru(p, id);
  if (n.outputs.empty() || n.outputs[0] < 0)
    return fail(ErrorCode::kInvalidArgument, "node has no output");
  for (size_t i = 1; i < n.outputs.size() && n.op_type != "Split"; ++i)
    if (n.outputs[i] >= 0 && !p.graph->value(n.outputs[i]).name.empty())
      return fail(unsupported(n.op_type + " output " + std::to_string(i) + " is not supported"));
  const std::string& op = n.op_type;
  Result<DimExprs> out = fail(unsupported("aot has no code generator for " + op));
  if (eltwise_arity(op) == 1 || op == "Clip" || op == "Cast") {
    HONE_TRY(ValueId xv, data_input(p, n, 0));
    p.operands[id] = {xv};
    if (op == "Clip")
      for (size_t i = 1; i < 3; ++i)
        if (has_input(n, i) && !(p.values[static_cast<size_t>(n.inputs[i])].constant &&
                                 p.values[static_cast<size_t>(n.inputs[i])].constant->numel() == 1))
          return fail(unsupported("Clip bounds must be constant scalars"));
    out = dims_of(p, xv);
  } else if (eltwise_arity(op) == 2 || op == "PRelu") {
    HONE_TRY(ValueId av, data_input(p, n, 0));
    HONE_TRY(ValueId bv, data_input(p, n, 1));
    p.operands[id] = {av, bv};
    mark_literal(p, av);
    mark_literal(p, bv);
    if (op == "PRelu")
      HONE_CHECK_OK(refused(ops::check_broadcasts_to(op, "slope", dims_of(p, bv), dims_of(p, av))));
    out = refused(ops::broadcast_shape<DimExpr>(op, {dims_of(p, av), dims_of(p, bv)}));
  } else if (eltwise_arity(op) == 3) {
    std::vector<DimExprs> dims;
    for (size_t i = 0; i < 3; ++i) {
      HONE_TRY(ValueId v, data_input(p, n, i));
      p.operands[id].push_back(v);
      mark_literal(p, v);
      dims.push_back(dims_of(p, v));
    }
    out = refused(ops::broadcast_shape<DimExpr>(op, dims));
  } else if (op == "BatchNormalization") {
    HONE_TRY(ValueId xv, data_input(p, n, 0));
    HONE_CHECK_OK(batch_norm(p, id, n, dims_of(p, xv)));
    out = dims_of(p, xv);
  } else if (op == "Conv") {
    out = conv(p, id, n);
  } else if (op == "Gemm") {
    out = gemm(p, id, n);
  } else if (op == "MatMul") {
    out = matmul(p, id, n);
  } else if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
             op == "GlobalMaxPool") {
    out = pool(p, id, n);
  } else if (op == "Softmax" || op == "LogSoftmax") {
    HONE_TRY(ValueId xv, data_input(p, n, 0));
    p.operands[id] = {xv};
    HONE_CHECK_OK(softmax_range(p, n));
    out = dims_of(p, xv);
  } else if (op == "LayerNormalization") {
    out = layer_norm(p, id, n);
  } else if (op == "InstanceNormalization") {
    out = instance_norm(p, id, n);
  } else if (op == "Resize") {
    out = resize_dims(p, id, n);
  } else if (op == "ConvTranspose") {
    out = conv_transpose_dims(p, id, n);
  } else if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" ||
             op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare") {
    out = reduce(p, id, n);
  } else if (op == "Transpose") {
    out = transpose(p, id, n);
  } else if (op == "Concat") {
    out = concat(p, id, n);
  } else if (op == "ArgMax" || op == "ArgMin") {
    out = arg_extreme_dims(p, id, n);  // arg_extreme.cpp
  } else if (op == "CumSum") {
    out = cumsum_dims(p, id, n);  // elements.cpp
  } else if (op == "GatherElements" || op == "ScatterElements") {
    out = elements_dims(p, id, n);  // elements.cpp
  } else if (op == "OneHot") {
    out = one_hot_dims(p, id, n);  // elements.cpp
  } else if (op == "NonZero") {
    out = nonzero_dims(p, id, n);  // nonzero.cpp
  } else if (op == "NonMaxSuppression") {
    out = nms_dims(p, id, n);  // nms.cpp
  } else if (op == "GridSample") {
    out = grid_sample_dims(p, id, n);  // grid_sample.cpp
  } else if (op == "RoiAlign") {
    out = roi_align_dims(p, id, n);  // roi_align.cpp
  } else if (op == "Gather" && !gathers_one_constant(p, n)) {
    out = gather_dims(p, id, n);  // gather.cpp
  } else if (op == "GatherND") {
    out = gather_nd_dims(p, id, n);  // gather_nd.cpp
  } else if (op == "ScatterND") {
    out = scatter_nd_dims(p, id, n);  // gather_nd.cpp
  } else if (op == "Slice" || op == "Gather" || op == "Expand" || op == "Split" || op == "Pad") {
    out = copy_dims(p, id, n);
  } else if (is_view_op(op)) {
    out = view(p, id, n);
  }
  if (!out) return fail(std::move(out).error());
  ValueInfo& o = info(p, n.outputs[0]);
  o.dims = std::move(*out);
  o.dtype = result_dtype(p, n, n.outputs[0]);
  return {};
}

}  // namespace hone::aot
