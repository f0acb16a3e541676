// Private to the aot backend: a tensor dim as an integer expression over the
// graph's symbolic dims ("batch", "seq"), so generated code keeps dynamic
// dims symbolic (loops read them at run time) while the memory plan sizes
// buffers by evaluating the same expression at the dims' upper bounds.
//
//   DimExpr n = DimExpr::symbol("batch") * 256;
//   n.eval({{"batch", 8}});          // 2048
//   n.to_c(index_of);                // "(d[0]*256)"
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hone/shape.h"

namespace hone::aot {

class DimExpr {
 public:
  DimExpr(int64_t value = 0);  // NOLINT: numbers convert implicitly
  static DimExpr symbol(std::string name);

  bool is_const() const { return node_ == nullptr; }
  /// The number when is_const().
  int64_t value() const { return value_; }
  /// Value with every symbol bound; symbols missing from `bindings` count as 0.
  int64_t eval(const std::map<std::string, int64_t>& bindings) const;
  /// A C expression; `symbol_c` spells a symbol ("d[0]").
  std::string to_c(const std::function<std::string(const std::string&)>& symbol_c) const;
  /// Readable: equal text means equal expressions (not the converse).
  std::string to_string() const;
  /// Equal values for every value of the symbols, as far as ops::SymInt's
  /// canonical form tells (a sum of products, floor quotients as opaque
  /// factors): "((x-1)/2)+1" built by a window equals the same dim read back
  /// from the graph's "(((x-1)/2)+1)", however each was associated.
  bool operator==(const DimExpr& o) const;

  friend DimExpr operator+(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator-(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator*(const DimExpr& a, const DimExpr& b);
  /// Floor division of non-negative values (dims are never negative).
  friend DimExpr operator/(const DimExpr& a, const DimExpr& b);

  struct Node;
  /// The expression tree; null for a constant.
  const Node* node() const { return node_.get(); }
  /// An expression of tree `n` (dim_expr.cpp builds them).
  static DimExpr from_node(std::shared_ptr<const Node> n);

 private:
  int64_t value_ = 0;
  std::shared_ptr<const Node> node_;  // null: a constant
};

using DimExprs = std::vector<DimExpr>;

/// Product of `dims[from, to)`.
DimExpr product(const DimExprs& dims, size_t from, size_t to);
inline DimExpr product(const DimExprs& dims) {
  return product(dims, 0, dims.size());
}
/// True when `d` is the constant 1.
inline bool is_one(const DimExpr& d) {
  return d.is_const() && d.value() == 1;
}
/// An integer as C source text (the emitters' shorthand).
inline std::string c_int(int64_t v) {
  return std::to_string(v);
}
/// "[batch,3,32,32]".
std::string to_string(const DimExprs& dims);
bool all_const(const DimExprs& dims);

/// A graph dim as an expression: a number, or its symbol read through
/// `symbol` (the expression a name stands for here), where a dim named by an
/// expression of symbols (ops/sym_int.h: "(4*seq)") is built from its parts.
/// Nothing where `d` is unknown or `symbol` knows a part's name not.
std::optional<DimExpr> dim_expr_of(
    const Dim& d, const std::function<std::optional<DimExpr>(const std::string&)>& symbol);

}  // namespace hone::aot
