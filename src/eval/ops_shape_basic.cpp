// Reference kernels that rearrange whole tensors: Reshape, Flatten, Transpose,
// Squeeze, Unsqueeze, Concat, Split, Shape, Size, Expand, Tile, and the
// constant makers Constant, ConstantOfShape, Range.
#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/kernel_util.h"
#include "eval/ops_shape_internal.h"
#include "hone/shape.h"
#include "ops/attrs.h"
#include "ops/split.h"

namespace hone::eval {
namespace {

using namespace shape_detail;

/// A fresh copy of `x` viewed with `shape` (numel already checked). Copied so
/// an output never aliases a caller-owned (possibly borrowed) input.
Result<Tensor> copy_as(const Tensor& x, std::vector<int64_t> shape) {
  HONE_TRY(Tensor y, Tensor::allocate_for_overwrite(x.dtype(), std::move(shape)));
  copy_bytes(y.raw(), x.raw(), x.nbytes());
  return y;
}

Result<void> reshape(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  std::vector<int64_t> target;
  if (ctx.opset() < 5 && !ctx.has_input(1)) {
    if (!ctx.node().has_attr("shape"))
      return fail(ErrorCode::kInvalidArgument, "Reshape (opset < 5) needs a 'shape' attribute");
    target = ctx.node().attr_ints("shape");
  } else {
    HONE_TRY(target, input_ints(ctx, 1, "Reshape shape"));
  }
  const bool allow_zero = ops::reshape_allowzero(ctx.node());
  int64_t infer_at = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t& d = target[i];
    if (d == 0 && !allow_zero) {
      if (i >= x->rank())
        return fail(ErrorCode::kInvalidArgument, "Reshape shape " + ints_to_string(target) +
                                                     " copies dim " + std::to_string(i) +
                                                     " (0) but the input " + x->describe() +
                                                     " has rank " + std::to_string(x->rank()));
      d = x->dim(i);
    }
    if (d == -1) {
      if (infer_at >= 0)
        return fail(ErrorCode::kInvalidArgument,
                    "Reshape shape " + ints_to_string(target) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1)
      return fail(ErrorCode::kInvalidArgument, "Reshape shape " + ints_to_string(target) +
                                                   " has a negative dim " + std::to_string(d));
    if (d == 0) has_zero = true;
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d)
      return fail(ErrorCode::kInvalidArgument,
                  "Reshape shape " + ints_to_string(target) + " is too large");
    known *= d;
  }
  if (infer_at >= 0) {
    if (has_zero && allow_zero)
      return fail(ErrorCode::kInvalidArgument, "Reshape shape " + ints_to_string(target) +
                                                   " has both 0 and -1 while allowzero=1");
    if (known == 0 || x->numel() % known != 0)
      return fail(ErrorCode::kInvalidArgument, "Reshape cannot infer the -1 in " +
                                                   ints_to_string(target) + " for input " +
                                                   x->describe());
    target[infer_at] = x->numel() / known;
  } else if (known != x->numel()) {
    return fail(ErrorCode::kInvalidArgument, "Reshape of " + x->describe() + " to " +
                                                 ints_to_string(target) +
                                                 " changes the element count");
  }
  HONE_TRY(Tensor y, copy_as(*x, std::move(target)));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> flatten(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const int64_t rank = static_cast<int64_t>(x->rank());
  const int64_t given = ops::axis_attr(ctx.node());
  const auto boundary = ops::try_normalize_boundary(given, rank);
  if (!boundary)
    return fail(ErrorCode::kInvalidArgument, "Flatten axis " + std::to_string(given) +
                                                 " is out of range for rank " +
                                                 std::to_string(rank));
  const int64_t axis = *boundary;
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < rank; ++a) (a < axis ? outer : inner) *= x->dim(a);
  HONE_TRY(Tensor y, copy_as(*x, {outer, inner}));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> transpose(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const int64_t rank = static_cast<int64_t>(x->rank());
  HONE_TRY(const std::vector<int64_t> perm, ops::transpose_perm(ctx.node(), rank));
  const std::vector<int64_t> in_strides = strides_of(x->shape());
  std::vector<int64_t> out_shape(rank), strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    out_shape[i] = x->dim(perm[i]);
    strides[i] = in_strides[perm[i]];
  }
  HONE_TRY(Tensor y, Tensor::allocate_for_overwrite(x->dtype(), out_shape));
  strided_copy(*x, 0, strides, y);
  ctx.set_output(0, std::move(y));
  return {};
}

/// Axes from the attribute (opset < 13) or input 1 (opset 13+); `present`
/// says whether any were given.
Result<std::vector<int64_t>> axes_attr_or_input(const KernelContext& ctx, const char* what,
                                                bool* present) {
  if (ctx.has_input(1)) {
    *present = true;
    return input_ints(ctx, 1, what);
  }
  *present = ctx.node().has_attr("axes");
  return ctx.node().attr_ints("axes");
}

Result<void> squeeze(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const int64_t rank = static_cast<int64_t>(x->rank());
  bool present = false;
  HONE_TRY(std::vector<int64_t> axes, axes_attr_or_input(ctx, "Squeeze axes", &present));
  std::vector<bool> drop(rank, false);
  if (!present) {
    for (int64_t a = 0; a < rank; ++a) drop[a] = x->dim(a) == 1;
  } else {
    HONE_TRY(axes, normalize_axes(axes, rank, "Squeeze axes"));
    for (int64_t a : axes) {
      if (x->dim(a) != 1)
        return fail(ErrorCode::kInvalidArgument, "Squeeze axis " + std::to_string(a) +
                                                     " of input " + x->describe() + " has size " +
                                                     std::to_string(x->dim(a)) + ", not 1");
      drop[a] = true;
    }
  }
  std::vector<int64_t> shape;
  for (int64_t a = 0; a < rank; ++a)
    if (!drop[a]) shape.push_back(x->dim(a));
  HONE_TRY(Tensor y, copy_as(*x, std::move(shape)));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> unsqueeze(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  bool present = false;
  HONE_TRY(std::vector<int64_t> axes, axes_attr_or_input(ctx, "Unsqueeze axes", &present));
  if (!present)
    return fail(ErrorCode::kInvalidArgument,
                "Unsqueeze needs axes (attribute before opset 13, "
                "input 1 from opset 13)");
  const int64_t out_rank = static_cast<int64_t>(x->rank() + axes.size());
  HONE_TRY(axes, normalize_axes(axes, out_rank, "Unsqueeze axes"));
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : axes) inserted[a] = true;
  std::vector<int64_t> shape(out_rank);
  size_t next = 0;
  for (int64_t a = 0; a < out_rank; ++a) shape[a] = inserted[a] ? 1 : x->dim(next++);
  HONE_TRY(Tensor y, copy_as(*x, std::move(shape)));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> concat(KernelContext& ctx) {
  if (ctx.num_inputs() == 0 || !ctx.has_input(0))
    return fail(ErrorCode::kInvalidArgument, "Concat needs at least one input");
  HONE_TRY(const Tensor* first, ctx.tensor(0));
  if (!ctx.node().has_attr("axis") && ctx.opset() >= 4)
    return fail(ErrorCode::kInvalidArgument, "Concat needs an 'axis' attribute");
  const int64_t rank = static_cast<int64_t>(first->rank());
  if (rank == 0) return fail(ErrorCode::kInvalidArgument, "Concat inputs must have rank >= 1");
  HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(ctx.node()), rank, "Concat axis"));
  std::vector<const Tensor*> xs;
  std::vector<int64_t> shape = first->shape();
  shape[axis] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    HONE_TRY(const Tensor* t, ctx.tensor(i));
    if (t->dtype() != first->dtype() || static_cast<int64_t>(t->rank()) != rank)
      return fail(ErrorCode::kInvalidArgument, "Concat input " + std::to_string(i) + " " +
                                                   t->describe() + " does not match input 0 " +
                                                   first->describe());
    for (int64_t a = 0; a < rank; ++a)
      if (a != axis && t->dim(a) != first->dim(a))
        return fail(ErrorCode::kInvalidArgument,
                    "Concat input " + std::to_string(i) + " " + t->describe() +
                        " differs from input 0 " + first->describe() + " on axis " +
                        std::to_string(a) + " (concatenating on axis " + std::to_string(axis) +
                        ")");
    shape[axis] += t->dim(axis);
    xs.push_back(t);
  }
  Tensor y = Tensor::zeros(first->dtype(), shape);
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= shape[a];
  for (int64_t a = axis + 1; a < rank; ++a) inner *= shape[a];
  const size_t es = dtype_size(first->dtype());
  const int64_t out_row = shape[axis] * inner;
  int64_t col = 0;
  for (const Tensor* t : xs) {
    const int64_t row = t->dim(axis) * inner;
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(t->raw(), o * row, y.raw(), o * out_row + col, row, es);
    col += row;
  }
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> split(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return fail(ErrorCode::kInvalidArgument, "Split input must have rank >= 1");
  HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(ctx.node()), rank, "Split axis"));
  const int64_t dim = x->dim(axis);
  const int64_t n_out = static_cast<int64_t>(ctx.num_outputs());
  std::vector<int64_t> given;
  if (ctx.has_input(1)) {
    HONE_TRY(given, input_ints(ctx, 1, "Split split"));
  }
  HONE_TRY(const std::vector<int64_t> sizes, ops::split_sizes(ctx.node(), dim, ctx.num_outputs(),
                                                              ctx.has_input(1) ? &given : nullptr));
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= x->dim(a);
  for (int64_t a = axis + 1; a < rank; ++a) inner *= x->dim(a);
  const size_t es = dtype_size(x->dtype());
  int64_t start = 0;
  for (int64_t i = 0; i < n_out; ++i) {
    std::vector<int64_t> shape = x->shape();
    shape[axis] = sizes[i];
    Tensor y = Tensor::zeros(x->dtype(), shape);
    const int64_t row = sizes[i] * inner;
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(x->raw(), o * dim * inner + start * inner, y.raw(), o * row, row, es);
    start += sizes[i];
    set_if_wanted(ctx, static_cast<size_t>(i), std::move(y));
  }
  return {};
}

