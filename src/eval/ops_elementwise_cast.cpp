// Type and pass-through kernels: Cast, CastLike, BitCast, Clip, Identity,
// Dropout (inference only).
#include <cmath>
#include <cstring>
#include <limits>

#include "eval/ops_elementwise_internal.h"
#include "ops/attrs.h"

namespace hone::eval {
namespace {

using ew::narrow;
using ew::saturate_cast;

/// One element S → D with ONNX Cast semantics: float → integer truncates
/// toward zero (NaN → 0, out of range saturates: ONNX leaves it undefined),
/// integer → integer wraps, anything → bool is "!= 0", floats round once.
template <class S, class D>
D cast_one(S v) {
  if constexpr (std::is_same_v<S, D>) {
    return v;
  } else if constexpr (std::is_same_v<D, bool>) {
    if constexpr (kIsFloat<S>)
      return to_f64(v) != 0.0;  // NaN is true
    else
      return v != S{0};
  } else if constexpr (std::is_integral_v<S>) {  // integer or bool source
    if constexpr (std::is_integral_v<D>)
      return static_cast<D>(v);
    else if constexpr (std::is_floating_point_v<D>)
      return static_cast<D>(v);  // correctly rounded
    else
      return narrow<D>(static_cast<double>(v));
  } else {  // float source
    if constexpr (kIsFloat<D>)
      return narrow<D>(to_f64(v));
    else
      return saturate_cast<D>(std::trunc(to_f64(v)));
  }
}

Tensor cast_to(const Tensor& x, DType to) {
  if (x.dtype() == to) return x;
  Tensor y = Tensor::zeros(to, x.shape());
  (void)dispatch_all(x.dtype(), [&]<class S>() -> Result<void> {
    return dispatch_all(to, [&]<class D>() -> Result<void> {
      const S* in = x.data<S>();
      D* out = y.data<D>();
      for (int64_t i = 0; i < x.numel(); ++i) out[i] = cast_one<S, D>(in[i]);
      return {};
    });
  });
  return y;
}

Result<void> check_castable(const Tensor& x) {
  if (x.dtype() == DType::kUndefined || dtype_size(x.dtype()) == 0)
    return fail(ErrorCode::kUnsupported, "cannot cast a tensor of type " + x.describe());
  return {};
}

Result<void> cast_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  if (!ctx.node().has_attr("to"))
    return fail(ErrorCode::kInvalidArgument, "Cast needs the 'to' attribute");
  HONE_TRY(DType to, dtype_from_onnx(ops::cast_to(ctx.node())));
  HONE_CHECK_OK(check_castable(*x));
  ctx.set_output(0, cast_to(*x, to));
  return {};
}

Result<void> cast_like_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 2, 2));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* like, ctx.tensor(1));
  HONE_CHECK_OK(check_castable(*x));
  HONE_CHECK_OK(check_castable(*like));
  ctx.set_output(0, cast_to(*x, like->dtype()));
  return {};
}

/// A single-element bound (Clip min/max): rank 0 or one element.
Result<const Tensor*> clip_bound(KernelContext& ctx, size_t i, const Tensor& x) {
  HONE_TRY(const Tensor* t, ctx.tensor(i));
  if (t->numel() != 1)
    return fail(ErrorCode::kInvalidArgument, std::string("Clip ") + (i == 1 ? "min" : "max") +
                                                 " must be a scalar, got " + t->describe());
  HONE_CHECK_OK(ew::expect_same_dtype(ctx, x, *t, 0, i));
  return t;
}

// Clip: y = min(max(x, lo), hi); lo > hi gives hi everywhere, NaN passes.
// Before opset 11 the bounds are float attributes; from 11 optional inputs.
Result<void> clip_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 1, 3));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const bool attr_form = ctx.opset() < 11;
  const Tensor* lo_t = nullptr;
  const Tensor* hi_t = nullptr;
  if (!attr_form) {
    if (ctx.has_input(1)) {
      HONE_TRY(lo_t, clip_bound(ctx, 1, *x));
    }
    if (ctx.has_input(2)) {
      HONE_TRY(hi_t, clip_bound(ctx, 2, *x));
    }
  }
  return dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    Tensor y = Tensor::zeros(x->dtype(), x->shape());
    const T* in = x->data<T>();
    T* out = y.data<T>();
    if constexpr (kIsFloat<T>) {
      double lo = -std::numeric_limits<double>::infinity();
      double hi = std::numeric_limits<double>::infinity();
      if (attr_form) {
        const ops::ClipAttrs c = ops::clip_attrs(ctx.node());
        lo = c.min;
        hi = c.max;
      }
      if (lo_t) lo = to_f64(lo_t->data<T>()[0]);
      if (hi_t) hi = to_f64(hi_t->data<T>()[0]);
      for (int64_t i = 0; i < x->numel(); ++i) {
        double v = to_f64(in[i]);
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        out[i] = narrow<T>(v);
      }
    } else {
      if (attr_form)
        return fail(ErrorCode::kInvalidArgument,
                    "Clip before opset 11 takes floating-point input, got " + x->describe());
      T lo = std::numeric_limits<T>::lowest();
      T hi = std::numeric_limits<T>::max();
      if (lo_t) lo = lo_t->data<T>()[0];
      if (hi_t) hi = hi_t->data<T>()[0];
      for (int64_t i = 0; i < x->numel(); ++i) {
        T v = in[i];
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        out[i] = v;
      }
    }
    ctx.set_output(0, std::move(y));
    return {};
  });
}

