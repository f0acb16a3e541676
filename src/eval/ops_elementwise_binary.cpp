// Binary kernels with ONNX multidirectional broadcasting: Add, Sub, Mul, Div,
// Pow, Mod, BitShift, BitwiseAnd/Or/Xor, And/Or/Xor, Equal, Less,
// LessOrEqual, Greater, GreaterOrEqual. Float math in double rounded once;
// integer math exact in the input type (wrapping on overflow).
#include <atomic>
#include <cmath>
#include <utility>

#include "eval/ops_elementwise_internal.h"
#include "ops/attrs.h"

namespace hone::eval {
namespace {

using ew::expect_inputs;
using ew::narrow;

struct BinaryInputs {
  Tensor a;  // copies share the caller's bytes
  Tensor b;
  std::vector<int64_t> shape;  // broadcast output shape
};

/// Opset < 7 binary ops broadcast only with broadcast=1, placing B's dims
/// inside A's starting at `axis` (suffix-aligned when axis is absent). Returns
/// B's shape padded with 1s to A's rank so NumPy rules give the same result.
Result<std::vector<int64_t>> legacy_broadcast_shape(KernelContext& ctx, const Tensor& a,
                                                    const Tensor& b) {
  const int64_t ra = static_cast<int64_t>(a.rank()), rb = static_cast<int64_t>(b.rank());
  int64_t axis = ra - rb;
  if (ctx.node().has_attr("axis")) {
    HONE_TRY(axis, normalize_axis(ops::axis_attr(ctx.node()), std::max<int64_t>(ra, 1),
                                  "legacy broadcast axis"));
  }
  if (rb == 0) return std::vector<int64_t>(static_cast<size_t>(ra), 1);
  if (axis < 0 || axis + rb > ra)
    return fail(ErrorCode::kInvalidArgument,
                ctx.node().op_type + " (legacy broadcast) cannot place B " + b.describe() +
                    " inside A " + a.describe() + " at axis " + std::to_string(axis));
  std::vector<int64_t> shape(static_cast<size_t>(ra), 1);
  for (int64_t i = 0; i < rb; ++i) {
    const int64_t d = b.dim(static_cast<size_t>(i));
    if (d != 1 && d != a.dim(static_cast<size_t>(axis + i)))
      return fail(ErrorCode::kInvalidArgument,
                  ctx.node().op_type + " (legacy broadcast) B " + b.describe() +
                      " does not match A " + a.describe() + " at axis " + std::to_string(axis));
    shape[static_cast<size_t>(axis + i)] = d;
  }
  return shape;
}

Result<BinaryInputs> binary_inputs(KernelContext& ctx, bool same_dtype) {
  HONE_CHECK_OK(expect_inputs(ctx, 2, 2));
  BinaryInputs in;
  HONE_TRY(const Tensor* a, ctx.tensor(0));
  HONE_TRY(const Tensor* b, ctx.tensor(1));
  in.a = *a;
  in.b = *b;
  if (same_dtype) HONE_CHECK_OK(ew::expect_same_dtype(ctx, in.a, in.b, 0, 1));
  if (ctx.opset() < 7 && ctx.node().attr_int("broadcast", 0) != 0) {
    HONE_TRY(std::vector<int64_t> bshape, legacy_broadcast_shape(ctx, in.a, in.b));
    HONE_TRY(in.b, in.b.reshaped(std::move(bshape)));
  }
  HONE_TRY(in.shape, broadcast_shapes({in.a.shape(), in.b.shape()}));
  return in;
}

/// y[o] = f(a[i], b[j]) over the broadcast shape; A, B are the input element
/// types, Out the output's.
template <class A, class B, class Out, class F>
Tensor binary_map(KernelContext& ctx, const BinaryInputs& in, DType out_dtype, F f) {
  Tensor y = Tensor::for_overwrite(out_dtype, in.shape);
  const A* pa = in.a.data<A>();
  const B* pb = in.b.data<B>();
  Out* out = y.data<Out>();
  ew::broadcast_for_each<2>(
      ctx, in.shape, {&in.a.shape(), &in.b.shape()},
      [&](int64_t o, const std::array<int64_t, 2>& i) { out[o] = f(pa[i[0]], pb[i[1]]); });
  return y;
}

template <class T>
Result<void> check_no_zero_divisor(KernelContext& ctx, const Tensor& b) {
  const T* p = b.data<T>();
  for (int64_t i = 0; i < b.numel(); ++i)
    if (p[i] == T{0})
      return fail(ErrorCode::kInvalidArgument, ctx.node().op_type +
                                                   ": integer division by zero (divisor element " +
                                                   std::to_string(i) + " of " + b.describe() + ")");
  return {};
}

enum class Arith { kAdd, kSub, kMul, kDiv };

template <Arith op>
Result<void> arith_kernel(KernelContext& ctx) {
  HONE_TRY(BinaryInputs in, binary_inputs(ctx, true));
  return dispatch_numeric(in.a.dtype(), [&]<class T>() -> Result<void> {
    if constexpr (kIsFloat<T>) {
      ctx.set_output(0, binary_map<T, T, T>(ctx, in, in.a.dtype(), [](T x, T y) {
                       const double a = to_f64(x), b = to_f64(y);
                       if constexpr (op == Arith::kAdd) return narrow<T>(a + b);
                       if constexpr (op == Arith::kSub) return narrow<T>(a - b);
                       if constexpr (op == Arith::kMul) return narrow<T>(a * b);
                       if constexpr (op == Arith::kDiv) return narrow<T>(a / b);
                     }));
    } else {
      if constexpr (op == Arith::kDiv) HONE_CHECK_OK(check_no_zero_divisor<T>(ctx, in.b));
      ctx.set_output(0, binary_map<T, T, T>(ctx, in, in.a.dtype(), [](T a, T b) -> T {
                       if constexpr (op == Arith::kAdd) return ew::wrap_add(a, b);
                       if constexpr (op == Arith::kSub) return ew::wrap_sub(a, b);
                       if constexpr (op == Arith::kMul) return ew::wrap_mul(a, b);
                       if constexpr (op == Arith::kDiv) {
                         // Truncates toward zero; lowest / -1 wraps instead of trapping.
                         if constexpr (std::is_signed_v<T>)
                           if (b == T{-1}) return ew::wrap_neg(a);
                         return static_cast<T>(a / b);
                       }
                     }));
    }
    return {};
  });
}

/// base^exp for integers, exact with wrapping; a negative exponent gives the
/// truncated value of 1 / base^|exp| (0 unless |base| == 1). Sets `bad` for
/// 0 raised to a negative power.
template <class T, class E>
T int_pow(T base, E exp, std::atomic<bool>& bad) {
  if constexpr (std::is_signed_v<E>) {
    if (exp < 0) {
      if (base == T{0}) {
        bad.store(true, std::memory_order_relaxed);
        return T{0};
      }
      if (base == T{1}) return T{1};
      if constexpr (std::is_signed_v<T>)
        if (base == T{-1}) return static_cast<T>((exp % 2 == 0) ? 1 : -1);
      return T{0};
    }
  }
  T result{1};
  uint64_t e = static_cast<uint64_t>(exp);
  T b = base;
  while (e != 0) {
    if (e & 1u) result = ew::wrap_mul(result, b);
    e >>= 1;
    if (e != 0) b = ew::wrap_mul(b, b);
  }
  return result;
}

// Pow: the output has the base's dtype; the exponent may be any numeric type.
// The exponent is first widened, exactly, to f64 (a float base or a float
// exponent, whose math is in double anyway) or to int64/uint64 (integer base
// and exponent, keeping its signedness), so the kernel is instantiated once
// per base type and wide exponent: one per (base, exponent) pair was 144
// kernels and made this file the slowest of the whole build.
Result<void> pow_kernel(KernelContext& ctx) {
  HONE_TRY(BinaryInputs in, binary_inputs(ctx, false));
  return dispatch_numeric(in.a.dtype(), [&]<class T>() -> Result<void> {
    const DType et = in.b.dtype();
    if (!is_floating(et) && !is_integer(et))
      return std::unexpected(unsupported_dtype(et, "a numeric type"));
    BinaryInputs wide = in;
    if (kIsFloat<T> || is_floating(et)) {
      wide.b = cast_tensor(in.b, DType::kF64);
      ctx.set_output(0, binary_map<T, double, T>(ctx, wide, in.a.dtype(), [](T b, double e) -> T {
                       const double r = std::pow(to_f64(b), e);
                       if constexpr (kIsFloat<T>)
                         return narrow<T>(r);
                       else
                         return ew::saturate_cast<T>(r);
                     }));
      return {};
    }
    if constexpr (!kIsFloat<T>) {
      auto int_pow_map = [&]<class E>() -> Result<void> {
        wide.b = cast_tensor(in.b, dtype_of<E>());
        std::atomic<bool> bad{false};
        Tensor y = binary_map<T, E, T>(ctx, wide, in.a.dtype(),
                                       [&bad](T b, E e) { return int_pow(b, e, bad); });
        if (bad.load())
          return fail(ErrorCode::kInvalidArgument,
                      "Pow: integer 0 raised to a negative power (base " + in.a.describe() +
                          ", exponent " + in.b.describe() + ")");
        ctx.set_output(0, std::move(y));
        return {};
      };
      if (is_signed_integer(et)) return int_pow_map.template operator()<int64_t>();
      return int_pow_map.template operator()<uint64_t>();
    }
    return {};  // unreachable: a float base took the f64 path
  });
}

// Mod: fmod=0 is integer-only, result has the divisor's sign (Python %);
// fmod=1 is C fmod, result has the dividend's sign (required for floats).
Result<void> mod_kernel(KernelContext& ctx) {
  HONE_TRY(BinaryInputs in, binary_inputs(ctx, true));
  const int64_t fmod = ctx.node().attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1)
    return fail(ErrorCode::kInvalidArgument,
                "Mod fmod must be 0 or 1, got " + std::to_string(fmod));
  return dispatch_numeric(in.a.dtype(), [&]<class T>() -> Result<void> {
    if constexpr (kIsFloat<T>) {
      if (fmod == 0)
        return fail(ErrorCode::kInvalidArgument,
                    "Mod on floating-point input " + in.a.describe() + " requires fmod=1");
      ctx.set_output(0, binary_map<T, T, T>(ctx, in, in.a.dtype(), [](T a, T b) {
                       return narrow<T>(std::fmod(to_f64(a), to_f64(b)));
                     }));
    } else {
      HONE_CHECK_OK(check_no_zero_divisor<T>(ctx, in.b));
      const bool c_mod = fmod == 1;
      ctx.set_output(0, binary_map<T, T, T>(ctx, in, in.a.dtype(), [c_mod](T a, T b) -> T {
                       if constexpr (std::is_signed_v<T>) {
                         if (b == T{-1}) return T{0};  // avoids lowest % -1 trapping
                         T r = static_cast<T>(a % b);
                         if (!c_mod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
                         return r;
                       } else {
                         return static_cast<T>(a % b);
                       }
                     }));
    }
    return {};
  });
}

Result<void> bitshift_kernel(KernelContext& ctx) {
  HONE_TRY(BinaryInputs in, binary_inputs(ctx, true));
  const std::string dir = ctx.node().attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return fail(ErrorCode::kInvalidArgument,
                "BitShift direction must be 'LEFT' or 'RIGHT', got '" + dir + "'");
  const bool left = dir == "LEFT";
  return dispatch_integer(in.a.dtype(), [&]<class T>() -> Result<void> {
    if constexpr (std::is_signed_v<T>) {
      return fail(ErrorCode::kInvalidArgument,
                  "BitShift takes unsigned integers, got " + in.a.describe());
    } else {
      constexpr T kBits = static_cast<T>(sizeof(T) * 8);
      ctx.set_output(0, binary_map<T, T, T>(ctx, in, in.a.dtype(), [left](T a, T s) -> T {
                       if (s >= kBits) return T{0};  // a full-width shift clears every bit
                       return left ? static_cast<T>(a << s) : static_cast<T>(a >> s);
                     }));
      return {};
    }
  });
}

enum class Bit { kAnd, kOr, kXor };

template <Bit op>
Result<void> bitwise_kernel(KernelContext& ctx) {
  HONE_TRY(BinaryInputs in, binary_inputs(ctx, true));
  return dispatch_integer(in.a.dtype(), [&]<class T>() -> Result<void> {
    ctx.set_output(0, binary_map<T, T, T>(ctx, in, in.a.dtype(), [](T a, T b) -> T {
                     if constexpr (op == Bit::kAnd) return static_cast<T>(a & b);
                     if constexpr (op == Bit::kOr) return static_cast<T>(a | b);
                     if constexpr (op == Bit::kXor) return static_cast<T>(a ^ b);
                   }));
    return {};
  });
}

template <Bit op>
Result<void> logical_kernel(KernelContext& ctx) {
  HONE_TRY(BinaryInputs in, binary_inputs(ctx, true));
  if (in.a.dtype() != DType::kBool)
    return fail(ErrorCode::kInvalidArgument,
                ctx.node().op_type + " takes bool tensors, got " + in.a.describe());
  ctx.set_output(0, binary_map<bool, bool, bool>(ctx, in, DType::kBool, [](bool a, bool b) {
                   if constexpr (op == Bit::kAnd) return a && b;
                   if constexpr (op == Bit::kOr) return a || b;
                   if constexpr (op == Bit::kXor) return a != b;
                 }));
  return {};
}

// Greater and GreaterOrEqual are Less and LessOrEqual with the operands
// swapped (x > y is y < x for every value, NaN included), which halves their
// share of this file's instantiations: each op is one kernel per dtype.
enum class Cmp { kEq, kLt, kLe };

template <Cmp op, bool swapped = false>
Result<void> compare_kernel(KernelContext& ctx) {
  HONE_TRY(BinaryInputs in, binary_inputs(ctx, true));
  if constexpr (swapped) std::swap(in.a, in.b);
  return dispatch_all(in.a.dtype(), [&]<class T>() -> Result<void> {
    ctx.set_output(0, binary_map<T, T, bool>(ctx, in, DType::kBool, [](T x, T y) {
                     // Half/bfloat16 compare through double; every other type natively
                     // (int64 and uint64 would lose precision in double).
                     auto v = [](T t) {
                       if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
                         return to_f64(t);
                       else
                         return t;
                     };
                     const auto a = v(x);
                     const auto b = v(y);
                     if constexpr (op == Cmp::kEq) return a == b;
                     if constexpr (op == Cmp::kLt) return a < b;
                     if constexpr (op == Cmp::kLe) return a <= b;
                   }));
    return {};
  });
}

}  // namespace

void register_elementwise_binary_ops(OpRegistry& r) {
  r.add("Add", arith_kernel<Arith::kAdd>);
  r.add("Sub", arith_kernel<Arith::kSub>);
  r.add("Mul", arith_kernel<Arith::kMul>);
  r.add("Div", arith_kernel<Arith::kDiv>);
  r.add("Pow", pow_kernel);
  r.add("Mod", mod_kernel);
  r.add("BitShift", bitshift_kernel);
  r.add("BitwiseAnd", bitwise_kernel<Bit::kAnd>);
  r.add("BitwiseOr", bitwise_kernel<Bit::kOr>);
  r.add("BitwiseXor", bitwise_kernel<Bit::kXor>);
  r.add("And", logical_kernel<Bit::kAnd>);
  r.add("Or", logical_kernel<Bit::kOr>);
  r.add("Xor", logical_kernel<Bit::kXor>);
  r.add("Equal", compare_kernel<Cmp::kEq>);
  r.add("Less", compare_kernel<Cmp::kLt>);
  r.add("LessOrEqual", compare_kernel<Cmp::kLe>);
  r.add("Greater", compare_kernel<Cmp::kLt, true>);
  r.add("GreaterOrEqual", compare_kernel<Cmp::kLe, true>);
}

}  // namespace hone::eval
