// Reference kernels that re-lay a tensor out or mask it: Pad, CenterCropPad,
// DepthToSpace, SpaceToDepth, Trilu, ReverseSequence, EyeLike.
#include <algorithm>
#include <cstring>
#include <limits>

#include "eval/kernel_util.h"
#include "eval/ops_shape_internal.h"
#include "hone/shape.h"
#include "ops/attrs.h"
#include "ops/depth_space.h"
#include "ops/pad.h"

namespace hone::eval {
namespace {

using namespace shape_detail;

/// Writes every output element from its source offset (per-axis offsets
/// summed; any negative part means "use the pad value").
template <class E>
void pad_fill(const E* in, const std::vector<std::vector<int64_t>>& offs,
              const std::vector<int64_t>& out_shape, E value, E* out) {
  const size_t rank = out_shape.size();
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  int64_t outer = 1;
  for (size_t a = 0; a + 1 < rank; ++a) outer *= out_shape[a];
  const int64_t inner = out_shape[rank - 1];
  const std::vector<int64_t>& last = offs[rank - 1];
  std::vector<int64_t> pos(rank, 0);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t base = 0;
    bool valid = true;
    for (size_t a = 0; a + 1 < rank; ++a) {
      const int64_t v = offs[a][pos[a]];
      if (v < 0) {
        valid = false;
        break;
      }
      base += v;
    }
    for (int64_t i = 0; i < inner; ++i) out[i] = valid && last[i] >= 0 ? in[base + last[i]] : value;
    out += inner;
    for (int64_t a = static_cast<int64_t>(rank) - 2; a >= 0; --a) {
      if (++pos[a] < out_shape[a]) break;
      pos[a] = 0;
    }
  }
}

Result<void> pad(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const ops::PadAttrs pa, ops::pad_attrs(ctx.node()));
  std::vector<int64_t> pads;
  Tensor value;
  std::vector<int64_t> axes;
  bool has_axes = false;
  if (ctx.opset() < 11 && !ctx.has_input(1)) {
    pads = pa.pads;
    value = from_doubles(x->dtype(), {}, std::vector<double>{pa.value});
  } else {
    HONE_TRY(pads, input_ints(ctx, 1, "Pad pads"));
    if (ctx.has_input(2) && ctx.input(2).numel() > 0) {
      HONE_TRY(const Tensor* v, ctx.tensor(2));
      if (v->numel() != 1)
        return fail(ErrorCode::kInvalidArgument,
                    "Pad constant_value must hold one element, got " + v->describe());
      value = cast_tensor(*v, x->dtype());
    } else {
      value = Tensor::zeros(x->dtype(), {});
    }
    if (ctx.has_input(3)) {
      HONE_TRY(axes, input_ints(ctx, 3, "Pad axes"));
      has_axes = true;
    }
  }
  HONE_TRY(const ops::PadWindow w, ops::pad_window(x->shape(), pads, has_axes ? &axes : nullptr));

  HONE_TRY(const std::vector<std::vector<int64_t>> offs,
           ops::pad_source_offsets(x->shape(), w, pa.mode));
  const std::vector<int64_t>& out_shape = w.out;
  HONE_TRY(Tensor y, Tensor::allocate(x->dtype(), out_shape));
  if (y.numel() == 0) {
    ctx.set_output(0, std::move(y));
    return {};
  }
  switch (dtype_size(x->dtype())) {
    case 1:
      pad_fill(x->data<uint8_t>(), offs, out_shape, value.data<uint8_t>()[0], y.data<uint8_t>());
      break;
    case 2:
      pad_fill(x->data<uint16_t>(), offs, out_shape, value.data<uint16_t>()[0], y.data<uint16_t>());
      break;
    case 4:
      pad_fill(x->data<uint32_t>(), offs, out_shape, value.data<uint32_t>()[0], y.data<uint32_t>());
      break;
    default:
      pad_fill(x->data<uint64_t>(), offs, out_shape, value.data<uint64_t>()[0], y.data<uint64_t>());
      break;
  }
  ctx.set_output(0, std::move(y));
  return {};
}

