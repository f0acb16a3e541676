// Linear quantization kernels: QuantizeLinear, DequantizeLinear (per tensor,
// per axis or blocked (opset 21); zero point optional; output_dtype and
// QuantizeLinear's precision (opset 23)) and DynamicQuantizeLinear (uint8).
// Quantizing rounds half to even and saturates to the integer type.
#include <cmath>
#include <limits>

#include "eval/ops_elementwise_internal.h"
#include "ops/attrs.h"

namespace hone::eval {
namespace {

using ew::narrow;
using ew::round_half_even;

/// x / scale as ONNX quantization defines it: the quotient in the input's
/// float precision (float32 for f32/f16/bf16, as the ONNX reference and the
/// backend test data compute it), then rounded half to even. Doing the
/// division in double instead changes results right at the .5 ties.
double quantize_quotient(double x, double scale, DType x_type) {
  const double q = x / scale;
  return round_half_even(x_type == DType::kF64 ? q : static_cast<double>(static_cast<float>(q)));
}

/// How scale and zero point index an element: per tensor (one value), per
/// axis (one value per index along `axis`) or blocked (opset 21: scale has
/// x's shape but ceil(dim / block_size) along `axis`).
struct QuantLayout {
  bool per_axis = false;
  int64_t axis_dim = 1;
  int64_t inner = 1;  // elements after the axis
  int64_t block = 0;  // block_size, when blocked
  int64_t scale_axis_dim = 1;
  int64_t param(int64_t i) const {
    if (block > 0) {
      const int64_t outer = i / (axis_dim * inner), a = (i / inner) % axis_dim, in = i % inner;
      return (outer * scale_axis_dim + a / block) * inner + in;
    }
    return per_axis ? (i / inner) % axis_dim : 0;
  }
};

Result<QuantLayout> quant_layout(KernelContext& ctx, const Tensor& x, const Tensor& scale,
                                 const Tensor* zero_point) {
  const std::string& op = ctx.node().op_type;
  const int64_t block = ctx.node().attr_int("block_size", 0);
  QuantLayout q;
  if (zero_point != nullptr && zero_point->shape() != scale.shape() &&
      zero_point->numel() != scale.numel())
    return fail(ErrorCode::kInvalidArgument, op + " zero point " + zero_point->describe() +
                                                 " does not match scale " + scale.describe());
  if (block != 0) {
    if (block < 0)
      return fail(ErrorCode::kInvalidArgument,
                  op + " block_size must be positive, got " + std::to_string(block));
    HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(ctx.node()),
                                          static_cast<int64_t>(x.rank()), (op + " axis").c_str()));
    bool ok = scale.rank() == x.rank();
    for (size_t d = 0; ok && d < x.rank(); ++d)
      ok = static_cast<int64_t>(d) == axis ? scale.dim(d) == (x.dim(d) + block - 1) / block
                                           : scale.dim(d) == x.dim(d);
    if (!ok)
      return fail(ErrorCode::kInvalidArgument,
                  op + " blocked scale " + scale.describe() + " must have input " + x.describe() +
                      "'s shape with ceil(dim / " + std::to_string(block) + ") along axis " +
                      std::to_string(axis));
    q.block = block;
    q.axis_dim = x.dim(axis);
    q.scale_axis_dim = scale.dim(axis);
    for (size_t d = static_cast<size_t>(axis) + 1; d < x.rank(); ++d) q.inner *= x.dim(d);
    return q;
  }
  if (scale.rank() > 1)
    return fail(ErrorCode::kInvalidArgument,
                op + " scale must be a scalar or 1-D (or blocked, with block_size), got " +
                    scale.describe());
  if (scale.rank() == 1 && scale.numel() != 1) {
    HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(ctx.node()),
                                          static_cast<int64_t>(x.rank()), (op + " axis").c_str()));
    if (x.dim(axis) != scale.numel())
      return fail(ErrorCode::kInvalidArgument, op + " per-axis scale " + scale.describe() +
                                                   " does not match input " + x.describe() +
                                                   " along axis " + std::to_string(axis));
    q.per_axis = true;
    q.axis_dim = x.dim(axis);
    for (size_t d = static_cast<size_t>(axis) + 1; d < x.rank(); ++d) q.inner *= x.dim(d);
  } else if (scale.numel() != 1) {
    return fail(ErrorCode::kInvalidArgument, op + " scale is empty: " + scale.describe());
  }
  return q;
}

