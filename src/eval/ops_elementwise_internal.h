// Private to the element-wise reference kernels (ops_elementwise_*.cpp):
// per-part registration, correctly rounded narrowing from double, input-count
// checks and the broadcasting loop every binary/variadic op shares.
//
//   broadcast_for_each<2>(ctx, out_shape, {&a.shape(), &b.shape()},
//                         [&](int64_t o, const std::array<int64_t, 2>& i) { y[o] = pa[i[0]] +
//                         pb[i[1]]; });
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "eval/kernel.h"
#include "eval/kernel_util.h"
#include "hone/shape.h"

namespace hone::eval {

void register_elementwise_unary_ops(OpRegistry& r);       // math, logic Not, IsInf/IsNaN
void register_elementwise_activation_ops(OpRegistry& r);  // Relu ... Gelu
void register_elementwise_binary_ops(OpRegistry& r);      // arithmetic, compare, logic, bitwise
void register_elementwise_variadic_ops(OpRegistry& r);    // Sum, Mean, Min, Max, Where
void register_elementwise_cast_ops(OpRegistry& r);        // Cast, CastLike, Clip, Identity, Dropout
void register_elementwise_quantize_ops(OpRegistry& r);  // (Dynamic)QuantizeLinear, DequantizeLinear

namespace ew {

/// double → float rounded to odd: truncates toward zero and sets the lowest
/// mantissa bit when inexact, so a second rounding to fewer than 23 bits
/// (half, bfloat16) is the correctly rounded result of the double.
inline float to_float_round_odd(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(v) || std::isinf(f) || static_cast<double>(f) == v) return f;
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 1u) == 0) {
    // f is the even neighbour; step to the odd one on v's side of f.
    const bool f_beyond = std::fabs(static_cast<double>(f)) > std::fabs(v);
    bits = f_beyond ? bits - 1 : bits + 1;
    f = std::bit_cast<float>(bits);
  }
  return f;
}

/// double → T rounded once (floats), or with from_f64's C++ semantics (integers).
template <class T>
inline T narrow(double v) {
  if constexpr (std::is_same_v<T, Half>)
    return Half::from_float(to_float_round_odd(v));
  else if constexpr (std::is_same_v<T, BFloat16>)
    return BFloat16::from_float(to_float_round_odd(v));
  else
    return from_f64<T>(v);
}

