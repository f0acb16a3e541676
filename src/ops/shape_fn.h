// Shape functions, written once over the dim type: each op's output shape
// from its input shapes and typed attributes (attrs.h), for concrete shapes
// (int64_t), the passes' symbolic Dims and aot's dim expressions alike. A dim
// type says through DimTraits<D> how two of its dims relate under
// broadcasting and what to do when nobody can tell (the passes make the dim
// unknown; aot, which must emit exact code, refuses).
//
//   HONE_TRY(auto out, ops::broadcast_shape<Dim>("Add", {a.dims(), b.dims()}));
//   HONE_TRY(auto mm, ops::matmul_shape<int64_t>(a, b));
//   HONE_TRY(auto g, ops::gemm_shape(ops::GemmAttrs{}, a, b, &c));
//
// Adding an op's rule: write `<op>_shape<D>` here (or in a sibling header for
// a family: shape_fn_tensor.h holds the reshaping, indexing and reducing
// ops), read its attributes through attrs.h, and call it from the passes'
// propagation and aot's shape_rules; the dim type's own limits stay with it.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/shape.h"
#include "ops/attrs.h"
#include "ops/broadcast.h"
#include "ops/sym_int.h"
#include "ops/window.h"

namespace hone::ops {

/// How a dim type takes part in shape functions; specialised per type.
/// match(a, b): how two dims of one axis relate (broadcast.h's DimMatch).
/// known(d): the number, when d is one.
/// unknown(): the dim to give where nobody can work one out (two dims match
/// said kUndecided for, an output of a symbolic window), or nullopt when the
/// type cannot go on (the function then fails with kUnsupported).
/// add(a, b): a + b (Concat's axis), or unknown() where it cannot be said.
/// mul(a, b): a * b (Flatten, Reshape's element counts); the passes' Dim
/// names a product of symbols by its expression (sym_int.h).
/// div(a, b): a / b when it divides exactly (Reshape's -1); nullopt where
/// the type cannot say so (callers work out known numbers themselves first).
/// floor_affine(a, c, s): floor((a + c) / s) for s > 0 (a window's extent
/// over a dim known only at run time); the passes' Dim names it by its
/// expression ("((seq-3)/2)"), unknown where `a` is.
/// str(d): the dim as text, for error messages.
template <class D>
struct DimTraits;

template <>
struct DimTraits<int64_t> {
  static DimMatch match(int64_t a, int64_t b) { return match_dims(a, b); }
  static std::optional<int64_t> known(int64_t d) { return d; }
  static std::optional<int64_t> unknown() { return std::nullopt; }
  static std::optional<int64_t> add(int64_t a, int64_t b) { return a + b; }
  static int64_t mul(int64_t a, int64_t b) { return a * b; }
  static std::optional<int64_t> div(int64_t a, int64_t b) {
    return b != 0 && a % b == 0 ? std::optional(a / b) : std::nullopt;
  }
  static int64_t floor_affine(int64_t a, int64_t c, int64_t s) {
    const int64_t n = a + c;
    return n / s - (n % s != 0 && n < 0 ? 1 : 0);
  }
  static std::string str(int64_t d) { return std::to_string(d); }
};

/// Symbolic dims: equal symbols match; dims nobody can compare (different
/// symbols, unknowns) give an unknown dim, never a guess.
template <>
struct DimTraits<Dim> {
  static DimMatch match(const Dim& a, const Dim& b) {
    if (a == b) return DimMatch::kSame;
    if (b == Dim(1)) return DimMatch::kSecondIsOne;
    if (a == Dim(1)) return DimMatch::kFirstIsOne;
    if (a.is_static() && b.is_static()) return DimMatch::kClash;
    return DimMatch::kUndecided;
  }
  static std::optional<int64_t> known(const Dim& d) {
    return d.is_static() ? std::optional(d.value()) : std::nullopt;
  }
  static std::optional<Dim> unknown() { return Dim::unknown(); }
  /// Sums and products of symbols are dims named by their expression
  /// (sym_int.h): Concat of [seq] and [1] gives "(seq+1)".
  static std::optional<Dim> add(const Dim& a, const Dim& b) {
    return (SymInt::of(a) + SymInt::of(b)).dim();
  }
  static Dim mul(const Dim& a, const Dim& b) {
    if (a == Dim(0) || b == Dim(0)) return Dim(0);
    return (SymInt::of(a) * SymInt::of(b)).dim();
  }
  static std::optional<Dim> div(const Dim& a, const Dim& b) {
    if (b == Dim(1)) return a;
    const auto q = exact_div(SymInt::of(a), SymInt::of(b));
    return q ? q->dim() : Dim::unknown();
  }
  static Dim floor_affine(const Dim& a, int64_t c, int64_t s) {
    return ((SymInt::of(a) + SymInt(c)) / SymInt(s)).dim();
  }
  static std::string str(const Dim& d) { return d.to_string(); }
};

/// A dim type shape functions accept: DimTraits<D> is defined and D(1) is
/// the broadcast identity.
template <class D>
concept ShapeDim = std::copyable<D> && std::constructible_from<D, int64_t> &&
    requires(const D& a, const D& b) {
  { DimTraits<D>::match(a, b) } -> std::same_as<DimMatch>;
  { DimTraits<D>::known(a) } -> std::same_as<std::optional<int64_t>>;
  { DimTraits<D>::unknown() } -> std::same_as<std::optional<D>>;
  { DimTraits<D>::add(a, b) } -> std::same_as<std::optional<D>>;
  { DimTraits<D>::mul(a, b) } -> std::same_as<D>;
  { DimTraits<D>::div(a, b) } -> std::same_as<std::optional<D>>;
  { DimTraits<D>::floor_affine(a, int64_t{0}, int64_t{1}) } -> std::same_as<D>;
  { DimTraits<D>::str(a) } -> std::convertible_to<std::string>;
};

template <ShapeDim D>
std::string dims_string(const std::vector<D>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + DimTraits<D>::str(dims[i]);
  return s + "]";
}

/// The product of dims[from, to) (1 when empty).
template <ShapeDim D>
D dims_product(const std::vector<D>& dims, size_t from, size_t to) {
  D p(int64_t{1});
  for (size_t i = from; i < to; ++i) p = DimTraits<D>::mul(p, dims[i]);
  return p;
}

/// NumPy broadcasting of `inputs` for op `op`: kInvalidArgument naming the
/// op and the shapes when two dims clash, kUnsupported when the dim type
/// cannot compare two dims (aot's differing symbols).
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> broadcast_shape(std::string_view op,
                                                     const std::vector<std::vector<D>>& inputs) {
  bool undecided = false;
  auto out = broadcast_dims<D>(
      inputs, D(int64_t{1}), [](const D& a, const D& b) { return DimTraits<D>::match(a, b); },
      [&](const D&, const D&) {
        std::optional<D> d = DimTraits<D>::unknown();
        undecided = !d;
        return d;
      });
  if (out) return std::move(*out);
  std::string shapes;
  for (const auto& s : inputs) shapes += " " + dims_string(s);
  if (undecided)
    return fail(ErrorCode::kUnsupported, std::string(op) + ": input shapes" + shapes +
                                             " differ in dims that cannot be compared");
  return fail(ErrorCode::kInvalidArgument,
              std::string(op) + ": input shapes" + shapes + " do not broadcast");
}

/// Checks that dims `a` and `b` of `op` are equal (MatMul's and Gemm's K).
template <ShapeDim D>
[[nodiscard]] Result<void> check_same_dim(std::string_view op, std::string_view what, const D& a,
                                          const D& b) {
  const DimMatch m = DimTraits<D>::match(a, b);
  if (m == DimMatch::kSame) return {};
  if (m == DimMatch::kUndecided && DimTraits<D>::unknown()) return {};
  return fail(m == DimMatch::kUndecided ? ErrorCode::kUnsupported : ErrorCode::kInvalidArgument,
              std::string(op) + ": " + std::string(what) + " " + DimTraits<D>::str(a) + " and " +
                  DimTraits<D>::str(b) + " differ");
}

/// Whether `from` broadcasts one way to `to` (Gemm's C, PRelu's slope):
/// kInvalidArgument naming `op` and `input` when it cannot.
template <ShapeDim D>
[[nodiscard]] Result<void> check_broadcasts_to(std::string_view op, std::string_view input,
                                               const std::vector<D>& from,
                                               const std::vector<D>& to) {
  bool ok = from.size() <= to.size();
  ErrorCode code = ErrorCode::kInvalidArgument;
  for (size_t i = 0; ok && i < from.size(); ++i) {
    const D& t = to[to.size() - from.size() + i];
    const DimMatch m = DimTraits<D>::match(from[i], t);
    if (m == DimMatch::kSame || m == DimMatch::kFirstIsOne) continue;
    if (m == DimMatch::kUndecided && DimTraits<D>::unknown()) continue;
    if (m == DimMatch::kUndecided) code = ErrorCode::kUnsupported;
    ok = false;
  }
  if (ok) return {};
  return fail(code, std::string(op) + ": " + std::string(input) + " " + dims_string(from) +
                        " does not broadcast to " + dims_string(to));
}

/// MatMul (NumPy matmul): 1-D operands are promoted and the added axis
/// dropped again; batch dims broadcast.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> matmul_shape(std::vector<D> a, std::vector<D> b) {
  if (a.empty() || b.empty())
    return fail(ErrorCode::kInvalidArgument,
                "MatMul: input " + std::string(a.empty() ? "A" : "B") + " is a scalar");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), D(int64_t{1}));
  if (b1) b.push_back(D(int64_t{1}));
  HONE_CHECK_OK(check_same_dim<D>("MatMul", "K dims", a.back(), b[b.size() - 2]));
  const std::vector<std::vector<D>> batches{std::vector<D>(a.begin(), a.end() - 2),
                                            std::vector<D>(b.begin(), b.end() - 2)};
  HONE_TRY(std::vector<D> out, broadcast_shape<D>("MatMul", batches));
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  return out;
}

