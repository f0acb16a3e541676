// The reference interpreter: runs a Graph node by node with the plain kernels
// in OpRegistry::reference(). It defines hone's right answer.
//
//   Interpreter interp;
//   HONE_CHECK_OK(interp.check_supported(graph));
//   HONE_TRY(auto outs, interp.run(graph, {RuntimeValue::of(x)}));
//
// Thread-safety: run() is const and keeps its state on the stack, so one
// Interpreter may run from many threads at once.
#pragma once

#include <string>
#include <vector>

#include "eval/kernel.h"

namespace hone::eval {

/// Names visible to a subgraph: the running environment of each enclosing graph.
struct Scope {
  const Graph* graph = nullptr;
  const std::vector<RuntimeValue>* env = nullptr;
  const Scope* parent = nullptr;
  /// The value of `name` in this scope or an enclosing one, or nullptr.
  const RuntimeValue* lookup(const std::string& name) const;
};

class Interpreter {
 public:
  explicit Interpreter(const OpRegistry& ops = OpRegistry::reference()) : ops_(ops) {}

  /// Every node (and every node of every subgraph) has a kernel; otherwise
  /// kUnsupported naming the first node without one.
  [[nodiscard]] Result<void> check_supported(const Graph& graph) const;

  /// Checks the inputs against the graph's declared dtypes and shapes
  /// (static dims must match, a symbol must take one value), then runs.
  [[nodiscard]] Result<std::vector<RuntimeValue>> run(const Graph& graph,
                                                      std::vector<RuntimeValue> inputs,
                                                      const Scope* outer = nullptr) const;
  /// Tensor-only convenience.
  [[nodiscard]] Result<std::vector<Tensor>> run_tensors(const Graph& graph,
                                                        const std::vector<Tensor>& inputs) const;

 private:
  const OpRegistry& ops_;
};

/// Checks that `inputs` fit the graph's declared inputs; error names the input and axis.
[[nodiscard]] Result<void> check_inputs(const Graph& graph, const std::vector<RuntimeValue>& inputs);

}  // namespace hone::eval
