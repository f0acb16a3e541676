// Private to the aot backend: the derived dims at a block's edge. A block
// input whose dim the graph names by an expression of symbols (ops/sym_int.h:
// "(((seq-1)/2)+1)", a conv's output length; "(4*batch)") binds that dim as
// a symbol of its own (lower.cpp). Where every symbol of the expression is
// bound by the block's inputs too, the code reads the dim as that expression
// instead, so it is the same dim the block works out itself (a Conv's
// window, a Reshape's target, a Slice computed from dims), and the symbol is
// checked against it when the code runs (Program::dim_checks, emit.cpp): an
// input that breaks the graph's arithmetic is an error naming the dim, not a
// wrong result.
//
//   HONE_CHECK_OK(bind_inputs(p, block, options));
//   read_derived_dims(p, block);
//   if (auto b = derived_dim_bound(d, bounds)) bounds[d.symbol_name()] = *b;
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "backends/aot/program.h"

namespace hone::aot {

/// Rewrites the derived dims of `block`'s inputs in `p` as expressions of
/// the block's plain symbols, recording one check per derived symbol.
void read_derived_dims(Program& p, const Graph& block);

/// A symbol name as `p`'s code reads it, where the block binds it
/// (Program::symbols): a plain symbol ("seq"), or a derived name bound as a
/// symbol of its own whose parts the block does not all bind. Nothing for a
/// derived name read through its parts (read_derived_dims did so at the
/// edge; dim_expr_of then builds the same expression from them), nor for a
/// name the block does not bind. The dims of a Reshape whose target is
/// computed from dims are read through it (copy_rules.cpp's inferred_dims):
/// [L, batch, 128] from [(L*batch), 128] names dims its input does not.
std::optional<DimExpr> bound_symbol(const Program& p, const std::string& name);

/// An upper bound of a derived dim from its symbols' bounds: its value at
/// those bounds, where it cannot decrease as any symbol grows (sums, products
/// with a coefficient >= 0, floor division by a positive number); nothing
/// otherwise, or where a symbol has no bound.
std::optional<int64_t> derived_dim_bound(const Dim& d,
                                         const std::map<std::string, int64_t>& bounds);

}  // namespace hone::aot
