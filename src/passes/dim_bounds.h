// Bounds of the symbolic dims inside a graph, derived from the bounds of its
// inputs' dims. Importers name the dims ONNX shape inference could not work
// out ("unk__116"); a backend that sizes buffers by bounds (aot) needs a bound
// for each, and a fixed default is wrong for real models (a feature map of 256
// rows is not bounded by 64). So the graph is specialised to its inputs at
// their bounds, its shape subgraphs folded (Shape → Gather → Concat →
// Reshape, Resize sizes, ...) and shapes propagated; an op the shape pass has
// no rule for (Resize, ConvTranspose, Pad, ...) runs once on the interpreter
// with zeros for its data input. Each symbolic dim then takes the static
// value it has there.
//
//   auto b = passes::derive_dim_bounds(g, {{"batch", 32}, {"seq", 128}});
//   // b["batch"] == 32, b["unk__116"] == 256 where that dim is 8 * seq
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "hone/graph.h"

namespace hone::passes {

/// Every symbolic dim of `g`'s values (inputs, outputs and inside) that can be
/// worked out with the input symbols at `input_bounds`, mapped to its largest
/// value there; the input symbols map to their bounds. Lengths found when a
/// node runs are bounded where the graph implies it (a NonZero's count by
/// its input's element count, a TopK's or Slice's by its axis), an If's
/// output dims by the most over its branches (its bodies' own dims join the
/// map), an expression of bounded symbols by interval arithmetic. Dims no
/// rule bounds (ops the shape pass does not know) are absent: the caller
/// decides what to do without them. Never fails; a graph the passes cannot
/// fold gives what propagation alone found.
std::map<std::string, int64_t> derive_dim_bounds(
    const Graph& g, const std::map<std::string, int64_t>& input_bounds);

/// Whether `g`'s shapes hold together with its input symbols at
/// `input_dims`: false when, specialised and folded there, a node of constant
/// inputs fails (a Gather past a table's last row), static shapes an
/// element-wise op broadcasts clash, or a MatMul's inner dims differ.
bool dims_fit(const Graph& g, const std::map<std::string, int64_t>& input_dims);

/// The largest value of input symbol `symbol` (the others at `dims`) up to
/// `limit` at which dims_fit holds, found by doubling then bisection (about
/// 2 log2 of the answer folds of the graph): 512 for a text encoder whose
/// position table has 512 rows. nullopt when every size up to `limit` fits
/// (nothing in the graph bounds it); 0 when not even 1 fits (the graph fixes
/// the dim to a size only a sample can tell).
std::optional<int64_t> largest_fitting_dim(const Graph& g, std::map<std::string, int64_t> dims,
                                           const std::string& symbol, int64_t limit);

}  // namespace hone::passes
