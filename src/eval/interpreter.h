// The reference interpreter: runs a Graph node by node with the plain kernels
// in OpRegistry::reference(). It defines hone's right answer.
//
//   Interpreter interp;
//   HONE_CHECK_OK(interp.check_supported(graph));
//   HONE_TRY(auto outs, interp.run(graph, {RuntimeValue::of(x)}));
//
// Thread-safety: run() is const and keeps its state on the stack, so one
// Interpreter may run from many threads at once.
//
// In f64 mode (Precision::kF64) every f32 tensor a kernel produces is widened
// to f64, and a kernel that refuses f64 inputs (kUnsupported) runs on them
// narrowed to f32, its outputs widened again; the graph handed to run() is
// expected to be widened already (widen_to_f64). That is the ground truth the
// tuner measures candidates against.
#pragma once

#include <optional>
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

enum class Precision : uint8_t { kF32, kF64 };

/// Runs some subgraphs (If branches, Loop bodies) another way than node by
/// node: a compiling backend that compiled them hands one to its fallback
/// interpreter, so control flow the backend cannot compile still runs its
/// bodies compiled. `scope` resolves the names the subgraph captures.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  /// The subgraph's outputs, or std::nullopt when this runner does not run
  /// `g` (or not with these values); the interpreter then runs it itself.
  [[nodiscard]] virtual std::optional<Result<std::vector<RuntimeValue>>> run(
      const Graph& g, const std::vector<RuntimeValue>& inputs, const Scope* scope) const = 0;
};

/// What run() derives from a graph before its first node: the node order,
/// the step after which each value is dead, and the values to keep (graph
/// outputs). A graph that runs many times (a compiled plan's fallback stage)
/// is scheduled once; the schedule is only valid for that graph, unchanged.
struct Schedule {
  std::vector<NodeId> order;
  std::vector<int64_t> last_use;  // per value: the last step reading it, -1 if none
  std::vector<bool> keep;         // per value: a graph output
};
[[nodiscard]] Result<Schedule> schedule(const Graph& graph);

class Interpreter {
 public:
  explicit Interpreter(const OpRegistry& ops = OpRegistry::reference(),
                       Precision precision = Precision::kF32)
      : ops_(&ops), precision_(precision) {}

  /// Every node (and every node of every subgraph) has a kernel; otherwise
  /// kUnsupported naming the first node without one.
  [[nodiscard]] Result<void> check_supported(const Graph& graph) const;

  /// Checks the inputs against the graph's declared dtypes and shapes
  /// (static dims must match, a symbol must take one value), then runs.
  [[nodiscard]] Result<std::vector<RuntimeValue>> run(const Graph& graph,
                                                      std::vector<RuntimeValue> inputs,
                                                      const Scope* outer = nullptr) const;
  /// The same with `graph`'s schedule made beforehand (see schedule()).
  [[nodiscard]] Result<std::vector<RuntimeValue>> run(const Graph& graph, const Schedule& plan,
                                                      std::vector<RuntimeValue> inputs,
                                                      const Scope* outer = nullptr) const;
  /// Runs subgraph `g` for a node whose environment is `scope`: through the
  /// SubgraphRunner when it takes `g`, else node by node.
  [[nodiscard]] Result<std::vector<RuntimeValue>> run_subgraph(const Graph& g,
                                                               std::vector<RuntimeValue> inputs,
                                                               const Scope* scope) const;
  /// Set by the owner before any run; null (the default) interprets every
  /// subgraph. The runner must outlive this interpreter's runs.
  void set_subgraph_runner(const SubgraphRunner* runner) { subgraph_runner_ = runner; }
  /// Tensor-only convenience.
  [[nodiscard]] Result<std::vector<Tensor>> run_tensors(const Graph& graph,
                                                        const std::vector<Tensor>& inputs,
                                                        const Schedule* plan = nullptr) const;

 private:
  /// Runs one kernel; in f64 mode widens its f32 outputs (and retries a
  /// kernel that refuses f64 on inputs narrowed to f32).
  [[nodiscard]] Result<void> run_kernel(const KernelFn& fn, const Node& node, const Graph& graph,
                                        std::vector<const RuntimeValue*> ins,
                                        std::vector<RuntimeValue>& outs, const Scope* scope) const;

  const OpRegistry* ops_;
  Precision precision_;
  const SubgraphRunner* subgraph_runner_ = nullptr;
};

/// A copy of `graph` (subgraphs included) whose f32 values and initializers
/// are f64, for an Interpreter in f64 mode. f16/bf16 values stay as they are.
[[nodiscard]] Graph widen_to_f64(const Graph& graph);

/// Checks that `inputs` fit the graph's declared inputs; error names the input and axis.
[[nodiscard]] Result<void> check_inputs(const Graph& graph,
                                        const std::vector<RuntimeValue>& inputs);

}  // namespace hone::eval