Result<void> shape_op(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const int64_t rank = static_cast<int64_t>(x->rank());
  const auto [start, end] = ops::shape_range(ctx.node(), rank);
  std::vector<int64_t> dims;
  for (int64_t a = start; a < end; ++a) dims.push_back(x->dim(a));
  const int64_t n = static_cast<int64_t>(dims.size());
  ctx.set_output(0, Tensor::from<int64_t>({n}, dims));
  return {};
}

Result<void> size_op(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  ctx.set_output(0, Tensor::scalar<int64_t>(x->numel()));
  return {};
}

Result<void> expand(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(std::vector<int64_t> shape, input_ints(ctx, 1, "Expand shape"));
  for (int64_t d : shape)
    if (d < 0)
      return fail(ErrorCode::kInvalidArgument,
                  "Expand shape " + ints_to_string(shape) + " has a negative dim");
  HONE_TRY(std::vector<int64_t> out_shape, broadcast_shapes({x->shape(), shape}));
  HONE_TRY(Tensor y, Tensor::allocate(x->dtype(), out_shape));
  strided_copy(*x, 0, broadcast_strides(x->shape(), out_shape), y);
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> tile(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(std::vector<int64_t> repeats, input_ints(ctx, 1, "Tile repeats"));
  const size_t rank = x->rank();
  if (repeats.size() != rank)
    return fail(ErrorCode::kInvalidArgument, "Tile repeats " + ints_to_string(repeats) +
                                                 " must have one entry per axis of " +
                                                 x->describe());
  // Output viewed as [r0, d0, r1, d1, ...]: repeat axes read with stride 0.
  std::vector<int64_t> out_shape(rank), view_shape, view_strides;
  const std::vector<int64_t> in_strides = strides_of(x->shape());
  for (size_t a = 0; a < rank; ++a) {
    if (repeats[a] < 0)
      return fail(ErrorCode::kInvalidArgument,
                  "Tile repeats " + ints_to_string(repeats) + " has a negative entry");
    if (x->dim(a) != 0 && repeats[a] > std::numeric_limits<int64_t>::max() / x->dim(a))
      return fail(ErrorCode::kInvalidArgument,
                  "Tile repeats " + ints_to_string(repeats) + " overflow the output size");
    out_shape[a] = x->dim(a) * repeats[a];
    view_shape.insert(view_shape.end(), {repeats[a], x->dim(a)});
    view_strides.insert(view_strides.end(), {0, in_strides[a]});
  }
  HONE_TRY(Tensor view, Tensor::allocate(x->dtype(), view_shape));
  strided_copy(*x, 0, view_strides, view);
  HONE_TRY(Tensor y, view.reshaped(out_shape));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> constant(KernelContext& ctx) {
  const Node& n = ctx.node();
  if (const Tensor* t = n.attr_tensor("value")) {
    ctx.set_output(0, t->clone());
  } else if (n.has_attr("value_float")) {
    ctx.set_output(0, Tensor::scalar<float>(n.attr_float("value_float", 0.0f)));
  } else if (n.has_attr("value_floats")) {
    const std::vector<float> v = n.attr_floats("value_floats");
    ctx.set_output(0, Tensor::from<float>({static_cast<int64_t>(v.size())}, v));
  } else if (n.has_attr("value_int")) {
    ctx.set_output(0, Tensor::scalar<int64_t>(n.attr_int("value_int", 0)));
  } else if (n.has_attr("value_ints")) {
    const std::vector<int64_t> v = n.attr_ints("value_ints");
    ctx.set_output(0, Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v));
  } else if (n.has_attr("sparse_value") || n.has_attr("value_string") ||
             n.has_attr("value_strings")) {
    return fail(ErrorCode::kUnsupported,
                "Constant with a sparse or string value is not supported by the reference");
  } else {
    return fail(ErrorCode::kInvalidArgument, "Constant has no value attribute");
  }
  return {};
}

Result<void> constant_of_shape(KernelContext& ctx) {
  HONE_TRY(std::vector<int64_t> shape, input_ints(ctx, 0, "ConstantOfShape shape"));
  Tensor value = Tensor::scalar<float>(0.0f);
  if (const Tensor* v = ctx.node().attr_tensor("value")) {
    if (v->numel() != 1)
      return fail(ErrorCode::kInvalidArgument,
                  "ConstantOfShape value must hold one element, got " + v->describe());
    value = *v;
  }
  HONE_TRY(Tensor y, Tensor::allocate(value.dtype(), shape));
  const size_t es = dtype_size(value.dtype());
  for (int64_t i = 0; i < y.numel(); ++i) copy_elements(value.raw(), 0, y.raw(), i, 1, es);
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> range(KernelContext& ctx) {
  HONE_TRY(const Tensor* start_t, ctx.tensor(0));
  HONE_TRY(const Tensor* limit_t, ctx.tensor(1));
  HONE_TRY(const Tensor* delta_t, ctx.tensor(2));
  const DType dt = start_t->dtype();
  for (const Tensor* t : {start_t, limit_t, delta_t}) {
    if (t->numel() != 1 || t->dtype() != dt)
      return fail(ErrorCode::kInvalidArgument,
                  "Range start, limit and delta must be scalars of one "
                  "dtype, got " +
                      start_t->describe() + ", " + limit_t->describe() + ", " +
                      delta_t->describe());
  }
  if (is_integer(dt)) {
    const __int128 start = tensor_element_as_int64(*start_t, 0);
    const __int128 limit = tensor_element_as_int64(*limit_t, 0);
    const __int128 delta = tensor_element_as_int64(*delta_t, 0);
    if (delta == 0) return fail(ErrorCode::kInvalidArgument, "Range delta must not be 0");
    const __int128 diff = limit - start;
    __int128 n = diff / delta;
    if (n * delta != diff) ++n;  // ceil for same signs; for opposite signs n <= 0 anyway
    if (n < 0) n = 0;
    if (n > (__int128{1} << 48))
      return fail(ErrorCode::kInvalidArgument, "Range gives too many elements");
    HONE_TRY(Tensor y, Tensor::allocate(dt, {static_cast<int64_t>(n)}));
    HONE_CHECK_OK(dispatch_integer(dt, [&]<class T>() -> Result<void> {
      T* p = y.data<T>();
      for (int64_t i = 0; i < static_cast<int64_t>(n); ++i)
        p[i] = static_cast<T>(static_cast<int64_t>(start + delta * i));
      return {};
    }));
    ctx.set_output(0, std::move(y));
    return {};
  }
  const double start = tensor_element_as_double(*start_t, 0);
  const double limit = tensor_element_as_double(*limit_t, 0);
  const double delta = tensor_element_as_double(*delta_t, 0);
  if (delta == 0.0) return fail(ErrorCode::kInvalidArgument, "Range delta must not be 0");
  const double nd = std::max(std::ceil((limit - start) / delta), 0.0);
  if (!(nd <= static_cast<double>(int64_t{1} << 48)))
    return fail(ErrorCode::kInvalidArgument,
                "Range gives too many elements (start " + std::to_string(start) + ", limit " +
                    std::to_string(limit) + ", delta " + std::to_string(delta) + ")");
  const int64_t n = static_cast<int64_t>(nd);
  HONE_TRY(Tensor y, Tensor::allocate(dt, {n}));
  HONE_CHECK_OK(dispatch_float(dt, [&]<class T>() -> Result<void> {
    T* p = y.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = from_f64<T>(start + static_cast<double>(i) * delta);
    return {};
  }));
  ctx.set_output(0, std::move(y));
  return {};
}

}  // namespace

void register_shape_basic_ops(OpRegistry& r) {
  r.add("Reshape", reshape);
  r.add("Flatten", flatten);
  r.add("Transpose", transpose);
  r.add("Squeeze", squeeze);
  r.add("Unsqueeze", unsqueeze);
  r.add("Concat", concat);
  r.add("Split", split);
  r.add("Shape", shape_op);
  r.add("Size", size_op);
  r.add("Expand", expand);
  r.add("Tile", tile);
  r.add("Constant", constant);
  r.add("ConstantOfShape", constant_of_shape);
  r.add("Range", range);
}

}  // namespace hone::eval
