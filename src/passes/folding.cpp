#include <map>
#include <set>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "hone/passes.h"
#include "passes/rewrite.h"

namespace hone {
namespace {

bool is_random(const Node& n) {
  static const std::set<std::string> kRandom = {"RandomNormal",     "RandomUniform",
                                                "RandomNormalLike", "RandomUniformLike",
                                                "Multinomial",      "Bernoulli"};
  return kRandom.count(n.op_type) != 0;
}

bool has_subgraph(const Node& n) {
  for (const auto& [key, attr] : n.attrs)
    if (std::holds_alternative<std::shared_ptr<const Graph>>(attr) ||
        std::holds_alternative<std::vector<std::shared_ptr<const Graph>>>(attr))
      return true;
  return false;
}

/// A copy of `g` keeping only nodes with keep[i] (passes::compact, in their
/// order in `g`), where values in `constants` become initializers.
Result<Graph> rebuild(const Graph& g, const std::vector<bool>& keep,
                      const std::map<ValueId, Tensor>& constants) {
  std::vector<NodeId> nodes;
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (keep[i]) nodes.push_back(static_cast<NodeId>(i));
  return passes::compact(g, nodes, constants);
}

/// The nodes among `candidate` that a graph output depends on: walks `order`
/// backwards from the outputs, through candidates only (a folded node's
/// outputs are constants, so what it read is not needed through it).
std::vector<bool> live_nodes(const Graph& g, const std::vector<NodeId>& order,
                             const std::vector<bool>& candidate) {
  std::vector<bool> live_value(g.values().size(), false);
  for (ValueId v : g.outputs()) live_value[v] = true;
  std::vector<bool> live(g.nodes().size(), false);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!candidate[*it]) continue;
    bool needed = false;
    for (ValueId v : g.node(*it).outputs) needed |= v != kNoValue && live_value[v];
    if (!needed) continue;
    live[*it] = true;
    for (ValueId v : g.reads_of(*it)) live_value[v] = true;
  }
  return live;
}

int count_dropped(const std::vector<bool>& candidate, const std::vector<bool>& live) {
  int n = 0;
  for (size_t i = 0; i < candidate.size(); ++i) n += candidate[i] && !live[i] ? 1 : 0;
  return n;
}

}  // namespace

Result<std::vector<Tensor>> passes::evaluate_node(const Graph& g, const Node& n,
                                                  const std::map<ValueId, Tensor>& known) {
  Graph one("fold");
  one.opsets() = g.opsets();
  Node copy = n;
  for (ValueId& v : copy.inputs) {
    if (v == kNoValue) continue;
    const Value& src = g.value(v);
    Value c;
    c.name = src.name;
    c.initializer = known.at(v);
    c.dtype = c.initializer->dtype();
    c.shape = Shape::of(c.initializer->shape());
    v = one.add_value(std::move(c));
  }
  for (ValueId& v : copy.outputs) {
    if (v == kNoValue) continue;
    Value c = g.value(v);
    c.producer = -1;
    c.initializer.reset();
    v = one.add_value(std::move(c));
    one.add_output(v);
  }
  one.add_node_with_outputs(std::move(copy));
  return eval::Interpreter().run_tensors(one, {});
}

Result<Graph> fold_constants(const Graph& g, PassStats* stats, size_t max_bytes) {
  HONE_TRY(std::vector<NodeId> order, g.topological_order());
  std::map<ValueId, Tensor> known;  // initializers and folded outputs
  for (size_t v = 0; v < g.values().size(); ++v)
    if (g.values()[v].initializer)
      known.emplace(static_cast<ValueId>(v), *g.values()[v].initializer);
  std::vector<bool> keep(g.nodes().size(), true);
  std::map<ValueId, Tensor> folded;
  int count = 0;
  for (NodeId id : order) {
    const Node& n = g.node(id);
    if (is_random(n) || has_subgraph(n) || !(n.domain.empty() || n.domain == "ai.onnx")) continue;
    bool all_const = true;
    for (ValueId v : g.reads_of(id)) all_const &= known.count(v) != 0;
    if (!all_const || n.outputs.empty()) continue;
    bool tensors = true;
    for (ValueId v : n.outputs) tensors &= v == kNoValue || g.value(v).kind == ValueKind::kTensor;
    if (!tensors) continue;
    auto outs = passes::evaluate_node(g, n, known);
    if (!outs) continue;  // leave it to run time, where the error will be reported in context
    size_t bytes = 0;
    for (const Tensor& t : *outs) bytes += t.nbytes();
    if (bytes > max_bytes) continue;
    size_t k = 0;
    for (ValueId v : n.outputs) {
      if (v == kNoValue) continue;
      known.emplace(v, (*outs)[k]);
      folded.emplace(v, (*outs)[k]);
      ++k;
    }
    keep[id] = false;
    ++count;
  }
  if (count == 0) return g;
  // One rebuild: folded nodes go, and so do nodes and initializers that only
  // fed them or fed nothing.
  const std::vector<bool> live = live_nodes(g, order, keep);
  HONE_TRY(Graph out, rebuild(g, live, folded));
  if (stats) {
    stats->folded += count;
    stats->removed += count_dropped(keep, live);
  }
  return out;
}

Result<Graph> eliminate_dead_code(const Graph& g, PassStats* stats) {
  HONE_TRY(std::vector<NodeId> order, g.topological_order());
  const std::vector<bool> all(g.nodes().size(), true);
  const std::vector<bool> live = live_nodes(g, order, all);
  // Rebuild even with nothing removed: unread initializers go too.
  HONE_TRY(Graph out, rebuild(g, live, {}));
  if (stats) stats->removed += count_dropped(all, live);
  return out;
}

}  // namespace hone
