// Private to the onednn backend: small integer "shape arithmetic" (Shape of a
// block value, then Cast, Slice, Concat, Gather, ... of the result) computed
// on the host when a plan is built. Every input shape is concrete then, so a
// Reshape whose target shape is computed at run time in ONNX (PaddleOCR's
// flatten: Shape -> Slice -> Concat -> Reshape) is a constant of the plan,
// and its block stays whole instead of bouncing through the reference.
//
//   if (host_node(g, n)) ...                 // support: decided on the graph
//   HONE_CHECK_OK(lower_host(builder, n));   // plan: evaluated on the reference
#pragma once

#include "hone/error.h"
#include "hone/graph.h"

namespace hone::onednn {

class PlanBuilder;

/// `n` computes integer tensors from dims and integer constants only (Shape
/// and Size read nothing but dims), so it can be evaluated at plan time.
bool host_node(const Graph& g, const Node& n);
/// `v` is an integer constant or the output of a host node.
bool host_value(const Graph& g, ValueId v);

/// Evaluates host node `n` with the reference interpreter and records its
/// outputs as plan constants (PlanBuilder::constant() returns them).
[[nodiscard]] Result<void> lower_host(PlanBuilder& b, const Node& n);

}  // namespace hone::onednn
