// The reference interpreter as a library call: runs any graph hone reads,
// including those whose inputs or outputs are sequences or optionals (which
// no compiling backend takes), and checks inputs against a graph's declared
// types and shapes before anything is built.
//
//   HONE_CHECK_OK(hone::check_inputs(graph, inputs));      // names input and axis
//   HONE_TRY(auto outs, hone::run_reference(graph, inputs));
#pragma once

#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/value.h"

namespace hone {

/// Checks that `inputs` fit the graph's declared inputs: their number, each
/// one's kind and element type, static dims, and one value per symbol. The
/// error names the input and the axis.
[[nodiscard]] Result<void> check_inputs(const Graph& graph, const std::vector<RunValue>& inputs);
/// The same for plain tensors.
[[nodiscard]] Result<void> check_inputs(const Graph& graph, const std::vector<Tensor>& inputs);

/// Runs `graph` on the reference interpreter in f32 after check_inputs().
/// Errors: a node without a reference kernel, or one failing on its inputs.
[[nodiscard]] Result<std::vector<RunValue>> run_reference(const Graph& graph,
                                                          std::vector<RunValue> inputs);

}  // namespace hone
