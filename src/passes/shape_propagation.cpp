#include "passes/shape_propagation.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "eval/kernel_util.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/nonzero.h"
#include "ops/pad.h"
#include "ops/run_length.h"
#include "ops/shape_fn.h"
#include "ops/shape_fn_nn.h"
#include "ops/shape_fn_tensor.h"
#include "ops/slice.h"
#include "ops/split.h"
#include "ops/window.h"
#include "passes/rewrite.h"
#include "passes/shape_values.h"

namespace hone::passes {
namespace {

const std::set<std::string>& same_shape_ops() {
  static const std::set<std::string> k = {
      "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Exp", "Log", "Neg", "Abs",
      "Gelu", "Elu", "Selu", "Softmax", "LogSoftmax", "Identity", "Clip", "HardSwish",
      "HardSigmoid", "Reciprocal", "Softplus", "Mish", "Sin", "Cos", "Floor", "Ceil", "Round",
      "BatchNormalization", "LayerNormalization", "InstanceNormalization", "Dropout", "Not", "Sign",
      // opsets 23-26
      "Swish", "RMSNormalization", "RotaryEmbedding", "TensorScatter", "CumProd", "LpNormalization",
      // the rest that keep their input's shape and dtype (llama's causal mask is a Trilu)
      "Trilu", "CumSum", "Celu", "ThresholdedRelu", "Shrink", "Hardmax", "Softsign", "Tan", "Asin",
      "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "LRN", "GroupNormalization",
      "MeanVarianceNormalization",
      // scatters: the data's shape and dtype (a GAT's softmax sums, read again by Gather)
      "ScatterElements", "ScatterND", "Scatter"};
  return k;
}

const std::set<std::string>& broadcast_ops() {
  static const std::set<std::string> k = {"Add",
                                          "Sub",
                                          "Mul",
                                          "Div",
                                          "Pow",
                                          "Max",
                                          "Min",
                                          "Mod",
                                          "Equal",
                                          "Less",
                                          "Greater",
                                          "LessOrEqual",
                                          "GreaterOrEqual",
                                          "And",
                                          "Or",
                                          "Xor",
                                          "Where",
                                          "PRelu"};
  return k;
}

bool is_compare(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
         op == "GreaterOrEqual";
}

/// A shared shape function's result (ops/shape_fn.h) as propagation wants
/// it: a shape, or none where the function refused (the value stays unknown).
std::optional<Shape> shape_or_none(Result<std::vector<Dim>> r) {
  if (!r) return std::nullopt;
  return Shape(std::move(*r));
}

/// The values of constant input `i` of `n` as integers, or nothing.
std::optional<std::vector<int64_t>> constant_ints(const Graph& g, const Node& n, size_t i) {
  const Tensor* t = constant_of(g, i < n.inputs.size() ? n.inputs[i] : kNoValue);
  if (!t) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t k = 0; k < t->numel(); ++k) out.push_back(tensor_element_as_int64(*t, k));
  return out;
}

/// The value of the integer scalar `v` as a dim: a constant, or dim k of a
/// tensor reached through Gather(Shape(x), k) or a one-dim Shape(x, k, k + 1),
/// and the Casts, Squeezes and Unsqueezes exporters wrap it in (a Range over a
/// sequence length).
Dim scalar_dim(const Graph& g, ValueId v, int depth = 0) {
  if (v < 0 || depth > 8) return Dim::unknown();
  const Value& val = g.value(v);
  if (val.initializer) {
    const Tensor& t = *val.initializer;
    if (t.numel() != 1 || (t.dtype() != DType::kI64 && t.dtype() != DType::kI32))
      return Dim::unknown();
    return Dim(tensor_element_as_int64(t, 0));
  }
  if (val.producer < 0) return Dim::unknown();
  const Node& n = g.node(val.producer);
  if (!n.domain.empty() || n.inputs.empty()) return Dim::unknown();
  if (n.op_type == "Cast" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze" ||
      n.op_type == "Identity")
    return scalar_dim(g, n.inputs[0], depth + 1);
  if (n.op_type == "Shape") {
    // Shape with start and end of one dim (the dynamo exporter's sym_size,
    // squeezed to a scalar): that dim.
    const Value& x = g.value(n.inputs[0]);
    if (!x.shape) return Dim::unknown();
    const auto [b, e] = ops::shape_range(n, static_cast<int64_t>(x.shape->rank()));
    return e - b == 1 ? (*x.shape)[static_cast<size_t>(b)] : Dim::unknown();
  }
  if (n.op_type != "Gather" || n.inputs.size() != 2 || ops::axis_attr(n) != 0)
    return Dim::unknown();
  const Value& src = g.value(n.inputs[0]);
  const Value& idx = g.value(n.inputs[1]);
  if (src.producer < 0 || !idx.initializer || idx.initializer->numel() != 1) return Dim::unknown();
  const Node& shape = g.node(src.producer);
  if (shape.op_type != "Shape" || !shape.domain.empty()) return Dim::unknown();
  const Value& x = g.value(shape.inputs[0]);
  if (!x.shape) return Dim::unknown();
  const auto rank = static_cast<int64_t>(x.shape->rank());
  const auto [b, e] = ops::shape_range(shape, rank);
  int64_t k = tensor_element_as_int64(*idx.initializer, 0);
  if (k < 0) k += e - b;
  if (k < 0 || k >= e - b) return Dim::unknown();
  return (*x.shape)[static_cast<size_t>(b + k)];
}

std::optional<Shape> infer(const Graph& g, const Node& n, size_t out_index, DType* dtype,
                           ShapeValues& values) {
  auto shape_of = [&](size_t i) -> const Shape* {
    if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
    const Value& v = g.value(n.inputs[i]);
    return v.shape ? &*v.shape : nullptr;
  };
  auto dtype_of = [&](size_t i) {
    return i < n.inputs.size() && n.inputs[i] >= 0 ? g.value(n.inputs[i]).dtype : DType::kUndefined;
  };
  const std::string& op = n.op_type;
  if (!n.domain.empty() && n.domain != "ai.onnx") return std::nullopt;
  *dtype = dtype_of(0);
  // Index outputs are i64 whatever the data's dtype.
  if ((op == "TopK" || op == "MaxPool") && out_index == 1) *dtype = DType::kI64;
  if ((op == "Unique" && out_index >= 1) || op == "NonZero" || op == "NonMaxSuppression")
    *dtype = DType::kI64;
  if (op == "Attention") {
    if (out_index == 2) *dtype = dtype_of(2);
    const Shape* q = shape_of(0);
    const Shape* k = shape_of(1);
    const Shape* v = shape_of(2);
    if (!q || !k || !v) return std::nullopt;
    const Shape* past = shape_of(4);
    const std::vector<Dim> pd = past ? past->dims() : std::vector<Dim>();
    return shape_or_none(ops::attention_shape(ops::attention_heads(n), out_index, q->dims(),
                                              k->dims(), v->dims(), past ? &pd : nullptr));
  }
  if (op == "Split") {
    const Shape* s = shape_of(0);
    if (!s || s->rank() == 0) return std::nullopt;
    const auto axis = ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(s->rank()));
    if (!axis || !(*s)[static_cast<size_t>(*axis)].is_static()) return std::nullopt;
    std::optional<std::vector<int64_t>> given;
    if (n.inputs.size() > 1 && n.inputs[1] >= 0) {  // opset 13's input; before it, the attribute
      given = int_list(g, n, "", 1);
      if (!given) return std::nullopt;
    }
    auto sizes = ops::split_sizes(n, (*s)[static_cast<size_t>(*axis)].value(), n.outputs.size(),
                                  given ? &*given : nullptr);
    if (!sizes || out_index >= sizes->size()) return std::nullopt;
    std::vector<Dim> dims = s->dims();
    dims[static_cast<size_t>(*axis)] = (*sizes)[out_index];
    return Shape(std::move(dims));
  }
  if (op == "TopK") {  // values and indices: the input's dims, K along the axis
    const Shape* s = shape_of(0);
    if (!s || s->rank() == 0) return std::nullopt;
    const auto axis = ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(s->rank()));
    if (!axis) return std::nullopt;
    std::vector<Dim> dims = s->dims();
    const auto k = int_list(g, n, "k", 1);
    if (k && k->size() == 1 && (*k)[0] >= 0) {
      dims[static_cast<size_t>(*axis)] = (*k)[0];
    } else if (ops::topk_k_at_run_time(g, n)) {  // the K it reads when it runs, named
      const ValueId named = n.outputs[0] >= 0 || n.outputs.size() < 2 ? n.outputs[0] : n.outputs[1];
      if (named < 0) return std::nullopt;
      dims[static_cast<size_t>(*axis)] = ops::topk_length(g.value(named).name);
    } else {
      return std::nullopt;
    }
    return Shape(std::move(dims));
  }
  if (out_index != 0) return std::nullopt;
  if (op == "NonZero") {  // [rank, the count it finds when it runs], named (ops/nonzero.h)
    const Shape* s = shape_of(0);
    if (!s || n.outputs.empty() || n.outputs[0] < 0) return std::nullopt;
    return Shape(
        {Dim(static_cast<int64_t>(s->rank())), ops::nonzero_length(g.value(n.outputs[0]).name)});
  }
  if (op == "NonMaxSuppression") {  // [the count it selects when it runs, 3] (ops/nms.h)
    if (n.outputs.empty() || n.outputs[0] < 0) return std::nullopt;
    return Shape({ops::nonzero_length(g.value(n.outputs[0]).name), Dim(3)});
  }
  if (op == "OneHot") {  // the values' type; the depth inserted at the axis
    *dtype = dtype_of(2);
    const Shape* s = shape_of(0);
    const auto depth = int_list(g, n, "", 1);
    if (!s || !depth || depth->size() != 1 || (*depth)[0] < 0) return std::nullopt;
    const auto axis =
        ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(s->rank()) + 1);
    if (!axis) return std::nullopt;
    std::vector<Dim> dims = s->dims();
    dims.insert(dims.begin() + *axis, Dim((*depth)[0]));
    return Shape(std::move(dims));
  }
  if (same_shape_ops().count(op)) {
    const Shape* s = shape_of(0);
    return s ? std::optional<Shape>(*s) : std::nullopt;
  }
  if (op == "EyeLike") {  // torch.eye(n): its input's shape, its dtype attribute's type
    *dtype = g.value(n.inputs[0]).dtype;
    if (n.attrs.count("dtype"))
      if (auto t = eval::dtype_from_onnx(n.attr_int("dtype", 0))) *dtype = *t;
    const Shape* s = shape_of(0);
    return s ? std::optional<Shape>(*s) : std::nullopt;
  }
  if (op == "Cast" || op == "BitCast") {
    // The target's ONNX code: a graph built in C++ (no importer inferred it)
    // needs it too, since a backend keeps an integer block input's dtype.
    *dtype = DType::kUndefined;
    if (op == "Cast")
      if (auto t = eval::dtype_from_onnx(ops::cast_to(n))) *dtype = *t;
    const Shape* s = shape_of(0);
    return s ? std::optional<Shape>(*s) : std::nullopt;
  }
  if (broadcast_ops().count(op)) {
    // The dtype first: it is known even where a shape is not.
    if (op == "Where") *dtype = dtype_of(1);
    if (is_compare(op)) *dtype = DType::kBool;
    std::vector<std::vector<Dim>> shapes;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Shape* s = shape_of(i);
      if (s == nullptr) return std::nullopt;
      shapes.push_back(s->dims());
    }
    return shape_or_none(ops::broadcast_shape<Dim>(op, shapes));
  }
  if (op == "MatMul") {
    const Shape* a = shape_of(0);
    const Shape* b = shape_of(1);
    if (!a || !b) return std::nullopt;
    return shape_or_none(ops::matmul_shape(a->dims(), b->dims()));
  }
  if (op == "Conv") {
    const Shape* x = shape_of(0);
    const Shape* w = shape_of(1);
    const auto ca = ops::conv_attrs(n);
    if (!x || !w || !ca) return std::nullopt;
    return shape_or_none(ops::conv_shape(n, *ca, x->dims(), w->dims()));
  }
  if (op == "MaxPool" || op == "AveragePool") {
    const Shape* x = shape_of(0);
    const auto pa = ops::pool_attrs(n);
    if (!x || !pa) return std::nullopt;
    return shape_or_none(ops::pool_shape(n, *pa, x->dims()));
  }
  if (op == "DeformConv") {
    const Shape* x = shape_of(0);
    const Shape* w = shape_of(1);
    const Shape* off = shape_of(2);
    if (!x || !w || !off) return std::nullopt;
    return shape_or_none(ops::deform_conv_shape(x->dims(), w->dims(), off->dims()));
  }
  if (op == "MaxRoiPool") {
    const Shape* x = shape_of(0);
    const Shape* rois = shape_of(1);
    if (!x || !rois) return std::nullopt;
    return shape_or_none(
        ops::max_roi_pool_shape(x->dims(), rois->dims(), n.attr_ints("pooled_shape")));
  }
  if (op == "GridSample") {  // else every dim after it is unknown (RAFT's correlation lookup)
    const Shape* x = shape_of(0);
    const Shape* grid = shape_of(1);
    if (!x || !grid) return std::nullopt;
    return shape_or_none(ops::grid_sample_shape(x->dims(), grid->dims()));
  }
  if (op == "RoiAlign") {  // [num_rois, C, output_height, output_width]
    const Shape* x = shape_of(0);
    const Shape* rois = shape_of(1);
    if (!x || !rois) return std::nullopt;
    return shape_or_none(ops::roi_align_shape(
        x->dims(), rois->dims(), n.attr_int("output_height", 1), n.attr_int("output_width", 1)));
  }
  if (op == "Col2Im") {
    const Shape* x = shape_of(0);
    const auto image = constant_ints(g, n, 1), block = constant_ints(g, n, 2);
    if (!x || !image || !block) return std::nullopt;
    return shape_or_none(ops::col2im_shape(x->dims(), *image, *block));
  }
  if (op == "CenterCropPad") {
    const Shape* x = shape_of(0);
    const auto target = constant_ints(g, n, 1);
    if (!x || !target) return std::nullopt;
    return shape_or_none(ops::center_crop_pad_shape(x->dims(), *target, n.attr_ints("axes")));
  }
  if (op == "AffineGrid") {
    const auto size = constant_ints(g, n, 1);
    if (!size) return std::nullopt;
    return shape_or_none(ops::affine_grid_shape<Dim>(*size));
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    const Shape* x = shape_of(0);
    if (!x) return std::nullopt;
    return shape_or_none(ops::global_pool_shape(op, x->dims()));
  }
  if (op == "Gemm") {
    const Shape* a = shape_of(0);
    const Shape* b = shape_of(1);
    if (!a || !b) return std::nullopt;
    const auto ga = ops::gemm_attrs(n);
    if (!ga) return std::nullopt;
    const Shape* c = shape_of(2);  // checked when known
    const std::vector<Dim> cd = c ? c->dims() : std::vector<Dim>();
    return shape_or_none(ops::gemm_shape(*ga, a->dims(), b->dims(), c ? &cd : nullptr));
  }
  if (op == "Transpose") {
    const Shape* s = shape_of(0);
    if (!s) return std::nullopt;
    const auto perm = ops::transpose_perm(n, static_cast<int64_t>(s->rank()));
    if (!perm) return std::nullopt;
    return Shape(ops::transpose_shape(s->dims(), *perm));
  }
  if (op == "Reshape") {
    const Shape* s = shape_of(0);
    const Tensor* spec = constant_of(g, n.inputs.size() > 1 ? n.inputs[1] : kNoValue);
    if (!spec) return computed_shape(g, n, values);
    if (!s) return std::nullopt;
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < spec->numel(); ++i) dims.push_back(tensor_element_as_int64(*spec, i));
    return shape_or_none(ops::reshape_shape(s->dims(), dims, ops::reshape_allowzero(n)));
  }
  if (op == "Slice") {
    const Shape* s = shape_of(0);
    if (!s) return std::nullopt;
    const bool before_10 = g.opset() < 10;
    auto starts = int_list(g, n, before_10 ? "starts" : "", 1);
    auto ends = int_list(g, n, before_10 ? "ends" : "", 2);
    const bool has_axes = before_10 ? n.has_attr("axes") : n.inputs.size() > 3 && n.inputs[3] >= 0;
    const bool has_steps = !before_10 && n.inputs.size() > 4 && n.inputs[4] >= 0;
    auto axes = has_axes ? int_list(g, n, before_10 ? "axes" : "", 3) : std::nullopt;
    auto steps = has_steps ? int_list(g, n, "", 4) : std::nullopt;
    std::optional<Shape> out;
    if (!starts || !ends || (has_axes && !axes) || (has_steps && !steps))
      out = before_10 ? std::nullopt : computed_shape(g, n, values);
    else
      out = shape_or_none(ops::slice_shape(s->dims(), *starts, *ends, axes ? &*axes : nullptr,
                                           steps ? &*steps : nullptr));
    if (before_10 || (out && out->rank() != s->rank())) return out;
    // A sliced axis whose length no rule fixes (x[:300] of a count): the
    // length it finds when it runs, named (ops/run_length.h).
    std::optional<std::vector<int64_t>> sliced = axes;
    if (!has_axes) {
      const Shape* b = shape_of(1);
      if (!b || b->rank() != 1 || !(*b)[0].is_static()) return out;
      sliced.emplace();
      for (int64_t a = 0; a < (*b)[0].value(); ++a) sliced->push_back(a);
    }
    if (!sliced) return out;
    std::vector<Dim> dims = out ? out->dims() : s->dims();
    for (int64_t a : *sliced) {
      const auto axis = ops::try_normalize_axis(a, static_cast<int64_t>(s->rank()));
      if (!axis) return out;
      Dim& d = dims[static_cast<size_t>(*axis)];
      if (!out || d.is_unknown()) d = ops::slice_length(g.value(n.outputs[0]).name, *axis);
    }
    return Shape(std::move(dims));
  }
  if (op == "Pad") {
    // Constant mode or not, the output dims are the same.
    const Shape* s = shape_of(0);
    const bool before_11 = g.opset() < 11;
    const auto pa = ops::pad_attrs(n);
    std::optional<std::vector<int64_t>> pads;
    if (pa) pads = before_11 ? std::optional(pa->pads) : int_list(g, n, "", 1);
    const bool has_axes = !before_11 && n.inputs.size() > 3 && n.inputs[3] >= 0;
    auto axes = has_axes ? int_list(g, n, "", 3) : std::nullopt;
    if (!s || !pads || (has_axes && !axes)) return std::nullopt;
    return shape_or_none(ops::pad_shape(s->dims(), *pads, axes ? &*axes : nullptr));
  }
  if (op == "Expand" || op == "Tile" || op == "Resize") return computed_shape(g, n, values);
  if (op == "ConstantOfShape") {
    *dtype = DType::kF32;
    if (auto it = n.attrs.find("value"); it != n.attrs.end())
      if (const auto* t = std::get_if<Tensor>(&it->second)) *dtype = t->dtype();
    return computed_shape(g, n, values);
  }
  if (op == "Flatten") {
    const Shape* s = shape_of(0);
    if (!s) return std::nullopt;
    return shape_or_none(ops::flatten_shape(ops::axis_attr(n), s->dims()));
  }
  if (op == "Shape") {
    *dtype = DType::kI64;
    const Shape* s = shape_of(0);
    if (!s) return std::nullopt;
    return Shape(ops::shape_shape<Dim>(ops::shape_range(n, static_cast<int64_t>(s->rank()))));
  }
  if (op == "Size") {
    *dtype = DType::kI64;
    return Shape{};
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    const Shape* s = shape_of(0);
    auto axes = int_list(g, n, "axes", 1);
    if (!axes && op == "Squeeze" && (n.inputs.size() < 2 || n.inputs[1] < 0)) axes.emplace();
    if (!s || !axes) return std::nullopt;
    return shape_or_none(op == "Unsqueeze" ? ops::unsqueeze_shape(s->dims(), *axes)
                                           : ops::squeeze_shape(s->dims(), *axes));
  }
  if (op == "Concat") {
    std::vector<std::vector<Dim>> inputs;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Shape* s = shape_of(i);
      if (!s) return std::nullopt;
      inputs.push_back(s->dims());
    }
    return shape_or_none(ops::concat_shape(ops::axis_attr(n), inputs));
  }
  if (op == "Range" && n.inputs.size() == 3) {
    auto number = [&](size_t i) -> std::optional<int64_t> {
      const Value& v = g.value(n.inputs[i]);
      if (!v.initializer || v.initializer->numel() != 1) return std::nullopt;
      const DType t = v.initializer->dtype();
      if (t == DType::kI64 || t == DType::kI32) return tensor_element_as_int64(*v.initializer, 0);
      // A float Range counts as an integer one where its start and delta are
      // whole numbers (torch.arange(n, dtype=torch.float32): Range(0.0,
      // Cast(n), 1.0)); its limit's dim is read through the Cast below.
      if (t != DType::kF32 && t != DType::kF64) return std::nullopt;
      const double x = tensor_element_as_double(*v.initializer, 0);
      if (!(std::abs(x) < 9.0e15) || std::floor(x) != x) return std::nullopt;
      return static_cast<int64_t>(x);
    };
    auto dim_of = [&](size_t i) {
      Dim d = scalar_dim(g, n.inputs[i]);
      if (auto e = values.of(n.inputs[i]); d.is_unknown() && e && e->size() == 1) d = (*e)[0].dim();
      return d;
    };
    const Dim limit = dim_of(1);
    // By 1 from a start computed from dims: limit - start, as an expression
    // (a KV-cache step's positions, Range(past, past + seq): seq), where it
    // cannot be negative (no term subtracted: dims and positive numbers).
    if (const Dim start = dim_of(0);
        number(2) == 1 && !number(0) && !start.is_unknown() && !limit.is_unknown()) {
      const ops::SymInt span = ops::SymInt::of(limit) - ops::SymInt::of(start);
      if (span.is_known() && span.to_string().find('-') == std::string::npos)
        return Shape{span.dim()};
    }
    // By -1 between computed bounds: start - limit (XLNet's relative
    // positions, arange(klen, -qlen, -1.0): klen + qlen).
    if (number(2) == -1) {
      auto sym = [&](size_t i) -> std::optional<ops::SymInt> {
        if (auto k = number(i)) return ops::SymInt(*k);
        if (auto e = values.of(n.inputs[i]); e && e->size() == 1 && (*e)[0].is_known())
          return (*e)[0];
        return std::nullopt;
      };
      const auto start = sym(0), stop = sym(1);
      if (start && stop) {
        const ops::SymInt span = *start - *stop;
        if (span.is_known() && span.to_string().find('-') == std::string::npos)
          return Shape{span.dim()};
      }
    }
    auto r = ops::range_shape(number(0), limit, number(2));
    return r ? Shape(std::move(*r)) : Shape{Dim::unknown()};
  }
  if (op == "Gather" || op == "GatherElements") {
    const Shape* data = shape_of(0);
    const Shape* idx = shape_of(1);
    if (!data || !idx) return std::nullopt;
    const int64_t axis = ops::axis_attr(n);
    return shape_or_none(op == "Gather"
                             ? ops::gather_shape(axis, data->dims(), idx->dims())
                             : ops::gather_elements_shape(axis, data->dims(), idx->dims()));
  }
  if (op == "GatherND") {
    const Shape* data = shape_of(0);
    const Shape* idx = shape_of(1);
    if (!data || !idx) return std::nullopt;
    return shape_or_none(
        ops::gather_nd_shape(n.attr_int("batch_dims", 0), data->dims(), idx->dims()));
  }
  if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") {
    // The dtype first: it is known even where a shape is not.
    if (op == "ArgMax" || op == "ArgMin") *dtype = DType::kI64;
    const Shape* s = shape_of(0);
    const auto ra = ops::reduce_attrs(n);
    if (!s || !ra) return std::nullopt;
    std::optional<std::vector<int64_t>> axes;
    if (op == "ArgMax" || op == "ArgMin") {
      axes = std::vector<int64_t>{ops::axis_attr(n)};
    } else {
      axes = int_list(g, n, "axes", 1);  // none: not given (every axis), or not a constant
      if (!axes && (n.inputs.size() < 2 || n.inputs[1] < 0)) axes.emplace();
    }
    return shape_or_none(ops::reduce_shape(op, *ra, s->dims(), axes ? &*axes : nullptr));
  }
  return std::nullopt;
}

