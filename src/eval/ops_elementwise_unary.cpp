// Unary math kernels: Abs, Neg, Sign (numeric), Exp ... Erf (float),
// IsInf/IsNaN (float → bool), Not (bool), BitwiseNot (integer).
#include <cmath>

#include "eval/ops_elementwise_internal.h"

namespace hone::eval {
namespace {

using ew::expect_inputs;
using ew::map_float;
using ew::narrow;
using ew::parallel_range;

/// y = op(x) for every numeric x: floats through double (float_op), integers
/// exactly in their own type (int_op).
template <class FloatOp, class IntOp>
Result<void> map_numeric(KernelContext& ctx, FloatOp float_op, IntOp int_op) {
  HONE_CHECK_OK(expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  return dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    Tensor y = Tensor::for_overwrite(x->dtype(), x->shape());
    const T* in = x->data<T>();
    T* out = y.data<T>();
    parallel_range(ctx, x->numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if constexpr (kIsFloat<T>)
          out[i] = narrow<T>(float_op(to_f64(in[i])));
        else
          out[i] = int_op(in[i]);
      }
    });
    ctx.set_output(0, std::move(y));
    return {};
  });
}

/// A float → bool predicate (IsNaN, IsInf).
template <class Pred>
Result<void> float_predicate(KernelContext& ctx, Pred pred) {
  HONE_CHECK_OK(expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  return dispatch_float(x->dtype(), [&]<class T>() -> Result<void> {
    Tensor y = Tensor::zeros(DType::kBool, x->shape());
    const T* in = x->data<T>();
    bool* out = y.data<bool>();
    for (int64_t i = 0; i < x->numel(); ++i) out[i] = pred(to_f64(in[i]));
    ctx.set_output(0, std::move(y));
    return {};
  });
}

Result<void> abs_kernel(KernelContext& ctx) {
  return map_numeric(
      ctx, [](double v) { return std::fabs(v); },
      []<class T>(T v) -> T {
        if constexpr (std::is_signed_v<T>)
          return v < 0 ? ew::wrap_neg(v) : v;
        else
          return v;
      });
}

Result<void> neg_kernel(KernelContext& ctx) {
  return map_numeric(
      ctx, [](double v) { return -v; }, []<class T>(T v) -> T { return ew::wrap_neg(v); });
}

Result<void> sign_kernel(KernelContext& ctx) {
  return map_numeric(
      ctx, [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : v); },
      []<class T>(T v) -> T {
        if constexpr (std::is_signed_v<T>)
          return static_cast<T>(v > 0 ? 1 : (v < 0 ? -1 : 0));
        else
          return static_cast<T>(v > 0 ? 1 : 0);
      });
}

Result<void> is_inf_kernel(KernelContext& ctx) {
  const bool pos = ctx.node().attr_int("detect_positive", 1) != 0;
  const bool neg = ctx.node().attr_int("detect_negative", 1) != 0;
  return float_predicate(
      ctx, [pos, neg](double v) { return std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)); });
}

Result<void> is_nan_kernel(KernelContext& ctx) {
  return float_predicate(ctx, [](double v) { return std::isnan(v); });
}

Result<void> not_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  if (x->dtype() != DType::kBool)
    return fail(ErrorCode::kInvalidArgument, "Not takes a bool tensor, got " + x->describe());
  Tensor y = Tensor::zeros(DType::kBool, x->shape());
  const bool* in = x->data<bool>();
  bool* out = y.data<bool>();
  for (int64_t i = 0; i < x->numel(); ++i) out[i] = !in[i];
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> bitwise_not_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  return dispatch_integer(x->dtype(), [&]<class T>() -> Result<void> {
    Tensor y = Tensor::for_overwrite(x->dtype(), x->shape());
    const T* in = x->data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < x->numel(); ++i) out[i] = static_cast<T>(~in[i]);
    ctx.set_output(0, std::move(y));
    return {};
  });
}

/// Registers a float-only unary op computing `fn` in double.
void add_float(OpRegistry& r, const char* name, double (*fn)(double)) {
  r.add(name, [fn](KernelContext& ctx) { return map_float(ctx, fn); });
}

}  // namespace

void register_elementwise_unary_ops(OpRegistry& r) {
  r.add("Abs", abs_kernel);
  r.add("Neg", neg_kernel);
  r.add("Sign", sign_kernel);
  add_float(r, "Exp", [](double v) { return std::exp(v); });
  add_float(r, "Log", [](double v) { return std::log(v); });
  add_float(r, "Sqrt", [](double v) { return std::sqrt(v); });
  add_float(r, "Reciprocal", [](double v) { return 1.0 / v; });
  add_float(r, "Floor", [](double v) { return std::floor(v); });
  add_float(r, "Ceil", [](double v) { return std::ceil(v); });
  add_float(r, "Round", [](double v) { return ew::round_half_even(v); });
  add_float(r, "Sin", [](double v) { return std::sin(v); });
  add_float(r, "Cos", [](double v) { return std::cos(v); });
  add_float(r, "Tan", [](double v) { return std::tan(v); });
  add_float(r, "Asin", [](double v) { return std::asin(v); });
  add_float(r, "Acos", [](double v) { return std::acos(v); });
  add_float(r, "Atan", [](double v) { return std::atan(v); });
  add_float(r, "Sinh", [](double v) { return std::sinh(v); });
  add_float(r, "Cosh", [](double v) { return std::cosh(v); });
  add_float(r, "Asinh", [](double v) { return std::asinh(v); });
  add_float(r, "Acosh", [](double v) { return std::acosh(v); });
  add_float(r, "Atanh", [](double v) { return std::atanh(v); });
  add_float(r, "Erf", [](double v) { return std::erf(v); });
  r.add("IsInf", is_inf_kernel);
  r.add("IsNaN", is_nan_kernel);
  r.add("Not", not_kernel);
  r.add("BitwiseNot", bitwise_not_kernel);
}

}  // namespace hone::eval
