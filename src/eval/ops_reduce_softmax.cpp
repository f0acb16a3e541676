// Reference Softmax, LogSoftmax, Hardmax, TopK, CumSum and CumProd: ops that reduce
// along one axis but keep (or re-expand) its extent.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "eval/kernel_util.h"
#include "eval/ops.h"
#include "eval/ops_reduce_internal.h"
#include "ops/attrs.h"
#include "ops/topk.h"

namespace hone::eval {
namespace {

enum class SoftKind { kSoftmax, kLogSoftmax, kHardmax };

// Splits `shape` into outer × len × inner around the op's axis. Before opset
// 13 the input is coerced to 2-D at `axis` (default 1): len covers every
// trailing dim. From 13 on, len is the one axis (default -1).
Result<void> split_axis(const KernelContext& ctx, const std::vector<int64_t>& shape, int64_t& outer,
                        int64_t& len, int64_t& inner) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  HONE_TRY(const ops::SoftmaxAttrs sa, ops::softmax_attrs(ctx.node(), ctx.opset()));
  const bool legacy = sa.coerce_2d;
  const int64_t raw = sa.axis;
  outer = len = inner = 1;
  if (rank == 0) return {};  // a scalar is a one-element row
  if (legacy) {
    // The 2-D coercion accepts axis == rank (everything in the outer part).
    if (raw < -rank || raw > rank)
      return fail(
          ErrorCode::kInvalidArgument,
          "axis " + std::to_string(raw) + " is out of range for rank " + std::to_string(rank));
    const int64_t axis = raw < 0 ? raw + rank : raw;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : len) *= shape[static_cast<size_t>(i)];
    return {};
  }
  HONE_TRY(int64_t axis, normalize_axis(raw, rank));
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = shape[static_cast<size_t>(i)];
    if (i < axis)
      outer *= d;
    else if (i == axis)
      len = d;
    else
      inner *= d;
  }
  return {};
}

Result<void> softmax_like(KernelContext& ctx, SoftKind kind) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  int64_t outer, len, inner;
  HONE_CHECK_OK(split_axis(ctx, x->shape(), outer, len, inner));
  Tensor out = Tensor::for_overwrite(x->dtype(), x->shape());
  HONE_CHECK_OK(dispatch_float(x->dtype(), [&]<class T>() -> Result<void> {
    const T* in = x->data<T>();
    T* o = out.data<T>();
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(len, 1));
    ctx.pool().parallel_for(
        outer * inner,
        [&](int64_t r0, int64_t r1) {
          std::vector<double> row(static_cast<size_t>(len));
          for (int64_t r = r0; r < r1; ++r) {
            const int64_t base = (r / inner) * len * inner + (r % inner);
            double m = -std::numeric_limits<double>::infinity();
            int64_t arg = 0;
            for (int64_t k = 0; k < len; ++k) {
              row[static_cast<size_t>(k)] = to_f64(in[base + k * inner]);
              if (row[static_cast<size_t>(k)] > m) {
                m = row[static_cast<size_t>(k)];
                arg = k;
              }
            }
            if (kind == SoftKind::kHardmax) {
              for (int64_t k = 0; k < len; ++k)
                o[base + k * inner] = from_f64<T>(k == arg ? 1.0 : 0.0);
              continue;
            }
            if (std::isinf(m) && m < 0) m = 0.0;  // every entry -inf: avoid inf - inf
            double s = 0.0;
            if (kind == SoftKind::kSoftmax) {  // each exp once: kept in the row
              for (int64_t k = 0; k < len; ++k) {
                double& v = row[static_cast<size_t>(k)];
                v = std::exp(v - m);
                s += v;
              }
              for (int64_t k = 0; k < len; ++k)
                o[base + k * inner] = from_f64<T>(row[static_cast<size_t>(k)] / s);
              continue;
            }
            for (int64_t k = 0; k < len; ++k) s += std::exp(row[static_cast<size_t>(k)] - m);
            const double log_s = std::log(s);
            for (int64_t k = 0; k < len; ++k)
              o[base + k * inner] = from_f64<T>(row[static_cast<size_t>(k)] - m - log_s);
          }
        },
        grain);
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

// Reads a single integer from a scalar or one-element tensor.
Result<int64_t> read_single_int(const Tensor& t, const char* what) {
  if (!is_integer(t.dtype()) || t.numel() != 1 || t.rank() > 1)
    return fail(ErrorCode::kInvalidArgument, std::string(what) +
                                                 " must be an integer scalar or 1-element 1-D "
                                                 "tensor, got " +
                                                 t.describe());
  return tensor_element_as_int64(t, 0);
}

Result<void> top_k(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& n = ctx.node();
  int64_t k;
  if (ctx.has_input(1)) {
    HONE_TRY(k, read_single_int(ctx.input(1), "TopK K"));
  } else if (n.has_attr("k")) {
    k = n.attr_int("k", 0);
  } else {
    return fail(ErrorCode::kInvalidArgument,
                "TopK needs K (input 1, or attribute 'k' before opset 10)");
  }
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return fail(ErrorCode::kInvalidArgument, "TopK needs rank >= 1, got a scalar");
  HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(n), rank));
  const bool largest = ops::topk_attrs(n).largest;
  const int64_t len = x->dim(static_cast<size_t>(axis));
  if (k < 0 || k > len)
    return fail(ErrorCode::kInvalidArgument,
                "TopK K " + std::to_string(k) + " is out of range [0, " + std::to_string(len) +
                    "] for axis " + std::to_string(axis) + " of " + x->describe());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < axis) outer *= x->dim(static_cast<size_t>(i));
    if (i > axis) inner *= x->dim(static_cast<size_t>(i));
  }
  std::vector<int64_t> out_shape = x->shape();
  out_shape[static_cast<size_t>(axis)] = k;
  Tensor values = Tensor::zeros(x->dtype(), out_shape);
  Tensor indices = Tensor::zeros(DType::kI64, out_shape);
  int64_t* oi = indices.data<int64_t>();
  HONE_CHECK_OK(dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    const T* in = x->data<T>();
    T* ov = values.data<T>();
    std::vector<int64_t> idx(static_cast<size_t>(len));
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t b = 0; b < inner; ++b) {
        const T* p = in + a * len * inner + b;
        auto greater = [&](int64_t i, int64_t j) {
          if constexpr (kIsFloat<T>)
            return ops::nan_greater(to_f64(p[i * inner]), to_f64(p[j * inner]));
          else
            return p[i * inner] > p[j * inner];
        };
        ops::topk_order(len, k, largest, greater, idx);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t src = idx[static_cast<size_t>(j)];
          const int64_t dst = a * k * inner + j * inner + b;
          ov[dst] = p[src * inner];
          oi[dst] = src;
        }
      }
    }
    return {};
  }));
  ctx.set_output(0, std::move(values));
  ctx.set_output(1, std::move(indices));
  return {};
}

