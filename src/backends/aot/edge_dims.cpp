#include "backends/aot/edge_dims.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ops/sym_int.h"

namespace hone::aot {

namespace {

/// A derived dim is read through the plain symbols only, never through a
/// derived one bound as a symbol of its own (dim_expr_of tries whole names).
std::function<std::optional<DimExpr>(const std::string&)> plain_symbols(const Program& p) {
  std::set<std::string> plain;
  for (const std::string& s : p.symbols)
    if (!ops::is_derived(Dim::symbol(s))) plain.insert(s);
  return [plain = std::move(plain)](const std::string& name) -> std::optional<DimExpr> {
    if (plain.count(name)) return DimExpr::symbol(name);
    return std::nullopt;
  };
}

}  // namespace

void read_derived_dims(Program& p, const Graph& block) {
  const auto symbol = plain_symbols(p);
  for (ValueId v : block.inputs()) {
    const Value& val = block.value(v);
    ValueInfo& info = p.values[static_cast<size_t>(v)];
    if (!val.shape || val.shape->rank() != info.dims.size()) continue;
    for (size_t a = 0; a < info.dims.size(); ++a) {
      const Dim& d = (*val.shape)[a];
      if (!ops::is_derived(d)) continue;
      std::optional<DimExpr> e = dim_expr_of(d, symbol);
      if (!e) continue;
      info.dims[a] = *e;
      const std::string what =
          "input '" + val.name + "' axis " + std::to_string(a) + " ('" + d.symbol_name() + "')";
      p.dim_checks.push_back({DimExpr::symbol(d.symbol_name()), *e, true, what});
    }
  }
}

std::optional<DimExpr> bound_symbol(const Program& p, const std::string& name) {
  if (std::find(p.symbols.begin(), p.symbols.end(), name) == p.symbols.end()) return std::nullopt;
  const Dim d = Dim::symbol(name);
  if (ops::is_derived(d) && dim_expr_of(d, plain_symbols(p))) return std::nullopt;
  return DimExpr::symbol(name);
}

namespace {

bool non_decreasing(const ops::SymTree& t) {
  using K = ops::SymTree::Kind;
  switch (t.kind) {
    case K::kNumber:
    case K::kSymbol:
      return true;
    case K::kSum:
      for (const ops::SymTree& a : t.args)
        if (!non_decreasing(a)) return false;
      return true;
    case K::kProduct:
      if (t.args.empty() || t.args[0].kind != K::kNumber || t.args[0].number < 0) return false;
      for (size_t i = 1; i < t.args.size(); ++i)
        if (!non_decreasing(t.args[i])) return false;
      return true;
    case K::kFloorDiv:
      return t.args.size() == 2 && non_decreasing(t.args[0]) && t.args[1].kind == K::kNumber &&
             t.args[1].number > 0;
  }
  return false;
}

}  // namespace

std::optional<int64_t> derived_dim_bound(const Dim& d,
                                         const std::map<std::string, int64_t>& bounds) {
  if (!ops::is_derived(d)) return std::nullopt;
  const std::optional<ops::SymTree> t = ops::sym_tree(d);
  if (!t || !non_decreasing(*t)) return std::nullopt;
  const std::optional<int64_t> v = ops::sym_eval(d, bounds);
  if (!v || *v < 0) return std::nullopt;
  return v;
}

}  // namespace hone::aot
