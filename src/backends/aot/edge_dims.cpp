#include "backends/aot/edge_dims.h"

#include <set>

#include "ops/sym_int.h"

namespace hone::aot {

void read_derived_dims(Program& p, const Graph& block) {
  std::set<std::string> plain;
  for (const std::string& s : p.symbols)
    if (!ops::is_derived(Dim::symbol(s))) plain.insert(s);
  // A derived dim is read through the plain symbols only, never through a
  // derived one bound as a symbol of its own (dim_expr_of tries whole names).
  auto symbol = [&](const std::string& name) -> std::optional<DimExpr> {
    if (plain.count(name)) return DimExpr::symbol(name);
    return std::nullopt;
  };
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

}  // namespace hone::aot
