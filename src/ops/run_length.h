// Lengths a node finds only when it runs, written once for the shape pass,
// the bounds pass, the executor and the backends: NonZero's count
// (ops/nonzero.h), the K of a TopK whose K is a run-time value (an input
// computed in the graph, min(k, count) in torchvision's detectors) and the
// length of a Slice over an axis whose dim and bounds fix no expression of
// it (x[:300] of a count). Each is a named symbol of the output's dims, may
// be 0, and ends a compiled block (the executor's rule), so the blocks
// reading it are planned, or bound, with the length it found.
//
//   if (ops::length_known_after_run(g, n)) ...;        // ends its block
//   const Dim k = ops::topk_length(g.value(n.outputs[0]).name);  // "topk_<name>"
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "hone/graph.h"
#include "hone/shape.h"
#include "ops/nonzero.h"

namespace hone::ops {

/// Why `n`, a node whose output length is found when it runs (`what`:
/// "NonZero", "a TopK of a run-time K"), cannot end the block `g` holds, or
/// "": it must hand its length on, so none of its outputs may be read inside
/// the block and one must be the block's output.
inline std::string run_length_block_end_why_not(const Graph& g, const Node& n,
                                                std::string_view what) {
  bool out = false, read = false;
  for (ValueId y : n.outputs) {
    if (y < 0) continue;
    out |= std::find(g.outputs().begin(), g.outputs().end(), y) != g.outputs().end();
    for (const Node& m : g.nodes())
      read |= std::find(m.inputs.begin(), m.inputs.end(), y) != m.inputs.end();
  }
  if (out && !read) return "";
  return std::string(read ? "its output is read inside its block" : "its output leaves no block") +
         "; " + std::string(what) + " ends its block, its length known only once it has run";
}

inline constexpr std::string_view kTopKLengthPrefix = "topk_";
inline constexpr std::string_view kSliceLengthPrefix = "slice_";

/// Whether `n` is a TopK (opset 10 on) whose K is not a constant of `g`: its
/// output length along the axis is then the K it reads when it runs.
inline bool topk_k_at_run_time(const Graph& g, const Node& n) {
  if (n.op_type != "TopK" || !(n.domain.empty() || n.domain == "ai.onnx") || g.opset() < 10 ||
      n.inputs.size() < 2 || n.inputs[1] < 0)
    return false;
  const Value& k = g.value(n.inputs[1]);
  if (k.initializer) return false;
  return k.producer < 0 || g.node(k.producer).op_type != "Constant";
}

/// The symbol of the length of the outputs of a TopK of a run-time K whose
/// first named output is `value_name`, made a plain identifier as
/// nonzero_length's is.
inline Dim topk_length(const std::string& value_name) {
  return Dim::symbol(run_length_symbol(kTopKLengthPrefix, value_name));
}

/// The symbol of the length along `axis` of Slice output `value_name` where
/// it is known only when the Slice runs ("slice_<name>_<axis>"); the shape
/// pass names it so.
inline Dim slice_length(const std::string& value_name, int64_t axis) {
  return Dim::symbol(run_length_symbol(kSliceLengthPrefix, value_name) + "_" +
                     std::to_string(axis));
}

/// Whether `n` is a Slice whose output the shape pass gave such a length.
inline bool slice_length_at_run_time(const Graph& g, const Node& n) {
  if (n.op_type != "Slice" || !(n.domain.empty() || n.domain == "ai.onnx") || n.outputs.empty() ||
      n.outputs[0] < 0)
    return false;
  const Value& y = g.value(n.outputs[0]);
  if (!y.shape) return false;
  for (size_t a = 0; a < y.shape->rank(); ++a)
    if ((*y.shape)[a] == slice_length(y.name, static_cast<int64_t>(a))) return true;
  return false;
}

/// Whether `n`'s output dims are known only once it has run (NonZero, a
/// TopK of a run-time K, a Slice of a run-time length): a backend that runs
/// it ends its block after it.
inline bool length_known_after_run(const Graph& g, const Node& n) {
  return length_known_after_run(n) || topk_k_at_run_time(g, n) || slice_length_at_run_time(g, n);
}

/// Whether every output dim of `n` is at most its input's on the same axis
/// (TopK's K is at most its axis' length; a Slice never grows an axis): a
/// length it finds when it runs is bounded by that, and so is the symbol the
/// shape pass gave it before its K or ends folded to constants.
inline bool length_within_input(const Node& n) {
  return (n.op_type == "TopK" || n.op_type == "Slice") &&
         (n.domain.empty() || n.domain == "ai.onnx");
}

/// Whether `symbol` is a length found when a node runs (a plain identifier
/// of one of the prefixes, not an expression of one): unlike a model input's
/// dim it may be 0.
inline bool is_run_length(const std::string& symbol) {
  if (!is_nonzero_length(symbol) && symbol.rfind(kTopKLengthPrefix, 0) != 0 &&
      symbol.rfind(kSliceLengthPrefix, 0) != 0)
    return false;
  for (char c : symbol)
    if (!run_length_char(c) && c != '_') return false;
  return true;
}
inline bool is_run_length(const Dim& d) {
  return d.is_symbolic() && is_run_length(d.symbol_name());
}

}  // namespace hone::ops