/// Gemm: [M, N] from 2-D A and B after trans_a/trans_b; C, when given, must
/// broadcast one way to [M, N].
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> gemm_shape(const GemmAttrs& attrs, const std::vector<D>& a,
                                                const std::vector<D>& b,
                                                const std::vector<D>* c = nullptr) {
  if (a.size() != 2 || b.size() != 2)
    return fail(ErrorCode::kInvalidArgument,
                "Gemm: inputs A " + dims_string(a) + " and B " + dims_string(b) + " must be 2-D");
  const D& m = attrs.trans_a ? a[1] : a[0];
  const D& ka = attrs.trans_a ? a[0] : a[1];
  const D& kb = attrs.trans_b ? b[1] : b[0];
  const D& n = attrs.trans_b ? b[0] : b[1];
  HONE_CHECK_OK(check_same_dim<D>("Gemm", "K dims", ka, kb));
  std::vector<D> out{m, n};
  if (c) HONE_CHECK_OK(check_broadcasts_to<D>("Gemm", "input C", *c, out));
  return out;
}

/// Transpose by `perm` (transpose_perm in attrs.h defaults and checks it).
template <ShapeDim D>
std::vector<D> transpose_shape(const std::vector<D>& in, std::span<const int64_t> perm) {
  std::vector<D> out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(in[static_cast<size_t>(p)]);
  return out;
}

