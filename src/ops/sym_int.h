// SymInt: an integer a graph computes from dims (Shape -> Gather -> Mul ->
// Concat -> Reshape, the way exporters write `x.view(B, H * W, C)`): a
// number, a dim symbol, an expression of symbols, or unknown. Arithmetic keeps
// expressions in one canonical form (a sum of products, floor quotients as
// opaque factors), so a dim computed twice the same way is the same dim.
//
// A dim that is an expression is a hone::Dim symbol named by the expression's
// canonical text in parentheses ("(4*seq)", "(seq+1)", "(H/7)"), so Dim stays
// a number or a name, every pass compares dims as before, and whoever needs
// the structure (dim_bounds' values at the bounds, aot's dim expressions)
// reads it back with sym_eval or sym_tree.
//
//   SymInt n = SymInt::of(Dim::symbol("seq")) * 4;
//   n.dim();                                  // Dim::symbol("(4*seq)")
//   sym_eval(n.dim(), {{"seq", 16}});         // 64
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hone/shape.h"

namespace hone::ops {

class SymInt {
 public:
  friend struct SymIntAccess;
  SymInt() = default;                              // unknown
  SymInt(int64_t v) : known_(true), number_(v) {}  // NOLINT: numbers convert implicitly
  /// A dim as an integer: its number, or its symbol (an expression's name is
  /// read back as that expression); unknown for an unknown dim.
  static SymInt of(const Dim& d);

  bool is_known() const { return known_; }
  bool is_number() const { return known_ && text_.empty(); }
  /// The number when is_number().
  int64_t number() const { return number_; }
  /// As a dim: a number >= 0, a symbol (the canonical text of an expression),
  /// or unknown (a negative number, unknown).
  Dim dim() const;
  /// Canonical: equal text means equal values for every value of the symbols.
  std::string to_string() const;
  bool operator==(const SymInt& o) const {
    return known_ == o.known_ && number_ == o.number_ && text_ == o.text_;
  }

  friend SymInt operator+(const SymInt& a, const SymInt& b);
  friend SymInt operator-(const SymInt& a, const SymInt& b);
  friend SymInt operator*(const SymInt& a, const SymInt& b);
  /// Floor division (torch's `//` of sizes, ONNX Div of non-negative ints).
  friend SymInt operator/(const SymInt& a, const SymInt& b);
  /// a / b when b divides a for every value of the symbols (a product by one
  /// of its factors, a sum whose every term it divides); nothing otherwise.
  friend std::optional<SymInt> exact_div(const SymInt& a, const SymInt& b);

 private:
  bool known_ = false;
  int64_t number_ = 0;
  std::string text_;  // a symbol or canonical expression; empty for numbers
};

/// Whether `d` is a symbol that names an expression ("(4*seq)").
bool is_derived(const Dim& d);

/// A dim as a model file names it. A name that is an expression of dims and
/// integers in PyTorch's notation (the dynamo exporter writes "4*batch",
/// "s0 + 1", "((s0 - 1)//2) + 1"; `//` is floor division) becomes hone's
/// canonical name of that expression ("(4*batch)"), or a number where it is
/// one, so it compares equal to the same dim computed in the graph; any other
/// name ("batch", "unk__3", "Max(s0, 2)") is a symbol as it stands.
Dim dim_from_name(const std::string& name);

/// The value of `d` with its symbols bound (floor division as the graph
/// computes it); nothing where `d` is unknown or a symbol is not bound.
std::optional<int64_t> sym_eval(const Dim& d, const std::map<std::string, int64_t>& bindings);

/// The least and most value of `d` with each symbol anywhere from 0 to its
/// entry in `most` (dims are never negative), by interval arithmetic over its
/// tree: sums add the ends, a product takes the extremes of its factors'
/// ends, a floor quotient by a positive divisor divides them. So "(seq-1)"
/// with seq at most 16 lies in [-1, 15], and "(a+b)" in [0, most a + most b].
/// Nothing where a symbol has no entry, a divisor may be 0 or a product
/// overflows.
std::optional<std::pair<int64_t, int64_t>> sym_range(const Dim& d,
                                                     const std::map<std::string, int64_t>& most);

/// The structure of a dim, for a backend building its own expressions.
struct SymTree {
  enum class Kind { kNumber, kSymbol, kSum, kProduct, kFloorDiv };
  Kind kind = Kind::kNumber;
  int64_t number = 0;  // kNumber
  std::string symbol;  // kSymbol
  // kSum: the terms, the constant first; kProduct: the coefficient, then the
  // factors; kFloorDiv: {a, b}.
  std::vector<SymTree> args;
};
/// `d` as a tree; nothing for an unknown dim.
std::optional<SymTree> sym_tree(const Dim& d);

}  // namespace hone::ops
