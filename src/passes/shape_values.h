// Private to src/passes: the values of the small integer tensors a graph
// computes from dims (Shape -> Gather -> Mul -> Unsqueeze -> Concat, the
// way exporters write `x.view(B, H * W, C)` or `x.expand(B, -1, -1)`), each
// entry an ops::SymInt: a number, a dim symbol, an expression of symbols, or
// unknown. Shape propagation reads a Reshape's, Expand's, Slice's, Tile's,
// ConstantOfShape's or Resize's computed operand through it, so the output's
// rank is known whenever the operand's length is, and its dims are the
// entries; fold_reshape_targets turns such a target into a constant.
//
//   passes::ShapeValues values(g);
//   if (auto e = values.of(node.inputs[1])) { /* e->size() entries */ }
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "hone/graph.h"
#include "ops/sym_int.h"

namespace hone::passes {

using SymInts = std::vector<ops::SymInt>;

/// Reads the graph's shapes as they are when asked: a caller that changes
/// shapes (propagate_shapes, in topological order) asks about a value only
/// after every node it depends on has its final shape for this walk.
class ShapeValues {
 public:
  explicit ShapeValues(const Graph& g) : g_(g) {}

  /// The entries of the 0-D or 1-D integer value `v` (at most kMaxEntries),
  /// where its length is known; an entry the rules cannot say is unknown.
  std::optional<SymInts> of(ValueId v);

  static constexpr int64_t kMaxEntries = 64;

 private:
  std::optional<SymInts> compute(ValueId v, int depth);
  std::optional<SymInts> at(ValueId v, int depth);

  const Graph& g_;
  std::map<ValueId, std::optional<SymInts>> memo_;
};

/// The output shape of `n` where an operand that says it is computed from
/// dims: Reshape's target, Expand's shape, Tile's repeats, ConstantOfShape's
/// input, Resize's sizes (or whole-number scales of a symbolic dim), Slice's
/// starts and ends. Nothing where the operand's length is unknown.
std::optional<Shape> computed_shape(const Graph& g, const Node& n, ShapeValues& values);

}  // namespace hone::passes