/// How much a dim says: 0 unknown; 1 a placeholder symbol ONNX's shape
/// inference made up for an unknown dim ("unk__" and a number) or an
/// expression of one ("(unk__34-1)": a Slice of such a dim, propagated here
/// before the placeholder itself was refined); 2 a Slice's run-time length
/// (ops/run_length.h), named because no rule fixed it then, which folding
/// may since have fixed (its input made static, its bounds constants); 3 a
/// number or a real symbol.
int how_known(const Dim& d) {
  if (d.is_unknown()) return 0;
  if (!d.is_symbolic()) return 3;
  const std::string& s = d.symbol_name();
  for (size_t at = s.find("unk__"); at != std::string::npos; at = s.find("unk__", at + 1))
    if (at + 5 < s.size() && s[at + 5] >= '0' && s[at + 5] <= '9' &&
        (at == 0 || !(std::isalnum(static_cast<unsigned char>(s[at - 1])) || s[at - 1] == '_')))
      return 1;
  if (s.rfind(ops::kSliceLengthPrefix, 0) == 0 && ops::is_run_length(d)) return 2;
  return 3;
}

}  // namespace

int propagate_shapes(Graph& g) {
  auto order = g.topological_order();
  if (!order) return 0;
  int filled = 0;
  ShapeValues values(g);
  for (NodeId id : *order) {
    const Node& n = g.node(id);
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const ValueId o = n.outputs[k];
      if (o < 0) continue;
      DType dt = DType::kUndefined;
      std::optional<Shape> s = infer(g, n, k, &dt, values);
      Value& v = g.value(o);
      if (v.dtype == DType::kUndefined) v.dtype = dt;
      if (!v.shape && s) {
        v.shape = std::move(s);
        ++filled;
      } else if (v.shape && s && v.shape->rank() == s->rank()) {
        // Refine: a dim the importer's inference left unknown, or named with
        // one of the placeholders ONNX's inference invents ("unk__3": it knows
        // no Range length), takes a number or a real symbol inferred here, or
        // a Slice's run-time length; that length, a number or a real symbol.
        std::vector<Dim> dims = v.shape->dims();
        bool changed = false;
        for (size_t i = 0; i < dims.size(); ++i)
          if (how_known((*s)[i]) >= 2 && how_known((*s)[i]) > how_known(dims[i])) {
            dims[i] = (*s)[i];
            changed = true;
          }
        if (changed) {
          v.shape = Shape(std::move(dims));
          ++filled;
        }
      }
    }
  }
  return filled;
}

bool broadcasts(const std::string& op_type) {
  return broadcast_ops().count(op_type) > 0;
}

}  // namespace hone::passes