/// Conv and pools: [N, channels, spatial...], each spatial dim from
/// ops::make_window (strides, dilations, pads, auto_pad read from `node`).
/// A spatial dim that is not a known number gives its window's extent as
/// an expression of it (DimTraits<D>::floor_affine: (in + pads - window) /
/// stride + 1, or SAME's ceil(in / stride), the forms aot's window_of
/// writes too), or DimTraits<D>::unknown() where ceil_mode makes the extent
/// depend on more than that (a stride above 1): each output dim depends on
/// its own input dim alone, so a stand-in size for it leaves the others right.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> window_shape(const Node& node, const std::string& op,
                                                  const std::vector<D>& x, const D& channels,
                                                  const std::vector<int64_t>& kernel,
                                                  bool ceil_mode) {
  if (x.size() < 3 || kernel.size() + 2 != x.size())
    return fail(ErrorCode::kInvalidArgument, op + ": kernel " + list_to_string(kernel) +
                                                 " does not match input X " + dims_string(x));
  constexpr int64_t kStandIn = int64_t{1} << 20;
  std::vector<int64_t> in;
  bool symbolic = false;
  for (size_t i = 2; i < x.size(); ++i) {
    const std::optional<int64_t> d = DimTraits<D>::known(x[i]);
    symbolic |= !d;
    in.push_back(d.value_or(kStandIn));
  }
  HONE_TRY(const Window w, make_window(node, in, kernel, ceil_mode, op));
  AutoPad auto_pad = AutoPad::kNotSet;
  if (symbolic) {
    HONE_TRY(auto_pad, auto_pad_attr(node));
  }
  std::vector<D> out{x[0], channels};
  for (size_t i = 2; i < x.size(); ++i) {
    const size_t k = i - 2;
    if (DimTraits<D>::known(x[i])) {
      out.push_back(D(w.out[k]));
      continue;
    }
    const int64_t s = w.strides[k];
    if (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower) {
      out.push_back(DimTraits<D>::floor_affine(x[i], s - 1, s));
      continue;
    }
    if (!ceil_mode || s == 1) {
      int64_t c = w.pad_begin[k] + w.pad_end[k] - w.dilated(k);
      // ceil_mode's last window may not start in the end padding (make_window).
      if (ceil_mode && w.pad_end[k] >= w.dilated(k)) --c;
      std::optional<D> e = DimTraits<D>::add(DimTraits<D>::floor_affine(x[i], c, s), D(1));
      if (e) {
        out.push_back(std::move(*e));
        continue;
      }
    }
    const std::optional<D> unknown = DimTraits<D>::unknown();
    if (!unknown)
      return fail(ErrorCode::kUnsupported,
                  op + ": spatial dims of input X " + dims_string(x) + " must be known");
    out.push_back(*unknown);
  }
  return out;
}