/// CumSum, and CumProd (opset 26): the running sum or product along an axis,
/// inclusive or exclusive, forwards or reversed. Floats accumulate in double;
/// integers wrap as two's complement, as the ONNX Runtime kernels do.
Result<void> cumulative(KernelContext& ctx, bool product) {
  const char* op = product ? "CumProd" : "CumSum";
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* axis_t, ctx.tensor(1));
  HONE_TRY(int64_t raw_axis, read_single_int(*axis_t, product ? "CumProd axis" : "CumSum axis"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0)
    return fail(ErrorCode::kInvalidArgument, std::string(op) + " needs rank >= 1, got a scalar");
  HONE_TRY(int64_t axis, normalize_axis(raw_axis, rank));
  const bool exclusive = ctx.node().attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.node().attr_int("reverse", 0) != 0;
  const int64_t len = x->dim(static_cast<size_t>(axis));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < axis) outer *= x->dim(static_cast<size_t>(i));
    if (i > axis) inner *= x->dim(static_cast<size_t>(i));
  }
  Tensor out = Tensor::for_overwrite(x->dtype(), x->shape());
  HONE_CHECK_OK(dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    const T* in = x->data<T>();
    T* o = out.data<T>();
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t b = 0; b < inner; ++b) {
        const int64_t base = a * len * inner + b;
        if constexpr (kIsFloat<T>) {
          double s = product ? 1.0 : 0.0;
          for (int64_t j = 0; j < len; ++j) {
            const int64_t at = base + (reverse ? len - 1 - j : j) * inner;
            const double v = to_f64(in[at]);
            if (!exclusive) s = product ? s * v : s + v;
            o[at] = from_f64<T>(s);
            if (exclusive) s = product ? s * v : s + v;
          }
        } else {
          uint64_t s = product ? 1 : 0;
          for (int64_t j = 0; j < len; ++j) {
            const int64_t at = base + (reverse ? len - 1 - j : j) * inner;
            const uint64_t v = std::is_signed_v<T>
                                   ? static_cast<uint64_t>(static_cast<int64_t>(in[at]))
                                   : static_cast<uint64_t>(in[at]);
            if (!exclusive) s = product ? s * v : s + v;
            o[at] = static_cast<T>(s);
            if (exclusive) s = product ? s * v : s + v;
          }
        }
      }
    }
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

}  // namespace

void register_reduce_softmax_ops(OpRegistry& r) {
  r.add("Softmax", [](KernelContext& ctx) { return softmax_like(ctx, SoftKind::kSoftmax); });
  r.add("LogSoftmax", [](KernelContext& ctx) { return softmax_like(ctx, SoftKind::kLogSoftmax); });
  r.add("Hardmax", [](KernelContext& ctx) { return softmax_like(ctx, SoftKind::kHardmax); });
  r.add("TopK", top_k);
  r.add("CumSum", [](KernelContext& ctx) { return cumulative(ctx, false); });
  r.add("CumProd", [](KernelContext& ctx) { return cumulative(ctx, true); });
}

}  // namespace hone::eval
