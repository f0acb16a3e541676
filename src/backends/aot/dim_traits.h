// Private to the aot backend: aot's DimExpr as a dim type of the shared
// shape functions (ops/shape_fn.h), for every file of aot that calls them.
#pragma once

#include <optional>
#include <string>

#include "backends/aot/dim_expr.h"
#include "ops/shape_fn.h"

/// aot's dims in the shared shape functions: dims it cannot compare
/// (different symbols or expressions) are refused, never merged, since the
/// code it emits must know every extent exactly.
template <>
struct hone::ops::DimTraits<hone::aot::DimExpr> {
  static DimMatch match(const aot::DimExpr& x, const aot::DimExpr& y) {
    if (x == y) return DimMatch::kSame;
    if (aot::is_one(y)) return DimMatch::kSecondIsOne;
    if (aot::is_one(x)) return DimMatch::kFirstIsOne;
    if (x.is_const() && y.is_const()) return DimMatch::kClash;
    return DimMatch::kUndecided;
  }
  static std::optional<int64_t> known(const aot::DimExpr& d) {
    return d.is_const() ? std::optional(d.value()) : std::nullopt;
  }
  static std::optional<aot::DimExpr> unknown() { return std::nullopt; }
  static std::optional<aot::DimExpr> add(const aot::DimExpr& a, const aot::DimExpr& b) {
    return a + b;
  }
  static aot::DimExpr mul(const aot::DimExpr& a, const aot::DimExpr& b) { return a * b; }
  /// Exact when the quotient times `b` gives `a` back (dim_expr.cpp cancels
  /// common factors of products); else refused.
  static std::optional<aot::DimExpr> div(const aot::DimExpr& a, const aot::DimExpr& b) {
    if (b.is_const() && b.value() == 0) return std::nullopt;
    aot::DimExpr q = a / b;
    if (!(q * b == a)) return std::nullopt;
    return q;
  }
  static aot::DimExpr floor_affine(const aot::DimExpr& a, int64_t c, int64_t s) {
    return (a + aot::DimExpr(c)) / aot::DimExpr(s);
  }
  static std::string str(const aot::DimExpr& d) { return d.to_string(); }
};