Result<void> identity_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 1, 1));
  const RuntimeValue* v = ctx.value(0);
  if (v == nullptr)
    return fail(ErrorCode::kInvalidArgument, "Identity requires input 0, which is missing");
  ctx.set_output_value(0, *v);
  return {};
}

// Dropout at inference: output = input, mask all true. Training mode (input 2
// from opset 12) with a non-zero ratio is random and refused.
Result<void> dropout_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 1, 3));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  double ratio = ctx.node().attr_float("ratio", 0.5f);
  bool training = false;
  if (ctx.opset() >= 12) {
    ratio = 0.5;
    if (ctx.has_input(1)) {
      HONE_TRY(const Tensor* r, ctx.tensor(1));
      if (r->numel() != 1 || !is_floating(r->dtype()))
        return fail(ErrorCode::kInvalidArgument,
                    "Dropout ratio must be a floating-point scalar, got " + r->describe());
      ratio = tensor_element_as_double(*r, 0);
    }
    if (ctx.has_input(2)) {
      HONE_TRY(const Tensor* t, ctx.tensor(2));
      if (t->numel() != 1 || t->dtype() != DType::kBool)
        return fail(ErrorCode::kInvalidArgument,
                    "Dropout training_mode must be a bool scalar, got " + t->describe());
      training = t->data<bool>()[0];
    }
  }
  if (training && ratio != 0.0)
    return fail(ErrorCode::kUnsupported, "training-mode Dropout is random (ratio " +
                                             std::to_string(ratio) +
                                             "); the reference runs inference only");
  if (ratio < 0.0 || ratio >= 1.0)
    return fail(ErrorCode::kInvalidArgument,
                "Dropout ratio must be in [0, 1), got " + std::to_string(ratio));
  ctx.set_output(0, *x);
  if (ctx.wants_output(1)) {
    // Mask: bool from opset 10, the input's type before.
    const DType mask_type = ctx.opset() >= 10 ? DType::kBool : x->dtype();
    Tensor ones = Tensor::zeros(DType::kBool, x->shape());
    for (bool& b : ones.span<bool>()) b = true;
    ctx.set_output(1, cast_to(ones, mask_type));
  }
  return {};
}

/// BitCast-26: reinterprets each element's bits as the type `to` of the same width.
Result<void> bit_cast_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  if (!ctx.node().has_attr("to"))
    return fail(ErrorCode::kInvalidArgument, "BitCast needs the 'to' attribute");
  HONE_TRY(const DType to, dtype_from_onnx(ops::cast_to(ctx.node())));
  if (to == DType::kBool || x->dtype() == DType::kBool)
    return fail(ErrorCode::kInvalidArgument, "BitCast does not take or give bool tensors");
  // In the f64 reference an f32 input arrives widened; kUnsupported makes the
  // interpreter rerun this on the f32 bits.
  if (dtype_size(to) != dtype_size(x->dtype()))
    return fail(x->dtype() == DType::kF64 ? ErrorCode::kUnsupported : ErrorCode::kInvalidArgument,
                "BitCast needs types of one width: " + x->describe() + " has " +
                    std::to_string(dtype_size(x->dtype()) * 8) + "-bit elements, " +
                    std::string(dtype_name(to)) + " " + std::to_string(dtype_size(to) * 8));
  Tensor y = Tensor::zeros(to, x->shape());
  if (x->nbytes() > 0) std::memcpy(y.raw(), x->raw(), x->nbytes());
  ctx.set_output(0, std::move(y));
  return {};
}

}  // namespace

void register_elementwise_cast_ops(OpRegistry& r) {
  r.add("BitCast", bit_cast_kernel);
  r.add("Cast", cast_kernel);
  r.add("CastLike", cast_like_kernel);
  r.add("Clip", clip_kernel);
  r.add("Identity", identity_kernel);
  r.add("Dropout", dropout_kernel);
}

}  // namespace hone::eval
