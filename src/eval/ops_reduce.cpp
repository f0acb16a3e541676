// Reference reductions: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,
// SumSquare} and ArgMax/ArgMin. Softmax, TopK and CumSum live in
// ops_reduce_softmax.cpp, the losses in ops_reduce_loss.cpp.
//
// Floats reduce in double and round once; integers reduce exactly (wrapping
// 64-bit arithmetic, then the output type's low bits). A reduction over an
// empty set gives the op's identity: 0 for sums, 1 for products, -inf/+inf
// (or the type's lowest/highest) for Max/Min, -inf for the log forms.
#include "eval/ops.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "eval/kernel_util.h"
#include "eval/ops_reduce_internal.h"
#include "hone/shape.h"
#include "ops/arg_extreme.h"
#include "ops/attrs.h"
#include "ops/reduce.h"

namespace hone::eval {

Result<ReducePlan> plan_reduce(const std::vector<int64_t>& shape, std::vector<int64_t> axes,
                               bool keepdims) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (int64_t a : axes) {
    HONE_TRY(int64_t ax, normalize_axis(a, rank, "reduction axis"));
    reduced[static_cast<size_t>(ax)] = true;
  }
  ReducePlan p;
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  const std::vector<int64_t> st = strides_of(shape);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (reduced[i]) {
      red_dims.push_back(shape[i]);
      red_strides.push_back(st[i]);
      if (keepdims) p.out_shape.push_back(1);
    } else {
      kept_dims.push_back(shape[i]);
      kept_strides.push_back(st[i]);
      p.out_shape.push_back(shape[i]);
    }
  }
  p.kept_offs = ops::strided_offsets(kept_dims, kept_strides);
  p.red_offs = ops::strided_offsets(red_dims, red_strides);
  return p;
}

namespace {

using ops::reduce_f64;
using ops::reduce_name;
using ops::ReduceKind;

// Integer reduction, exact where the op's result is an integer.
template <class T, class Get>
T reduce_int(ReduceKind kind, int64_t n, Get at) {
  switch (kind) {
    case ReduceKind::kMax: {
      T m = std::numeric_limits<T>::lowest();
      for (int64_t r = 0; r < n; ++r) m = std::max<T>(m, at(r));
      return m;
    }
    case ReduceKind::kMin: {
      T m = std::numeric_limits<T>::max();
      for (int64_t r = 0; r < n; ++r) m = std::min<T>(m, at(r));
      return m;
    }
    case ReduceKind::kL2:
    case ReduceKind::kLogSum:
    case ReduceKind::kLogSumExp:
      return from_f64<T>(
          reduce_f64(kind, n, [&](int64_t r) { return static_cast<double>(at(r)); }));
    default:
      break;
  }
  if constexpr (std::is_same_v<T, bool>) {
    return false;  // unreachable: bool is only admitted for Max/Min
  } else {
    auto wide = [](T v) {
      return std::is_signed_v<T> ? static_cast<uint64_t>(static_cast<int64_t>(v))
                                 : static_cast<uint64_t>(v);
    };
    uint64_t s = kind == ReduceKind::kProd ? 1 : 0;
    for (int64_t r = 0; r < n; ++r) {
      const T v = at(r);
      switch (kind) {
        case ReduceKind::kProd:
          s *= wide(v);
          break;
        case ReduceKind::kL1:
          s += wide(v < T{0} ? static_cast<T>(-v) : v);
          break;
        case ReduceKind::kSumSquare:
          s += wide(v) * wide(v);
          break;
        default:
          s += wide(v);
          break;
      }
    }
    if (kind == ReduceKind::kMean) {
      if (n == 0) return T{0};
      if constexpr (std::is_signed_v<T>)
        return static_cast<T>(static_cast<int64_t>(s) / n);
      else
        return static_cast<T>(s / static_cast<uint64_t>(n));
    }
    return static_cast<T>(s);
  }
}

Result<void> reduce(KernelContext& ctx, ReduceKind kind) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& n = ctx.node();
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  const bool keepdims = ra.keepdims;
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    HONE_TRY(axes, read_int_list(ctx.input(1), "axes input"));
  } else {
    axes = ra.axes;
  }
  if (axes.empty() && ra.noop_with_empty_axes) {
    ctx.set_output(0, x->clone());
    return {};
  }
  if (x->dtype() == DType::kBool && kind != ReduceKind::kMax && kind != ReduceKind::kMin)
    return fail(ErrorCode::kUnsupported,
                std::string(reduce_name(kind)) + " does not support bool input");
  HONE_TRY(ReducePlan p, plan_reduce(x->shape(), axes, keepdims));
  Tensor out = Tensor::zeros(x->dtype(), p.out_shape);
  const int64_t n_out = static_cast<int64_t>(p.kept_offs.size());
  const int64_t n_red = static_cast<int64_t>(p.red_offs.size());
  HONE_CHECK_OK(dispatch_all(x->dtype(), [&]<class T>() -> Result<void> {
    const T* in = x->data<T>();
    T* o = out.data<T>();
    const int64_t* ro = p.red_offs.data();
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n_red, 1));
    ctx.pool().parallel_for(
        n_out,
        [&](int64_t o0, int64_t o1) {
          for (int64_t i = o0; i < o1; ++i) {
            const T* base = in + p.kept_offs[static_cast<size_t>(i)];
            if constexpr (kIsFloat<T>)
              o[i] = from_f64<T>(
                  reduce_f64(kind, n_red, [&](int64_t r) { return to_f64(base[ro[r]]); }));
            else
              o[i] = reduce_int<T>(kind, n_red, [&](int64_t r) { return base[ro[r]]; });
          }
        },
        grain);
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

Result<void> arg_extreme(KernelContext& ctx, bool is_max) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& n = ctx.node();
  const int64_t rank = static_cast<int64_t>(x->rank());
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(n), std::max<int64_t>(rank, 1)));
  const bool keepdims = ra.keepdims;
  const bool last = ra.select_last_index;
  const std::vector<int64_t>& shape = x->shape();
  const int64_t len = rank == 0 ? 1 : shape[static_cast<size_t>(axis)];
  if (len == 0)
    return fail(ErrorCode::kInvalidArgument, std::string(is_max ? "ArgMax" : "ArgMin") +
                                                 " over an empty axis of " + x->describe());
  int64_t outer = 1, inner = 1;
  std::vector<int64_t> out_shape;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = shape[static_cast<size_t>(i)];
    if (i < axis) outer *= d;
    if (i > axis) inner *= d;
    if (i != axis)
      out_shape.push_back(d);
    else if (keepdims)
      out_shape.push_back(1);
  }
  Tensor out = Tensor::zeros(DType::kI64, out_shape);
  int64_t* o = out.data<int64_t>();
  HONE_CHECK_OK(dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    // Floats compare in double (NaN never wins), integers natively.
    auto key = [](T v) {
      if constexpr (kIsFloat<T>)
        return to_f64(v);
      else
        return v;
    };
    ops::arg_extreme_rows(outer, len, inner, is_max, last, x->data<T>(), o, key);
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  for (size_t i = 0; i < std::size(ops::kReduceOps); ++i) {
    const auto kind = static_cast<ReduceKind>(i);
    r.add(std::string(ops::kReduceOps[i]),
          [kind](KernelContext& ctx) { return reduce(ctx, kind); });
  }
  r.add("ArgMax", [](KernelContext& ctx) { return arg_extreme(ctx, true); });
  r.add("ArgMin", [](KernelContext& ctx) { return arg_extreme(ctx, false); });
  register_reduce_softmax_ops(r);
  register_reduce_loss_ops(r);
}

}  // namespace hone::eval
