// Running one control-flow node (If, Loop, Scan) with its bodies run by a
// SubgraphRunner: the reference's If/Loop/Scan kernels themselves, so the
// rules (which branch, trip counts, loop-carried values, scan slicing and
// stacking) are written once. The executor runs such a node as a control
// stage, its bodies compiled, without the interpreter.
//
//   std::vector<const RuntimeValue*> ins = {&cond};
//   HONE_TRY(auto outs, eval::run_control_flow(node, graph, ins, compiled_bodies, &scope));
//
// Bodies the runner does not take are an error (kInternal), never interpreted.
#pragma once

#include <vector>

#include "eval/interpreter.h"

namespace hone::eval {

/// If, Loop or Scan of the default domain: what run_control_flow runs.
bool is_control_flow(const Node& node);

/// The outputs of control-flow node `node` of `graph` on `inputs` (one per
/// node input, null where omitted), its bodies run by `bodies`, which
/// resolves the names they capture in `scope`. kUnsupported for any other op.
[[nodiscard]] Result<std::vector<RuntimeValue>> run_control_flow(
    const Node& node, const Graph& graph, std::vector<const RuntimeValue*> inputs,
    const SubgraphRunner& bodies, const Scope* scope);

}  // namespace hone::eval
