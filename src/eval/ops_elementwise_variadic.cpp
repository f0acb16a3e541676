// Variadic kernels with broadcasting over all inputs: Sum, Mean (f64
// accumulation, rounded once), Min, Max (NaN propagates; integers exact),
// and Where (three-way broadcast of condition, X and Y).
#include <cmath>

#include "eval/ops_elementwise_internal.h"

namespace hone::eval {
namespace {

using ew::narrow;

enum class Fold { kSum, kMean, kMin, kMax };

Result<std::vector<const Tensor*>> variadic_inputs(KernelContext& ctx) {
  if (ctx.num_inputs() == 0)
    return fail(ErrorCode::kInvalidArgument, ctx.node().op_type + " needs at least one input");
  std::vector<const Tensor*> xs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    HONE_TRY(const Tensor* t, ctx.tensor(i));
    if (!xs.empty()) HONE_CHECK_OK(ew::expect_same_dtype(ctx, *xs[0], *t, 0, i));
    xs.push_back(t);
  }
  return xs;
}

template <Fold op>
Result<void> fold_kernel(KernelContext& ctx) {
  HONE_TRY(std::vector<const Tensor*> xs, variadic_inputs(ctx));
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor* t : xs) shapes.push_back(t->shape());
  HONE_TRY(std::vector<int64_t> shape, broadcast_shapes(shapes));
  const int64_t n = shape_numel(shape);
  const DType dt = xs[0]->dtype();
  if (op == Fold::kMean && !is_floating(dt))
    return fail(ErrorCode::kInvalidArgument,
                "Mean takes floating-point inputs, got " + xs[0]->describe());

  return dispatch_numeric(dt, [&]<class T>() -> Result<void> {
    // Floats accumulate in double; integers in their own type (exact).
    using Acc = std::conditional_t<kIsFloat<T>, double, T>;
    std::vector<Acc> acc(static_cast<size_t>(n));
    auto value = [](T v) -> Acc {
      if constexpr (kIsFloat<T>)
        return to_f64(v);
      else
        return v;
    };
    for (size_t k = 0; k < xs.size(); ++k) {
      const T* p = xs[k]->data<T>();
      const bool first = k == 0;
      ew::broadcast_for_each<1>(ctx, shape, {&xs[k]->shape()},
                                [&](int64_t o, const std::array<int64_t, 1>& i) {
                                  const Acc v = value(p[i[0]]);
                                  Acc& a = acc[o];
                                  if (first) {
                                    a = v;
                                  } else if constexpr (op == Fold::kSum || op == Fold::kMean) {
                                    if constexpr (kIsFloat<T>)
                                      a += v;
                                    else
                                      a = ew::wrap_add(a, v);
                                  } else if constexpr (op == Fold::kMin) {
                                    if constexpr (kIsFloat<T>)
                                      a = (std::isnan(a) || std::isnan(v)) ? NAN : std::min(a, v);
                                    else
                                      a = std::min(a, v);
                                  } else {
                                    if constexpr (kIsFloat<T>)
                                      a = (std::isnan(a) || std::isnan(v)) ? NAN : std::max(a, v);
                                    else
                                      a = std::max(a, v);
                                  }
                                });
    }
    Tensor y = Tensor::zeros(dt, shape);
    T* out = y.data<T>();
    const double count = static_cast<double>(xs.size());
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (kIsFloat<T>)
        out[i] = narrow<T>(op == Fold::kMean ? acc[i] / count : acc[i]);
      else
        out[i] = acc[i];
    }
    ctx.set_output(0, std::move(y));
    return {};
  });
}

Result<void> where_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 3, 3));
  HONE_TRY(const Tensor* cond, ctx.tensor(0));
  HONE_TRY(const Tensor* x, ctx.tensor(1));
  HONE_TRY(const Tensor* y, ctx.tensor(2));
  if (cond->dtype() != DType::kBool)
    return fail(ErrorCode::kInvalidArgument,
                "Where condition must be a bool tensor, got " + cond->describe());
  HONE_CHECK_OK(ew::expect_same_dtype(ctx, *x, *y, 1, 2));
  HONE_TRY(std::vector<int64_t> shape, broadcast_shapes({cond->shape(), x->shape(), y->shape()}));
  return dispatch_all(x->dtype(), [&]<class T>() -> Result<void> {
    Tensor out = Tensor::zeros(x->dtype(), shape);
    const bool* pc = cond->data<bool>();
    const T* px = x->data<T>();
    const T* py = y->data<T>();
    T* po = out.data<T>();
    ew::broadcast_for_each<3>(ctx, shape, {&cond->shape(), &x->shape(), &y->shape()},
                              [&](int64_t o, const std::array<int64_t, 3>& i) {
                                po[o] = pc[i[0]] ? px[i[1]] : py[i[2]];
                              });
    ctx.set_output(0, std::move(out));
    return {};
  });
}

}  // namespace

void register_elementwise_variadic_ops(OpRegistry& r) {
  r.add("Sum", fold_kernel<Fold::kSum>);
  r.add("Mean", fold_kernel<Fold::kMean>);
  r.add("Min", fold_kernel<Fold::kMin>);
  r.add("Max", fold_kernel<Fold::kMax>);
  r.add("Where", where_kernel);
}

}  // namespace hone::eval
