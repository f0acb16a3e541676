// Bounds of the symbolic dims inside a graph, derived from the bounds of its
// inputs' dims. Importers name the dims ONNX shape inference could not work
// out ("unk__116"); a backend that sizes buffers by bounds (aot) needs a bound
// for each, and a fixed default is wrong for real models (a feature map of 256
// rows is not bounded by 64). So the graph is specialised to its inputs at
// their bounds, its shape subgraphs folded (Shape → Gather → Concat →
// Reshape, Resize sizes, ...) and shapes propagated; each symbolic dim then
// takes the static value it has there.
//
//   auto b = passes::derive_dim_bounds(g, {{"batch", 32}, {"seq", 128}});
//   // b["batch"] == 32, b["unk__116"] == 256 where that dim is 8 * seq
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "hone/graph.h"

namespace hone::passes {

/// Every symbolic dim of `g`'s values (inputs, outputs and inside) that can be
/// worked out with the input symbols at `input_bounds`, mapped to its largest
/// value there; the input symbols map to their bounds. Dims that depend on
/// data (NonZero, TopK of a computed k) or on ops the shape pass does not
/// know are absent: the caller decides what to do without them. Never fails;
/// a graph the passes cannot fold gives what propagation alone found.
std::map<std::string, int64_t> derive_dim_bounds(const Graph& g,
                                                 const std::map<std::string, int64_t>& input_bounds);

}  // namespace hone::passes
