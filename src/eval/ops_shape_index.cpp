// Reference kernels that select elements by position or condition: Slice,
// Gather, GatherElements, GatherND, Compress, NonZero, OneHot.
#include <algorithm>
#include <limits>

#include "eval/kernel_util.h"
#include "eval/ops_shape_internal.h"
#include "hone/shape.h"
#include "ops/attrs.h"
#include "ops/gather.h"

namespace hone::eval {
namespace {

using namespace shape_detail;

Result<std::vector<int64_t>> read_indices(const Tensor& t, const char* what) {
  if (!is_integer(t.dtype()))
    return fail(ErrorCode::kInvalidArgument,
                std::string(what) + " must be an integer tensor, got " + t.describe());
  return to_int64s(t);
}

Result<void> slice(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false, has_steps = false;
  if (ctx.opset() < 10 && !ctx.has_input(1)) {
    starts = ctx.node().attr_ints("starts");
    ends = ctx.node().attr_ints("ends");
    has_axes = ctx.node().has_attr("axes");
    axes = ctx.node().attr_ints("axes");
  } else {
    HONE_TRY(starts, input_ints(ctx, 1, "Slice starts"));
    HONE_TRY(ends, input_ints(ctx, 2, "Slice ends"));
    if (ctx.has_input(3)) {
      has_axes = true;
      HONE_TRY(axes, input_ints(ctx, 3, "Slice axes"));
    }
    if (ctx.has_input(4)) {
      has_steps = true;
      HONE_TRY(steps, input_ints(ctx, 4, "Slice steps"));
    }
  }
  HONE_TRY(SliceWindow w, slice_window(x->shape(), starts, ends, has_axes ? &axes : nullptr,
                                       has_steps ? &steps : nullptr));
  Tensor y = Tensor::zeros(x->dtype(), w.out);
  strided_copy(*x, w.base, w.strides, y);
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> gather(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* idx_t, ctx.tensor(1));
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return fail(ErrorCode::kInvalidArgument, "Gather data must have rank >= 1");
  HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(ctx.node()), rank, "Gather axis"));
  HONE_TRY(std::vector<int64_t> idx, read_indices(*idx_t, "Gather indices"));
  const int64_t dim = x->dim(axis);
  for (int64_t& i : idx) {
    HONE_TRY(i, normalize_index(i, dim, "Gather index"));
  }
  std::vector<int64_t> out_shape(x->shape().begin(), x->shape().begin() + axis);
  out_shape.insert(out_shape.end(), idx_t->shape().begin(), idx_t->shape().end());
  out_shape.insert(out_shape.end(), x->shape().begin() + axis + 1, x->shape().end());
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= x->dim(a);
  for (int64_t a = axis + 1; a < rank; ++a) inner *= x->dim(a);
  HONE_TRY(Tensor y, Tensor::allocate_for_overwrite(x->dtype(), out_shape));  // every row copied
  const size_t es = dtype_size(x->dtype());
  const int64_t ni = static_cast<int64_t>(idx.size());
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < ni; ++j, dst += inner)
      copy_elements(x->raw(), (o * dim + idx[j]) * inner, y.raw(), dst, inner, es);
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> gather_elements(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* idx_t, ctx.tensor(1));
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0 || idx_t->rank() != x->rank())
    return fail(ErrorCode::kInvalidArgument, "GatherElements indices " + idx_t->describe() +
                                                 " must have the rank of data " + x->describe() +
                                                 " (at least 1)");
  HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(ctx.node()), rank, "GatherElements axis"));
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis && idx_t->dim(a) > x->dim(a))
      return fail(ErrorCode::kInvalidArgument, "GatherElements indices " + idx_t->describe() +
                                                   " are larger than data " + x->describe() +
                                                   " on axis " + std::to_string(a));
  HONE_TRY(std::vector<int64_t> idx, read_indices(*idx_t, "GatherElements indices"));
  const std::vector<int64_t> ds = strides_of(x->shape());
  const std::vector<int64_t>& ishape = idx_t->shape();
  Tensor y = Tensor::zeros(x->dtype(), ishape);
  const size_t es = dtype_size(x->dtype());
  const int64_t dim = x->dim(axis);
  std::vector<int64_t> pos(rank, 0);
  for (int64_t i = 0; i < static_cast<int64_t>(idx.size()); ++i) {
    HONE_TRY(int64_t k, normalize_index(idx[i], dim, "GatherElements index"));
    int64_t off = 0;
    for (int64_t a = 0; a < rank; ++a) off += (a == axis ? k : pos[a]) * ds[a];
    copy_elements(x->raw(), off, y.raw(), i, 1, es);
    for (int64_t a = rank - 1; a >= 0; --a) {
      if (++pos[a] < ishape[a]) break;
      pos[a] = 0;
    }
  }
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> gather_nd(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* idx_t, ctx.tensor(1));
  HONE_TRY(const ops::GatherNdLayout l,
           ops::gather_nd_layout(x->shape(), idx_t->shape(), ctx.node().attr_int("batch_dims", 0)));
  HONE_TRY(std::vector<int64_t> idx, read_indices(*idx_t, "GatherND indices"));
  Tensor y = Tensor::zeros(x->dtype(), l.out);
  const size_t es = dtype_size(x->dtype());
  int64_t dst = 0;
  for (int64_t bi = 0; bi < l.batch; ++bi) {
    for (int64_t t = 0; t < l.tuples; ++t, dst += l.slice) {
      const int64_t* tuple = idx.data() + (bi * l.tuples + t) * l.k;
      int64_t off = bi * l.batch_block;
      for (int64_t j = 0; j < l.k; ++j) {
        const auto uj = static_cast<size_t>(j);
        HONE_TRY(int64_t v, normalize_index(tuple[j], l.dims[uj], "GatherND index"));
        off += v * l.strides[uj];
      }
      copy_elements(x->raw(), off, y.raw(), dst, l.slice, es);
    }
  }
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> compress(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* cond_t, ctx.tensor(1));
  if (cond_t->rank() != 1)
    return fail(ErrorCode::kInvalidArgument,
                "Compress condition must be 1-D, got " + cond_t->describe());
  const std::vector<int64_t> cond = to_int64s(*cond_t);
  const bool flat = !ctx.node().has_attr("axis");
  int64_t axis = 0;
  if (!flat) {
    HONE_TRY(axis, normalize_axis(ops::axis_attr(ctx.node()), static_cast<int64_t>(x->rank()),
                                  "Compress axis"));
  }
  const int64_t dim = flat ? x->numel() : x->dim(axis);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < static_cast<int64_t>(cond.size()); ++i) {
    if (cond[i] == 0) continue;
    if (i >= dim)
      return fail(ErrorCode::kInvalidArgument,
                  "Compress condition " + cond_t->describe() + " selects index " +
                      std::to_string(i) + ", past the end (size " + std::to_string(dim) + ")");
    keep.push_back(i);
  }
  const int64_t nk = static_cast<int64_t>(keep.size());
  std::vector<int64_t> out_shape{nk};
  int64_t outer = 1, inner = 1;
  if (!flat) {
    out_shape = x->shape();
    out_shape[axis] = nk;
    for (int64_t a = 0; a < axis; ++a) outer *= x->dim(a);
    for (int64_t a = axis + 1; a < static_cast<int64_t>(x->rank()); ++a) inner *= x->dim(a);
  }
  Tensor y = Tensor::zeros(x->dtype(), out_shape);
  const size_t es = dtype_size(x->dtype());
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < nk; ++j, dst += inner)
      copy_elements(x->raw(), (o * dim + keep[j]) * inner, y.raw(), dst, inner, es);
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> non_zero(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  std::vector<int64_t> hits;
  HONE_CHECK_OK(dispatch_all(x->dtype(), [&]<class T>() -> Result<void> {
    const T* p = x->data<T>();
    for (int64_t i = 0; i < x->numel(); ++i) {
      bool nz;
      if constexpr (std::is_same_v<T, bool>)
        nz = p[i];
      else
        nz = to_f64(p[i]) != 0.0;
      if (nz) hits.push_back(i);
    }
    return {};
  }));
  const int64_t rank = static_cast<int64_t>(x->rank());
  const int64_t nnz = static_cast<int64_t>(hits.size());
  Tensor y = Tensor::zeros(DType::kI64, {rank, nnz});
  int64_t* out = y.data<int64_t>();
  for (int64_t j = 0; j < nnz; ++j) {
    int64_t lin = hits[j];
    for (int64_t a = rank - 1; a >= 0; --a) {
      out[a * nnz + j] = lin % x->dim(a);
      lin /= x->dim(a);
    }
  }
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> one_hot(KernelContext& ctx) {
  HONE_TRY(const Tensor* idx_t, ctx.tensor(0));
  HONE_TRY(const Tensor* depth_t, ctx.tensor(1));
  HONE_TRY(const Tensor* values, ctx.tensor(2));
  if (depth_t->numel() != 1)
    return fail(ErrorCode::kInvalidArgument,
                "OneHot depth must hold one value, got " + depth_t->describe());
  if (values->numel() != 2)
    return fail(ErrorCode::kInvalidArgument,
                "OneHot values must hold [off_value, on_value], got " + values->describe());
  const double depth_d = tensor_element_as_double(*depth_t, 0);
  if (!(depth_d >= 0.0 && depth_d < 9.0e15))
    return fail(ErrorCode::kInvalidArgument,
                "OneHot depth " + std::to_string(depth_d) + " is invalid");
  const int64_t depth = is_integer(depth_t->dtype()) ? tensor_element_as_int64(*depth_t, 0)
                                                     : static_cast<int64_t>(depth_d);
  const int64_t out_rank = static_cast<int64_t>(idx_t->rank()) + 1;
  HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(ctx.node()), out_rank, "OneHot axis"));
  std::vector<int64_t> out_shape = idx_t->shape();
  out_shape.insert(out_shape.begin() + axis, depth);
  HONE_TRY(Tensor y, Tensor::allocate(values->dtype(), out_shape));
  const size_t es = dtype_size(values->dtype());
  for (int64_t i = 0; i < y.numel(); ++i) copy_elements(values->raw(), 0, y.raw(), i, 1, es);
  int64_t inner = 1;
  for (int64_t a = axis; a < static_cast<int64_t>(idx_t->rank()); ++a) inner *= idx_t->dim(a);
  const std::vector<int64_t> idx = to_int64s(*idx_t);  // float indices truncate, as the spec casts
  for (int64_t i = 0; i < static_cast<int64_t>(idx.size()); ++i) {
    int64_t v = idx[i];
    if (v < 0) v += depth;
    if (v < 0 || v >= depth) continue;  // out of range: the row stays off_value
    const int64_t o = i / inner, in = i % inner;
    copy_elements(values->raw(), 1, y.raw(), (o * depth + v) * inner + in, 1, es);
  }
  ctx.set_output(0, std::move(y));
  return {};
}

}  // namespace

void register_shape_index_ops(OpRegistry& r) {
  r.add("Slice", slice);
  r.add("Gather", gather);
  r.add("GatherElements", gather_elements);
  r.add("GatherND", gather_nd);
  r.add("Compress", compress);
  r.add("NonZero", non_zero);
  r.add("OneHot", one_hot);
}

}  // namespace hone::eval