// DepthToSpace and SpaceToDepth: the input read through the permuted strides
// of ops::depth_space_layout's 6-D split into the output's view.
Result<void> depth_space(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const ops::DepthSpaceAttrs a, ops::depth_space_attrs(ctx.node()));
  HONE_TRY(const ops::DepthSpaceLayout l,
           ops::depth_space_layout(ctx.node().op_type, a, x->shape()));
  Tensor view = Tensor::zeros(x->dtype(), ops::permuted(l.split, l.perm));
  strided_copy(*x, 0, ops::permuted(strides_of(l.split), l.perm), view);
  HONE_TRY(Tensor y, view.reshaped(l.out));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> trilu(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  if (x->rank() < 2)
    return fail(ErrorCode::kInvalidArgument,
                "Trilu input must have rank >= 2, got " + x->describe());
  int64_t k = 0;
  if (ctx.has_input(1)) {
    HONE_TRY(k, input_scalar_int(ctx, 1, "Trilu k"));
  }
  const bool upper = ctx.node().attr_int("upper", 1) != 0;
  const int64_t rows = x->dim(x->rank() - 2), cols = x->dim(x->rank() - 1);
  Tensor y = x->clone();
  const size_t es = dtype_size(x->dtype());
  char* p = static_cast<char*>(y.raw());
  const int64_t mats = rows * cols == 0 ? 0 : x->numel() / (rows * cols);
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const bool keep = upper ? (j - i >= k) : (j - i <= k);
        if (!keep) std::memset(p + static_cast<size_t>((m * rows + i) * cols + j) * es, 0, es);
      }
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> reverse_sequence(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(std::vector<int64_t> lens, input_ints(ctx, 1, "ReverseSequence sequence_lens"));
  const int64_t time_axis = ctx.node().attr_int("time_axis", 0);
  const int64_t batch_axis = ctx.node().attr_int("batch_axis", 1);
  if (x->rank() < 2 || time_axis + batch_axis != 1 || time_axis < 0 || batch_axis < 0)
    return fail(ErrorCode::kInvalidArgument,
                "ReverseSequence needs rank >= 2 and time_axis/batch_axis of 0 and 1; got " +
                    x->describe() + ", time_axis " + std::to_string(time_axis) + ", batch_axis " +
                    std::to_string(batch_axis));
  const int64_t batch = x->dim(batch_axis), steps = x->dim(time_axis);
  if (static_cast<int64_t>(lens.size()) != batch)
    return fail(ErrorCode::kInvalidArgument,
                "ReverseSequence sequence_lens " + ints_to_string(lens) +
                    " must have one entry per batch of " + x->describe());
  const std::vector<int64_t> s = strides_of(x->shape());
  const int64_t inner = s[1];
  Tensor y = x->clone();
  const size_t es = dtype_size(x->dtype());
  for (int64_t b = 0; b < batch; ++b) {
    if (lens[b] < 0 || lens[b] > steps)
      return fail(ErrorCode::kInvalidArgument,
                  "ReverseSequence sequence_lens " + ints_to_string(lens) +
                      " has an entry outside [0, " + std::to_string(steps) + "]");
    for (int64_t t = 0; t < lens[b]; ++t)
      copy_elements(x->raw(), (lens[b] - 1 - t) * s[time_axis] + b * s[batch_axis], y.raw(),
                    t * s[time_axis] + b * s[batch_axis], inner, es);
  }
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> eye_like(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  if (x->rank() != 2)
    return fail(ErrorCode::kInvalidArgument, "EyeLike input must be 2-D, got " + x->describe());
  DType dt = x->dtype();
  if (ctx.node().has_attr("dtype")) {
    HONE_TRY(dt, dtype_from_onnx(ctx.node().attr_int("dtype", 1)));
  }
  const int64_t k = ctx.node().attr_int("k", 0);
  const int64_t rows = x->dim(0), cols = x->dim(1);
  Tensor y = Tensor::zeros(dt, {rows, cols});
  const Tensor one = from_doubles(dt, {}, std::vector<double>{1.0});
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < cols) copy_elements(one.raw(), 0, y.raw(), i * cols + j, 1, dtype_size(dt));
  }
  ctx.set_output(0, std::move(y));
  return {};
}

/// CenterCropPad-18: crops or zero-pads each listed axis to the target
/// length, centred; an odd difference puts the extra element at the end.
Result<void> center_crop_pad(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const std::vector<int64_t> target, input_ints(ctx, 1, "CenterCropPad shape"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  std::vector<int64_t> axes = ctx.node().attr_ints("axes");
  if (!ctx.node().has_attr("axes"))
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  if (axes.size() != target.size())
    return fail(ErrorCode::kInvalidArgument, "CenterCropPad shape has " +
                                                 std::to_string(target.size()) + " values for " +
                                                 std::to_string(axes.size()) + " axes");
  std::vector<int64_t> out_shape = x->shape();
  // Per axis: where the kept part starts in the input and in the output.
  std::vector<int64_t> in_start(static_cast<size_t>(rank), 0),
      out_start(static_cast<size_t>(rank), 0);
  std::vector<int64_t> kept = x->shape();
  for (size_t i = 0; i < axes.size(); ++i) {
    HONE_TRY(const int64_t a, normalize_axis(axes[i], rank, "CenterCropPad axis"));
    const int64_t dim = x->dim(a), t = target[i];
    if (t < 0)
      return fail(ErrorCode::kInvalidArgument,
                  "CenterCropPad target length " + std::to_string(t) + " is negative");
    out_shape[a] = t;
    kept[a] = std::min(dim, t);
    if (t < dim)
      in_start[a] = (dim - t) / 2;
    else
      out_start[a] = (t - dim) / 2;
  }
  HONE_CHECK_OK(check_result_size(out_shape, "CenterCropPad output"));
  Tensor y = Tensor::zeros(x->dtype(), out_shape);
  const std::vector<int64_t> is = strides_of(x->shape()), os = strides_of(out_shape);
  const int64_t n = shape_numel(kept);
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t src = 0, dst = 0;
    for (int64_t d = 0; d < rank; ++d) {
      src += (in_start[d] + idx[d]) * is[d];
      dst += (out_start[d] + idx[d]) * os[d];
    }
    copy_elements(x->raw(), src, y.raw(), dst, 1, dtype_size(x->dtype()));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < kept[d]) break;
      idx[d] = 0;
    }
  }
  ctx.set_output(0, std::move(y));
  return {};
}

}  // namespace

void register_shape_layout_ops(OpRegistry& r) {
  r.add("Pad", pad);
  r.add("CenterCropPad", center_crop_pad);
  r.add("DepthToSpace", depth_space);
  r.add("SpaceToDepth", depth_space);
  r.add("Trilu", trilu);
  r.add("ReverseSequence", reverse_sequence);
  r.add("EyeLike", eye_like);
}

}  // namespace hone::eval