/// Rounds the quotient x / scale to the type QuantizeLinear-23's `precision`
/// attribute names (0: the default, quantize_quotient's rule).
Result<double> round_to_precision(double q, int64_t code) {
  switch (code) {
    case 1:
      return static_cast<double>(static_cast<float>(q));
    case 10:
      return static_cast<double>(Half::from_float(static_cast<float>(q)).to_float());
    case 11:
      return q;
    case 16:
      return static_cast<double>(BFloat16::from_float(static_cast<float>(q)).to_float());
    default:
      return fail(ErrorCode::kUnsupported, "QuantizeLinear precision " + std::to_string(code) +
                                               " is not a float type (1, 10, 11 or 16)");
  }
}

Result<void> check_quant_type(const std::string& op, DType t) {
  switch (t) {
    case DType::kU8:
    case DType::kI8:
    case DType::kU16:
    case DType::kI16:
      return {};
    default:
      return fail(ErrorCode::kUnsupported, op +
                                               " quantized type must be uint8, int8, uint16 or "
                                               "int16, got " +
                                               std::string(dtype_name(t)));
  }
}

Result<void> quantize_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 2, 3));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* scale, ctx.tensor(1));
  const Tensor* zp = nullptr;
  if (ctx.has_input(2)) {
    HONE_TRY(zp, ctx.tensor(2));
  }
  DType out_type = zp ? zp->dtype() : DType::kU8;
  if (const int64_t code = ctx.node().attr_int("output_dtype", 0); code != 0) {
    auto t = dtype_from_onnx(code);
    if (!t) return fail(std::move(t).error().add_context("QuantizeLinear output_dtype"));
    if (zp && *t != zp->dtype())
      return fail(ErrorCode::kInvalidArgument, "QuantizeLinear output_dtype " +
                                                   std::string(dtype_name(*t)) +
                                                   " differs from the zero point's type " +
                                                   std::string(dtype_name(zp->dtype())));
    out_type = *t;
  }
  HONE_CHECK_OK(check_quant_type("QuantizeLinear", out_type));
  if (!is_floating(x->dtype()) && x->dtype() != DType::kI32)
    return fail(ErrorCode::kInvalidArgument,
                "QuantizeLinear input must be floating-point or int32, got " + x->describe());
  if (!is_floating(scale->dtype()))
    return fail(ErrorCode::kInvalidArgument,
                "QuantizeLinear scale must be floating-point, got " + scale->describe());
  HONE_TRY(QuantLayout q, quant_layout(ctx, *x, *scale, zp));
  const int64_t precision = ctx.node().attr_int("precision", 0);
  if (precision != 0) HONE_CHECK_OK(round_to_precision(0.0, precision));
  const HostVector<double> s = to_doubles(*scale);
  const HostVector<double> z = zp ? to_doubles(*zp) : HostVector<double>(s.size(), 0.0);
  for (double v : s)
    if (!(v != 0.0))
      return fail(ErrorCode::kInvalidArgument,
                  "QuantizeLinear scale must be non-zero, got " + std::to_string(v));
  Tensor y = Tensor::zeros(out_type, x->shape());
  HONE_CHECK_OK(dispatch_integer(out_type, [&]<class Q>() -> Result<void> {
    Q* out = y.data<Q>();
    for (int64_t i = 0; i < x->numel(); ++i) {
      const int64_t c = q.param(i);
      const double xi = tensor_element_as_double(*x, i);
      double v;
      if (precision != 0)
        v = round_half_even(*round_to_precision(xi / s[c], precision)) + z[c];
      else
        v = quantize_quotient(xi, s[c], x->dtype()) + z[c];
      out[i] = ew::saturate_cast<Q>(v);
    }
    return {};
  }));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> dequantize_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 2, 3));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* scale, ctx.tensor(1));
  const Tensor* zp = nullptr;
  if (ctx.has_input(2)) {
    HONE_TRY(zp, ctx.tensor(2));
  }
  if (x->dtype() != DType::kI32) HONE_CHECK_OK(check_quant_type("DequantizeLinear", x->dtype()));
  if (zp) HONE_CHECK_OK(ew::expect_same_dtype(ctx, *x, *zp, 0, 2));
  if (!is_floating(scale->dtype()))
    return fail(ErrorCode::kInvalidArgument,
                "DequantizeLinear scale must be floating-point, got " + scale->describe());
  HONE_TRY(QuantLayout q, quant_layout(ctx, *x, *scale, zp));
  const HostVector<double> s = to_doubles(*scale);
  const HostVector<double> z = zp ? to_doubles(*zp) : HostVector<double>(s.size(), 0.0);
  DType out_type = scale->dtype();
  if (const int64_t code = ctx.node().attr_int("output_dtype", 0); code != 0) {
    auto t = dtype_from_onnx(code);
    if (!t) return fail(std::move(t).error().add_context("DequantizeLinear output_dtype"));
    out_type = *t;
  }
  Tensor y = Tensor::zeros(out_type, x->shape());
  HONE_CHECK_OK(dispatch_float(out_type, [&]<class T>() -> Result<void> {
    T* out = y.data<T>();
    for (int64_t i = 0; i < x->numel(); ++i) {
      const int64_t c = q.param(i);
      out[i] = narrow<T>((tensor_element_as_double(*x, i) - z[c]) * s[c]);
    }
    return {};
  }));
  ctx.set_output(0, std::move(y));
  return {};
}

