// Activation kernels: Relu, LeakyRelu, PRelu, Elu, Selu, Celu, Sigmoid,
// HardSigmoid, HardSwish, Tanh, Softplus, Softsign, ThresholdedRelu, Shrink,
// Mish, Gelu, Swish. Float math in double, rounded once; Relu, PRelu and Shrink also
// take integers, as the spec allows.
#include <cmath>
#include <numbers>

#include "eval/ops_elementwise_internal.h"
#include "ops/attrs.h"
#include "ops/unary.h"

namespace hone::eval {
namespace {

using ew::expect_inputs;
using ew::map_float;
using ew::narrow;

double softplus(double v) {
  // log(1 + e^v) without overflow for large v.
  return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
}

Result<void> relu_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  return dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    Tensor y = Tensor::for_overwrite(x->dtype(), x->shape());
    const T* in = x->data<T>();
    T* out = y.data<T>();
    ew::parallel_range(ctx, x->numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if constexpr (kIsFloat<T>) {
          const double v = to_f64(in[i]);
          out[i] = v < 0 ? narrow<T>(0.0) : in[i];  // NaN passes through
        } else {
          out[i] = in[i] < T{0} ? T{0} : in[i];
        }
      }
    });
    ctx.set_output(0, std::move(y));
    return {};
  });
}

// PRelu: y = x < 0 ? slope * x : x, slope broadcast to x's shape (unidirectional).
Result<void> prelu_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(expect_inputs(ctx, 2, 2));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* slope_in, ctx.tensor(1));
  HONE_CHECK_OK(ew::expect_same_dtype(ctx, *x, *slope_in, 0, 1));
  Tensor slope_view = *slope_in;
  if (ctx.opset() < 7 && slope_in->rank() == 1 && slope_in->numel() > 1 && x->rank() >= 2 &&
      slope_in->numel() == x->dim(1)) {
    // PRelu-6: a 1-D slope holds one value per channel (axis 1).
    std::vector<int64_t> s(x->rank() - 1, 1);
    s[0] = slope_in->numel();
    HONE_TRY(slope_view, slope_in->reshaped(std::move(s)));
  }
  const Tensor* slope = &slope_view;
  HONE_TRY(std::vector<int64_t> shape, broadcast_shapes({x->shape(), slope->shape()}));
  if (shape != x->shape())
    return fail(
        ErrorCode::kInvalidArgument,
        "PRelu slope " + slope->describe() + " does not broadcast to the input " + x->describe());
  return dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    Tensor y = Tensor::for_overwrite(x->dtype(), x->shape());
    const T* px = x->data<T>();
    const T* ps = slope->data<T>();
    T* out = y.data<T>();
    ew::broadcast_for_each<2>(ctx, shape, {&x->shape(), &slope->shape()},
                              [&](int64_t o, const std::array<int64_t, 2>& i) {
                                const T v = px[i[0]];
                                if constexpr (kIsFloat<T>) {
                                  const double d = to_f64(v);
                                  out[o] = d < 0 ? narrow<T>(to_f64(ps[i[1]]) * d) : v;
                                } else {
                                  out[o] = v < T{0} ? ew::wrap_mul(ps[i[1]], v) : v;
                                }
                              });
    ctx.set_output(0, std::move(y));
    return {};
  });
}

// Shrink on any numeric type (integers saturate), by the schema's formula
// (ops/unary.h) and its attribute defaults; the formula loop below covers floats only.
Result<void> shrink_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const ops::UnaryFormula& f = *ops::find_unary("Shrink");
  HONE_TRY(const ops::UnaryParams p, ops::unary_params(ctx.node(), f));
  return dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    Tensor y = Tensor::for_overwrite(x->dtype(), x->shape());
    const T* in = x->data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < x->numel(); ++i) {
      const double r = f.eval(to_f64(in[i]), p.a, p.b);
      if constexpr (kIsFloat<T>)
        out[i] = narrow<T>(r);
      else
        out[i] = ew::saturate_cast<T>(r);
    }
    ctx.set_output(0, std::move(y));
    return {};
  });
}

Result<void> gelu_kernel(KernelContext& ctx) {
  HONE_TRY(const ops::GeluApprox approx, ops::gelu_approx(ctx.node()));
  if (approx == ops::GeluApprox::kNone)
    return map_float(ctx,
                     [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); });
  return map_float(ctx, [](double v) { return ops::gelu_tanh(v); });
}

}  // namespace

void register_elementwise_activation_ops(OpRegistry& r) {
  r.add("Relu", relu_kernel);
  r.add("PRelu", prelu_kernel);
  r.add("Gelu", gelu_kernel);
  // The formula ops of the schema (ops/unary.h): LeakyRelu, Elu, Selu, Celu,
  // HardSigmoid, HardSwish, ThresholdedRelu, Shrink, Softplus, Softsign, Swish.
  for (const ops::UnaryFormula& f : ops::unary_formulas())
    r.add(f.op, [&f](KernelContext& ctx) -> Result<void> {
      HONE_TRY(const ops::UnaryParams p, ops::unary_params(ctx.node(), f));
      const double a = p.a, b = p.b;
      return map_float(ctx, [&f, a, b](double v) { return f.eval(v, a, b); });
    });
  r.add("Shrink", shrink_kernel);  // after the loop: integers too
  r.add("Sigmoid", [](KernelContext& ctx) {
    return map_float(ctx, [](double v) {
      // Both branches avoid overflow of exp for large |v|.
      if (v >= 0) return 1.0 / (1.0 + std::exp(-v));
      const double e = std::exp(v);
      return e / (1.0 + e);
    });
  });
  r.add("Tanh",
        [](KernelContext& ctx) { return map_float(ctx, [](double v) { return std::tanh(v); }); });
  r.add("Mish", [](KernelContext& ctx) {
    return map_float(ctx, [](double v) { return v * std::tanh(softplus(v)); });
  });
}

}  // namespace hone::eval
