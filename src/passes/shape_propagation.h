// Private to src/passes: fills in the dtype and shape of node outputs the
// graph does not know yet (GraphBuilder graphs carry none; imported models
// carry what ONNX shape inference found), for the ops the passes reason
// about. Symbolic dims flow through ("batch" stays "batch"); a dim that
// cannot be worked out becomes unknown, never a guess. Values that already
// have a shape are left as they are.
//
//   Graph g = ...;
//   passes::propagate_shapes(g);
//   if (g.value(v).shape && g.value(v).shape->rank() == 2) { ... }
#pragma once

#include <string>

#include "hone/graph.h"

namespace hone::passes {

/// Returns how many values got a shape.
int propagate_shapes(Graph& g);

/// Whether `op_type` broadcasts its inputs the NumPy way (Add, Where, ...):
/// the list propagation's rule for such ops reads.
bool broadcasts(const std::string& op_type);

}  // namespace hone::passes