/// Conv: [N, M, spatial...] for weights [M, C/group, k...]. The kernel is
/// the weights' spatial dims (kernel_shape, when set, must agree); weights
/// whose spatial dims are not known give unknown output spatial dims.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> conv_shape(const Node& node, const ConvAttrs& attrs,
                                                const std::vector<D>& x, const std::vector<D>& w) {
  if (x.size() < 3 || w.size() != x.size())
    return fail(ErrorCode::kInvalidArgument, "Conv: weights W " + dims_string(w) + " and input X " +
                                                 dims_string(x) +
                                                 " must have one rank, at least 3");
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < w.size(); ++i) {
    const std::optional<int64_t> k = DimTraits<D>::known(w[i]);
    if (!k) break;
    kernel.push_back(*k);
  }
  if (kernel.size() + 2 == w.size() && !attrs.kernel_shape.empty() && attrs.kernel_shape != kernel)
    return fail(ErrorCode::kInvalidArgument, "Conv: kernel_shape " +
                                                 list_to_string(attrs.kernel_shape) +
                                                 " disagrees with weights W " + dims_string(w));
  if (kernel.size() + 2 != w.size()) {
    if (!attrs.kernel_shape.empty())
      return window_shape(node, "Conv", x, w[0], attrs.kernel_shape, false);
    const std::optional<D> unknown = DimTraits<D>::unknown();
    if (!unknown)
      return fail(ErrorCode::kUnsupported,
                  "Conv: spatial dims of weights W " + dims_string(w) + " must be known");
    std::vector<D> out{x[0], w[0]};
    out.resize(x.size(), *unknown);
    return out;
  }
  return window_shape(node, "Conv", x, w[0], kernel, false);
}

/// MaxPool, AveragePool, LpPool: [N, C, spatial...] over kernel_shape.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> pool_shape(const Node& node, const PoolAttrs& attrs,
                                                const std::vector<D>& x) {
  if (x.size() < 3)
    return fail(ErrorCode::kInvalidArgument,
                node.op_type + ": input X " + dims_string(x) + " has no spatial dims");
  return window_shape(node, node.op_type, x, x[1], attrs.kernel_shape, attrs.ceil_mode);
}

/// GlobalAveragePool, GlobalMaxPool: [N, C, 1...] (ONNX takes rank 2 too).
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> global_pool_shape(std::string_view op,
                                                       const std::vector<D>& x) {
  if (x.size() < 2)
    return fail(ErrorCode::kInvalidArgument,
                std::string(op) + ": input X " + dims_string(x) + " has no channel dim");
  std::vector<D> out{x[0], x[1]};
  out.resize(x.size(), D(int64_t{1}));
  return out;
}

/// Concat along `axis` (negative counts from the end): the inputs agree off
/// the axis, and the axis dims add up.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> concat_shape(int64_t axis,
                                                  const std::vector<std::vector<D>>& inputs) {
  if (inputs.empty()) return fail(ErrorCode::kInvalidArgument, "Concat: no inputs");
  std::vector<D> out = inputs[0];
  const auto rank = static_cast<int64_t>(out.size());
  if (axis < -rank || axis >= rank)
    return fail(ErrorCode::kInvalidArgument, "Concat: axis " + std::to_string(axis) +
                                                 " is out of range for input 0 " +
                                                 dims_string(out));
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  for (size_t i = 1; i < inputs.size(); ++i) {
    const std::vector<D>& d = inputs[i];
    const std::string input = "input " + std::to_string(i);
    if (d.size() != out.size())
      return fail(ErrorCode::kInvalidArgument, "Concat: " + input + " " + dims_string(d) +
                                                   " and input 0 " + dims_string(inputs[0]) +
                                                   " differ in rank");
    for (size_t k = 0; k < d.size(); ++k)
      if (k != a) HONE_CHECK_OK(check_same_dim<D>("Concat", input + "'s dims", out[k], d[k]));
    std::optional<D> sum = DimTraits<D>::add(out[a], d[a]);
    if (!sum)
      return fail(ErrorCode::kUnsupported, "Concat: the axis dims " + DimTraits<D>::str(out[a]) +
                                               " and " + DimTraits<D>::str(d[a]) +
                                               " cannot be added");
    out[a] = std::move(*sum);
  }
  return out;
}

}  // namespace hone::ops
