#include "passes/dim_bounds.h"

#include <algorithm>

#include "hone/passes.h"
#include "passes/shape_propagation.h"

namespace hone::passes {
namespace {

/// `g` with its inputs' symbolic dims replaced by their bounds and every
/// other computed value's shape forgotten (those hold the importer's names,
/// and propagation keeps a shape it finds already there).
Graph specialise(const Graph& g, const std::map<std::string, int64_t>& input_bounds) {
  Graph s = g;
  std::vector<bool> is_input(s.values().size(), false);
  for (ValueId v : s.inputs()) is_input[static_cast<size_t>(v)] = true;
  for (size_t i = 0; i < s.values().size(); ++i) {
    Value& v = s.value(static_cast<ValueId>(i));
    if (v.initializer || !v.shape) continue;
    if (!is_input[i]) {
      if (v.producer >= 0) v.shape.reset();
      continue;
    }
    for (Dim& d : v.shape->dims())
      if (d.is_symbolic())
        if (auto it = input_bounds.find(d.symbol_name()); it != input_bounds.end()) d = Dim(it->second);
  }
  return s;
}

}  // namespace

std::map<std::string, int64_t> derive_dim_bounds(const Graph& g,
                                                 const std::map<std::string, int64_t>& input_bounds) {
  std::map<std::string, int64_t> out;
  // Shapes become constants, constants fold, and what they feed gets a static
  // shape; each round can open the next (a Reshape's shape needs the Concat
  // folded before the Shape after it folds), so go until nothing changes.
  Graph s = specialise(g, input_bounds);
  propagate_shapes(s);
  for (int round = 0; round < 16; ++round) {
    PassStats st;
    auto shapes = fold_shapes(s, &st);
    if (!shapes) break;
    auto consts = fold_constants(*shapes, &st);
    if (!consts) break;
    s = std::move(*consts);
    const int filled = propagate_shapes(s);
    if (st.folded == 0 && filled == 0) break;
  }
  auto note = [&](const Dim& sym, const Dim& d) {
    if (!sym.is_symbolic() || !d.is_static()) return;
    int64_t& b = out.try_emplace(sym.symbol_name(), d.value()).first->second;
    b = std::max(b, d.value());
  };
  for (const Value& v : g.values()) {
    if (!v.shape) continue;
    const ValueId w = s.find_value(v.name);
    if (w == kNoValue || !s.value(w).shape || s.value(w).shape->rank() != v.shape->rank()) continue;
    for (size_t i = 0; i < v.shape->rank(); ++i) note((*v.shape)[i], (*s.value(w).shape)[i]);
  }
  for (const auto& [name, bound] : input_bounds) out.try_emplace(name, bound);
  return out;
}

}  // namespace hone::passes