/// double → integer T, NaN → 0 and out-of-range values clamped (C++ leaves
/// those undefined; ONNX does too, so the reference picks saturation).
template <class T>
inline T saturate_cast(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    if (std::isnan(v)) return T{0};
    // The limits as doubles: lowest is exact; 2^bits for the upper bound.
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double hi_excl = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
    if (v <= lo) return std::numeric_limits<T>::lowest();
    if (v >= hi_excl) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

/// Round half to even (ONNX Round, QuantizeLinear), independent of the FPU mode.
inline double round_half_even(double v) {
  if (!std::isfinite(v)) return v;
  const double r = std::round(v);  // half away from zero
  if (std::fabs(v - std::trunc(v)) == 0.5) return 2.0 * std::round(v / 2.0);
  return r;
}

/// Wrapping integer arithmetic (signed overflow is undefined in C++).
template <class T>
inline T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T>
inline T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T>
inline T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // uint16 * uint16 promotes to int and may overflow; go through a wide unsigned.
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(
      static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}
template <class T>
inline T wrap_neg(T a) {
  return wrap_sub(T{0}, a);
}

/// Error unless the node has between lo and hi inputs (trailing omitted ones count).
inline Result<void> expect_inputs(KernelContext& ctx, size_t lo, size_t hi) {
  const size_t n = ctx.num_inputs();
  if (n < lo || n > hi) {
    const std::string want =
        lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
    return fail(ErrorCode::kInvalidArgument,
                ctx.node().op_type + " takes " + want + " inputs, got " + std::to_string(n));
  }
  return {};
}

inline Result<void> expect_same_dtype(KernelContext& ctx, const Tensor& a, const Tensor& b,
                                      size_t ia, size_t ib) {
  if (a.dtype() != b.dtype())
    return fail(ErrorCode::kInvalidArgument, ctx.node().op_type + " inputs " + std::to_string(ia) +
                                                 " and " + std::to_string(ib) +
                                                 " must have the same dtype, got " + a.describe() +
                                                 " and " + b.describe());
  return {};
}

/// Runs fn(begin, end) over [0, n), on the pool when n is large.
template <class F>
inline void parallel_range(KernelContext& ctx, int64_t n, F&& fn) {
  constexpr int64_t kGrain = int64_t{1} << 15;
  if (n < 2 * kGrain) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  ctx.pool().parallel_for(
      n, [&](int64_t b, int64_t e) { fn(b, e); }, kGrain);
}

/// The collapsed iteration space of a broadcast: the output's dims with
/// size-1 dims dropped and neighbours that every input walks contiguously
/// (or not at all) merged, and each input's stride per remaining dim. Only
/// N varies, so each file generates this once, not once per kernel.
template <size_t N>
struct BroadcastWalk {
  std::vector<int64_t> dims;                    // at least one dim
  std::array<std::vector<int64_t>, N> strides;  // per input, per dim
};

template <size_t N>
BroadcastWalk<N> plan_broadcast_walk(const std::vector<int64_t>& out_shape,
                                     const std::array<const std::vector<int64_t>*, N>& in_shapes) {
  std::array<std::vector<int64_t>, N> full;
  for (size_t k = 0; k < N; ++k) full[k] = broadcast_strides(*in_shapes[k], out_shape);
  BroadcastWalk<N> w;
  auto& dims = w.dims;
  auto& st = w.strides;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; k < N && merge; ++k) merge = st[k].back() == full[k][d] * out_shape[d];
    if (merge) {
      dims.back() *= out_shape[d];
      for (size_t k = 0; k < N; ++k) st[k].back() = full[k][d];
    } else {
      dims.push_back(out_shape[d]);
      for (size_t k = 0; k < N; ++k) st[k].push_back(full[k][d]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (size_t k = 0; k < N; ++k) st[k].push_back(0);
  }
  return w;
}

/// Calls f(out_index, {in_index...}) for every element of `out_shape`, with
/// each input of `in_shapes` broadcast (NumPy rules) to it. Every input shape
/// must broadcast to out_shape (broadcast_shapes checks that).
template <size_t N, class F>
void broadcast_for_each(KernelContext& ctx, const std::vector<int64_t>& out_shape,
                        const std::array<const std::vector<int64_t>*, N>& in_shapes, F&& f) {
  const int64_t n = shape_numel(out_shape);
  if (n == 0) return;
  const BroadcastWalk<N> w = plan_broadcast_walk<N>(out_shape, in_shapes);
  const std::vector<int64_t>& dims = w.dims;
  const std::array<std::vector<int64_t>, N>& st = w.strides;
  const size_t rank = dims.size();
  const int64_t inner = dims[rank - 1];

  parallel_range(ctx, n, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(rank, 0);
    std::array<int64_t, N> off{};
    int64_t rem = begin;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
      for (size_t k = 0; k < N; ++k) off[k] += idx[d] * st[k][d];
    }
    std::array<int64_t, N> last{};
    for (size_t k = 0; k < N; ++k) last[k] = st[k][rank - 1];
    int64_t i = begin;
    while (i < end) {
      const int64_t len = std::min(inner - idx[rank - 1], end - i);
      std::array<int64_t, N> cur = off;
      for (int64_t j = 0; j < len; ++j) {
        f(i + j, cur);
        for (size_t k = 0; k < N; ++k) cur[k] += last[k];
      }
      i += len;
      idx[rank - 1] += len;
      for (size_t k = 0; k < N; ++k) off[k] += len * last[k];
      // Carry into the outer dims.
      for (size_t d = rank - 1; d > 0 && idx[d] == dims[d]; --d) {
        for (size_t k = 0; k < N; ++k) off[k] += st[k][d - 1] - dims[d] * st[k][d];
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  });
}

/// y = op(x) element-wise for float x (f32/f64/f16/bf16), computed in double
/// and rounded once; output 0 has x's dtype and shape.
template <class Op>
Result<void> map_float(KernelContext& ctx, Op op) {
  HONE_CHECK_OK(expect_inputs(ctx, 1, 1));
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  return dispatch_float(x->dtype(), [&]<class T>() -> Result<void> {
    Tensor y = Tensor::for_overwrite(x->dtype(), x->shape());
    const T* in = x->data<T>();
    T* out = y.data<T>();
    parallel_range(ctx, x->numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = narrow<T>(op(to_f64(in[i])));
    });
    ctx.set_output(0, std::move(y));
    return {};
  });
}

}  // namespace ew
}  // namespace hone::eval
