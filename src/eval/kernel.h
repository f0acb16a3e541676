// The reference interpreter's kernel interface: one function per ONNX op,
// registered by name in an OpRegistry, called with a KernelContext.
//
//   Result<void> relu(KernelContext& ctx) {
//     HONE_TRY(const Tensor* x, ctx.tensor(0));
//     Tensor y = Tensor::zeros(x->dtype(), x->shape()); ... ctx.set_output(0, y); return {};
//   }
//   registry.add("Relu", relu);
//
// Kernels allocate their outputs (shapes are found at run time), read
// attributes through ctx.node(), and report bad inputs with fail(): a
// kInvalidArgument naming what was wrong; the interpreter adds the node.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "eval/runtime_value.h"
#include "hone/graph.h"
#include "hone/thread_pool.h"

namespace hone::eval {

class Interpreter;
class SubgraphRunner;
struct Scope;

class KernelContext {
 public:
  KernelContext(const Node& node, const Graph& graph, std::vector<const RuntimeValue*> inputs,
                std::vector<RuntimeValue>* outputs, const Interpreter* interpreter,
                const Scope* scope)
      : node_(node),
        graph_(graph),
        inputs_(std::move(inputs)),
        outputs_(outputs),
        interpreter_(interpreter),
        scope_(scope) {}
  /// A context with no interpreter: subgraphs run through `bodies` only
  /// (eval/control_flow.h); one it does not take is an error.
  KernelContext(const Node& node, const Graph& graph, std::vector<const RuntimeValue*> inputs,
                std::vector<RuntimeValue>* outputs, const SubgraphRunner& bodies,
                const Scope* scope)
      : node_(node),
        graph_(graph),
        inputs_(std::move(inputs)),
        outputs_(outputs),
        interpreter_(nullptr),
        bodies_(&bodies),
        scope_(scope) {}

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  /// Version of the default ONNX opset the model imports.
  int64_t opset() const { return graph_.opset(""); }

  size_t num_inputs() const { return inputs_.size(); }
  /// True when input i was given (not omitted) and is not an empty optional.
  bool has_input(size_t i) const {
    return i < inputs_.size() && inputs_[i] != nullptr && !inputs_[i]->is_none();
  }
  const RuntimeValue* value(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  /// Input i as a tensor; precondition: has_input(i) and it is a tensor.
  const Tensor& input(size_t i) const { return inputs_[i]->tensor; }
  /// Input i as a tensor, or an error naming the missing or non-tensor input.
  [[nodiscard]] Result<const Tensor*> tensor(size_t i) const;

  size_t num_outputs() const { return outputs_->size(); }
  /// True when the node's output i is connected (ONNX allows omitting trailing ones).
  bool wants_output(size_t i) const;
  void set_output(size_t i, Tensor t) { (*outputs_)[i] = RuntimeValue::of(std::move(t)); }
  void set_output_value(size_t i, RuntimeValue v) { (*outputs_)[i] = std::move(v); }

  /// Runs a subgraph attribute (If branches, Loop bodies) with these inputs;
  /// names it captures resolve in this node's scope.
  [[nodiscard]] Result<std::vector<RuntimeValue>> run_subgraph(
      const Graph& g, std::vector<RuntimeValue> inputs) const;

  ThreadPool& pool() const { return ThreadPool::global(); }

 private:
  const Node& node_;
  const Graph& graph_;
  std::vector<const RuntimeValue*> inputs_;
  std::vector<RuntimeValue>* outputs_;
  const Interpreter* interpreter_;
  const SubgraphRunner* bodies_ = nullptr;
  const Scope* scope_;
};

using KernelFn = std::function<Result<void>(KernelContext&)>;

/// Kernels by (domain, op_type).
class OpRegistry {
 public:
  void add(const std::string& op_type, KernelFn fn, const std::string& domain = "");
  const KernelFn* find(const std::string& op_type, const std::string& domain = "") const;
  std::vector<std::string> op_types() const;

  /// Every reference kernel, registered once on first use.
  static const OpRegistry& reference();

 private:
  std::map<std::pair<std::string, std::string>, KernelFn> kernels_;
};

}  // namespace hone::eval
