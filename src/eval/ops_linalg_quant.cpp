// Reference quantized matmuls: MatMulInteger and QLinearMatMul. Both
// compute the exact integer product of zero-point-shifted operands; zero
// points and scales are per tensor (one element), per row of A / per column
// of B (1-D), or N-D tensors broadcast against the operand.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "eval/ops.h"
#include "eval/ops_linalg_internal.h"
#include "hone/shape.h"

namespace hone::eval {
namespace {

// The shape `param` (a zero point or scale of operand A or B) takes when
// broadcast against `full` (the operand's shape after 1-D promotion):
// a 1-D per-row parameter of A becomes [M, 1], a per-column one of B [1, N].
Result<std::vector<int64_t>> param_shape(const Tensor& param, const std::vector<int64_t>& full,
                                         bool per_row, const char* what) {
  std::vector<int64_t> s = param.shape();
  if (param.numel() == 1) return std::vector<int64_t>{};
  if (param.rank() == 1)
    s = per_row ? std::vector<int64_t>{param.dim(0), 1} : std::vector<int64_t>{1, param.dim(0)};
  auto b = broadcast_shapes({s, full});
  if (!b || *b != full)
    return fail(ErrorCode::kInvalidArgument, std::string(what) + " " + param.describe() +
                                                 " does not fit an operand of shape " +
                                                 shape_to_string(full));
  return s;
}

// Operand minus its zero point, as int64 accumulators (uint64 wrapping).
Result<std::vector<uint64_t>> shifted_operand(const Tensor& x, const std::vector<int64_t>& full,
                                              const Tensor* zp, bool per_row, const char* what) {
  std::vector<uint64_t> out(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i)
    out[static_cast<size_t>(i)] = static_cast<uint64_t>(tensor_element_as_int64(x, i));
  if (!zp) return out;
  if (zp->dtype() != x.dtype())
    return fail(ErrorCode::kInvalidArgument, std::string(what) + " " + zp->describe() +
                                                 " must have the dtype of its operand " +
                                                 x.describe());
  HONE_TRY(std::vector<int64_t> zs, param_shape(*zp, full, per_row, what));
  const std::vector<int64_t> map = broadcast_index_map(zs, full);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] -= static_cast<uint64_t>(tensor_element_as_int64(*zp, map[i]));
  return out;
}

bool is_8bit(DType t) {
  return t == DType::kU8 || t == DType::kI8;
}

// The exact integer product of (A - a_zp) and (B - b_zp), shaped as
// plan.out_full_shape.
Result<std::vector<uint64_t>> integer_product(KernelContext& ctx, const Tensor& a,
                                              const Tensor* a_zp, const Tensor& b,
                                              const Tensor* b_zp, MatMulPlan& plan) {
  HONE_TRY(plan, plan_matmul(a.shape(), b.shape()));
  HONE_TRY(std::vector<uint64_t> av,
           shifted_operand(a, plan.a_full_shape, a_zp, true, "zero point of A"));
  HONE_TRY(std::vector<uint64_t> bv,
           shifted_operand(b, plan.b_full_shape, b_zp, false, "zero point of B"));
  std::vector<uint64_t> c(static_cast<size_t>(shape_numel(plan.out_full_shape)));
  matmul_batched<uint64_t>(ctx.pool(), plan.batch, plan.M, plan.K, plan.N, plan.a_off, plan.b_off,
                           av.data(), bv.data(), c.data());
  return c;
}

Result<void> matmul_integer(KernelContext& ctx) {
  HONE_TRY(const Tensor* a, ctx.tensor(0));
  HONE_TRY(const Tensor* b, ctx.tensor(1));
  if (!is_8bit(a->dtype()) || !is_8bit(b->dtype()))
    return fail(ErrorCode::kUnsupported, "MatMulInteger needs u8/i8 operands, got " +
                                             a->describe() + " and " + b->describe());
  const Tensor* a_zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const Tensor* b_zp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  MatMulPlan plan;
  HONE_TRY(std::vector<uint64_t> c, integer_product(ctx, *a, a_zp, *b, b_zp, plan));
  Tensor out = Tensor::zeros(DType::kI32, plan.out_shape);
  int32_t* o = out.data<int32_t>();
  for (size_t i = 0; i < c.size(); ++i) o[i] = static_cast<int32_t>(c[i]);
  ctx.set_output(0, std::move(out));
  return {};
}

// Scale or zero point values broadcast to the output's full shape.
Result<std::vector<double>> param_at_output(const Tensor& param,
                                            const std::vector<int64_t>& out_full, bool per_row,
                                            const char* what) {
  std::vector<int64_t> s;
  if (param.numel() != 1) {
    HONE_TRY(s, param_shape(param, out_full, per_row, what));
  }
  const std::vector<int64_t> map = broadcast_index_map(s, out_full);
  std::vector<double> v(map.size());
  for (size_t i = 0; i < map.size(); ++i) v[i] = tensor_element_as_double(param, map[i]);
  return v;
}

Result<void> qlinear_matmul(KernelContext& ctx) {
  for (size_t i = 0; i < 8; ++i)
    if (!ctx.has_input(i))
      return fail(ErrorCode::kInvalidArgument,
                  "QLinearMatMul needs 8 inputs (a, a_scale, a_zero_point, b, b_scale, "
                  "b_zero_point, y_scale, y_zero_point); input " +
                      std::to_string(i) + " is missing");
  const Tensor &a = ctx.input(0), &a_scale = ctx.input(1), &a_zp = ctx.input(2);
  const Tensor &b = ctx.input(3), &b_scale = ctx.input(4), &b_zp = ctx.input(5);
  const Tensor &y_scale = ctx.input(6), &y_zp = ctx.input(7);
  if (!is_8bit(a.dtype()) || !is_8bit(b.dtype()) || !is_8bit(y_zp.dtype()))
    return fail(ErrorCode::kUnsupported, "QLinearMatMul needs u8/i8 a, b and y_zero_point, got " +
                                             a.describe() + ", " + b.describe() + ", " +
                                             y_zp.describe());
  MatMulPlan plan;
  HONE_TRY(std::vector<uint64_t> c, integer_product(ctx, a, &a_zp, b, &b_zp, plan));
  // Scales of A follow A's rows; those of B and Y follow the output columns.
  HONE_TRY(std::vector<double> sa, param_at_output(a_scale, plan.out_full_shape, true, "a_scale"));
  HONE_TRY(std::vector<double> sb, param_at_output(b_scale, plan.out_full_shape, false, "b_scale"));
  HONE_TRY(std::vector<double> sy, param_at_output(y_scale, plan.out_full_shape, false, "y_scale"));
  HONE_TRY(std::vector<double> zy,
           param_at_output(y_zp, plan.out_full_shape, false, "y_zero_point"));
  Tensor out = Tensor::zeros(y_zp.dtype(), plan.out_shape);
  HONE_CHECK_OK(dispatch_integer(y_zp.dtype(), [&]<class T>() -> Result<void> {
    T* o = out.data<T>();
    const double lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    for (size_t i = 0; i < c.size(); ++i) {
      const double acc = static_cast<double>(static_cast<int64_t>(c[i]));
      const double q = std::nearbyint(acc * (sa[i] * sb[i] / sy[i])) + zy[i];
      o[i] = static_cast<T>(std::clamp(q, lo, hi));
    }
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

}  // namespace

void register_linalg_quant_ops(OpRegistry& r) {
  r.add("MatMulInteger", matmul_integer);
  r.add("QLinearMatMul", qlinear_matmul);
}

}  // namespace hone::eval
