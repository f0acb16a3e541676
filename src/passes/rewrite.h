// Private to src/passes: what the pattern passes share. `Uses` answers "who
// reads this value" over an immutable graph; `Rewriter` collects edits made
// against that graph (nodes removed, nodes and constants added, readers
// redirected) and applies them all at once, so a pass matches on a graph that
// does not change under it.
//
//   Uses uses(g);  Rewriter rw(g);
//   if (NodeId r = uses.sole_reader(v); r >= 0 && !rw.taken(r)) { rw.remove(r); rw.add_node(n); }
//   HONE_TRY(Graph out, rw.finish());
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hone/graph.h"
#include "hone/passes.h"

namespace hone::passes {

class Uses {
 public:
  explicit Uses(const Graph& g);
  /// Nodes reading `v` (each once, in node order).
  const std::vector<NodeId>& readers(ValueId v) const { return readers_[static_cast<size_t>(v)]; }
  bool is_output(ValueId v) const { return outputs_.count(v) != 0; }
  /// The only node reading `v` when `v` is no graph output, else -1: a value
  /// a rewrite may make disappear.
  NodeId sole_reader(ValueId v) const;
  /// The node making `v`, or nullptr for inputs, initializers and omitted ids.
  const Node* producer(ValueId v) const;

 private:
  const Graph& g_;
  std::vector<std::vector<NodeId>> readers_;
  std::set<ValueId> outputs_;
};

/// The initializer behind `v`, or nullptr.
const Tensor* constant_of(const Graph& g, ValueId v);
/// The value of a one-element float (f32/f64) constant, or nothing.
std::optional<double> scalar_of(const Graph& g, ValueId v);
/// scalar_of(v) is within `rel` (relative) of `want`.
bool is_scalar(const Graph& g, ValueId v, double want, double rel = 1e-6);
/// A constant integer list (attribute `key`, or for newer opsets input
/// `input`), as Reduce*/Squeeze/Unsqueeze carry their axes. Nothing when
/// neither is there or the input is not constant.
std::optional<std::vector<int64_t>> int_list(const Graph& g, const Node& n, const std::string& key,
                                             size_t input);
/// `n` is a default-domain `op` with exactly `inputs` inputs and one output.
bool is_op(const Node& n, const char* op, size_t inputs);
/// For a binary `n` reading `v`: its other operand, or kNoValue when `n`
/// reads `v` on both sides or not at all.
ValueId other_operand(const Node& n, ValueId v);

class Rewriter {
 public:
  explicit Rewriter(const Graph& g);

  const Graph& graph() const { return g_; }
  /// Node `id` was removed by an earlier edit of this round: leave it alone.
  bool taken(NodeId id) const { return removed_.count(id) != 0; }
  bool any_taken(const std::vector<NodeId>& ids) const;
  void remove(NodeId id) { removed_.insert(id); }
  /// A fresh value named after `hint` (made unique).
  ValueId new_value(const std::string& hint, DType dtype = DType::kUndefined,
                    std::optional<Shape> shape = std::nullopt);
  ValueId add_constant(const std::string& hint, Tensor t);
  /// Adds `n`; its outputs are fresh values or outputs of removed nodes
  /// (which keeps a graph output's name when a pattern ends in it).
  void add_node(Node n) { added_.push_back(std::move(n)); }
  /// Value `v` (an output of a removed node) becomes an initializer holding `t`.
  void make_constant(ValueId v, Tensor t) { constants_[v] = std::move(t); }
  /// Every reader of `from` reads `to` instead. `from` must not be a graph
  /// output (callers keep those by reusing the value as a new node's output).
  void replace_uses(ValueId from, ValueId to) { replace_[from] = to; }
  /// A unique node name from `hint`.
  std::string node_name(const std::string& hint);
  /// The rewritten graph: removed nodes gone, added nodes in, readers
  /// redirected, nodes in topological order, values nothing reads or makes
  /// dropped. Graph inputs and outputs keep their names and order.
  [[nodiscard]] Result<Graph> finish() const;

 private:
  std::string unique(const std::string& hint);

  const Graph& g_;
  std::vector<Value> new_values_;
  std::vector<Node> added_;
  std::set<NodeId> removed_;
  std::map<ValueId, ValueId> replace_;
  std::map<ValueId, Tensor> constants_;
  std::set<std::string> names_;
};

/// A rewriting pass's end: `in` itself when it rewrote nothing (`count` 0),
/// else the rewritten graph, with `count` added to stats->*counter.
[[nodiscard]] Result<Graph> finish_pass(const Graph& in, const Rewriter& rw, int count,
                                        PassStats* stats,
                                        int PassStats::*counter = &PassStats::rewritten);

/// The skeleton of a pass that rewrites chosen nodes one at a time: `in`
/// itself when no node `match`es; else, on a copy with its shapes propagated,
/// `rewrite(g, rw, id)` for each matching node in order, which adds what
/// replaces it and returns "" (the node is then removed), or adds nothing and
/// returns why it stays (logged at debug level as "<pass>: <node> stays: why").
/// Ends as finish_pass with the count of nodes rewritten.
[[nodiscard]] Result<Graph> rewrite_nodes(
    const Graph& in, PassStats* stats, const char* pass,
    const std::function<bool(const Node&)>& match,
    const std::function<std::string(const Graph&, Rewriter&, NodeId)>& rewrite,
    int PassStats::*counter = &PassStats::rewritten);

/// A copy of `g` (its name, opsets and metadata) with only `nodes`, in that
/// order: values renumbered, those no kept node reads or makes dropped (graph
/// inputs and outputs always stay), values in `constants` made initializers
/// of their tensor's dtype and shape. kInvalidArgument (from validate) when
/// the kept nodes do not make a valid graph.
[[nodiscard]] Result<Graph> compact(const Graph& g, const std::vector<NodeId>& nodes,
                                    const std::map<ValueId, Tensor>& constants = {});

/// Runs node `n` of `g` alone on the reference interpreter, its inputs taken
/// from `known` (every input the node reads must be there).
[[nodiscard]] Result<std::vector<Tensor>> evaluate_node(const Graph& g, const Node& n,
                                                        const std::map<ValueId, Tensor>& known);

}  // namespace hone::passes