// DynamicQuantizeLinear: uint8 with the range [min(0, min x), max(0, max x)];
// the scale is float32 as the spec defines it, and the zero point and data
// are quantized with that float scale.
Result<void> dynamic_quantize_kernel(KernelContext& ctx) {
  HONE_CHECK_OK(ew::expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  if (!is_floating(x->dtype()))
    return fail(ErrorCode::kInvalidArgument,
                "DynamicQuantizeLinear input must be floating-point, got " + x->describe());
  const HostVector<double> v = to_doubles(*x);
  double lo = 0.0, hi = 0.0;
  for (double e : v) {
    if (std::isnan(e))
      return fail(ErrorCode::kInvalidArgument, "DynamicQuantizeLinear input contains NaN");
    lo = std::min(lo, e);
    hi = std::max(hi, e);
  }
  if (std::isinf(lo) || std::isinf(hi))
    return fail(ErrorCode::kInvalidArgument, "DynamicQuantizeLinear input contains infinity");
  // float32 arithmetic, as the spec's formula is written for float inputs.
  const float scale = (static_cast<float>(hi) - static_cast<float>(lo)) / 255.0f;
  uint8_t zero_point = 0;
  Tensor y = Tensor::zeros(DType::kU8, x->shape());
  if (scale != 0.0f) {
    const double s = scale;
    zero_point = ew::saturate_cast<uint8_t>(quantize_quotient(0.0 - lo, s, DType::kF32));
    uint8_t* out = y.data<uint8_t>();
    for (size_t i = 0; i < v.size(); ++i)
      out[i] = ew::saturate_cast<uint8_t>(quantize_quotient(v[i], s, DType::kF32) + zero_point);
  }
  ctx.set_output(0, std::move(y));
  if (ctx.wants_output(1)) ctx.set_output(1, Tensor::scalar(scale));
  if (ctx.wants_output(2)) ctx.set_output(2, Tensor::scalar(zero_point));
  return {};
}

}  // namespace

void register_elementwise_quantize_ops(OpRegistry& r) {
  r.add("QuantizeLinear", quantize_kernel);
  r.add("DequantizeLinear", dequantize_kernel);
  r.add("DynamicQuantizeLinear", dynamic_quantize_kernel);
}

}  // namespace hone::eval
