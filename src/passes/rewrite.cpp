#include "passes/rewrite.h"

#include <algorithm>
#include <string>

#include "core/log.h"
#include "passes/shape_propagation.h"

namespace hone::passes {

Uses::Uses(const Graph& g) : g_(g), readers_(g.values().size()) {
  for (size_t i = 0; i < g.nodes().size(); ++i)
    for (ValueId v : g.reads_of(static_cast<NodeId>(i))) {
      auto& r = readers_[static_cast<size_t>(v)];
      if (r.empty() || r.back() != static_cast<NodeId>(i)) r.push_back(static_cast<NodeId>(i));
    }
  outputs_.insert(g.outputs().begin(), g.outputs().end());
}

NodeId Uses::sole_reader(ValueId v) const {
  if (v < 0 || is_output(v)) return -1;
  const auto& r = readers(v);
  if (r.size() != 1) return -1;
  // A capture by name (If/Loop bodies) cannot be redirected: only plain reads count.
  const Node& n = g_.node(r[0]);
  return std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end() ? r[0] : -1;
}

const Node* Uses::producer(ValueId v) const {
  if (v < 0) return nullptr;
  const NodeId p = g_.value(v).producer;
  return p >= 0 ? &g_.node(p) : nullptr;
}

const Tensor* constant_of(const Graph& g, ValueId v) {
  if (v < 0) return nullptr;
  const Value& val = g.value(v);
  return val.initializer ? &*val.initializer : nullptr;
}

std::optional<double> scalar_of(const Graph& g, ValueId v) {
  const Tensor* t = constant_of(g, v);
  if (t == nullptr || t->numel() != 1) return std::nullopt;
  if (t->dtype() == DType::kF32) return static_cast<double>(t->data<float>()[0]);
  if (t->dtype() == DType::kF64) return t->data<double>()[0];
  return std::nullopt;
}

bool is_scalar(const Graph& g, ValueId v, double want, double rel) {
  const auto s = scalar_of(g, v);
  return s && std::abs(*s - want) <= rel * std::max(1.0, std::abs(want));
}

std::optional<std::vector<int64_t>> int_list(const Graph& g, const Node& n, const std::string& key,
                                             size_t input) {
  if (n.has_attr(key)) return n.attr_ints(key);
  if (input >= n.inputs.size() || n.inputs[input] < 0) return std::nullopt;
  const Tensor* t = constant_of(g, n.inputs[input]);
  if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32)) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->numel(); ++i) out.push_back(tensor_element_as_int64(*t, i));
  return out;
}

bool is_op(const Node& n, const char* op, size_t inputs) {
  return n.op_type == op && (n.domain.empty() || n.domain == "ai.onnx") &&
         n.inputs.size() == inputs && n.outputs.size() == 1 && n.outputs[0] >= 0;
}

ValueId other_operand(const Node& n, ValueId v) {
  if (n.inputs.size() != 2 || n.inputs[0] == n.inputs[1]) return kNoValue;
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return kNoValue;
}

Rewriter::Rewriter(const Graph& g) : g_(g) {
  for (const Value& v : g.values()) names_.insert(v.name);
  for (const Node& n : g.nodes()) names_.insert(n.name);
}

bool Rewriter::any_taken(const std::vector<NodeId>& ids) const {
  return std::any_of(ids.begin(), ids.end(), [&](NodeId id) { return taken(id); });
}

std::string Rewriter::unique(const std::string& hint) {
  std::string name = hint;
  for (int k = 1; names_.count(name); ++k) name = hint + "_" + std::to_string(k);
  names_.insert(name);
  return name;
}

std::string Rewriter::node_name(const std::string& hint) {
  return unique(hint);
}

ValueId Rewriter::new_value(const std::string& hint, DType dtype, std::optional<Shape> shape) {
  Value v;
  v.name = unique(hint);
  v.dtype = dtype;
  v.shape = std::move(shape);
  new_values_.push_back(std::move(v));
  return static_cast<ValueId>(g_.values().size() + new_values_.size() - 1);
}

ValueId Rewriter::add_constant(const std::string& hint, Tensor t) {
  const ValueId id = new_value(hint, t.dtype(), Shape::of(t.shape()));
  new_values_.back().initializer = std::move(t);
  return id;
}

Result<Graph> Rewriter::finish() const {
  for (ValueId o : g_.outputs())
    if (replace_.count(o))
      return fail(ErrorCode::kInternal,
                  "a graph pass redirected the readers of graph output '" + g_.value(o).name + "'");
  // Everything in one scratch graph first, to order the nodes.
  Graph tmp(g_.name());
  for (const Value& v : g_.values()) {
    Value c = v;
    c.producer = -1;
    tmp.add_value(std::move(c));
  }
  for (const Value& v : new_values_) tmp.add_value(v);
  for (const auto& [v, t] : constants_) {
    Value& val = tmp.value(v);
    val.initializer = t;
    val.dtype = t.dtype();
    val.shape = Shape::of(t.shape());
  }
  auto resolve = [&](ValueId v) {
    for (size_t hops = 0; hops <= replace_.size(); ++hops) {
      auto it = replace_.find(v);
      if (it == replace_.end()) break;
      v = it->second;
    }
    return v;
  };
  auto add = [&](Node n) {
    for (ValueId& v : n.inputs)
      if (v != kNoValue) v = resolve(v);
    tmp.add_node_with_outputs(std::move(n));
  };
  for (size_t i = 0; i < g_.nodes().size(); ++i)
    if (!taken(static_cast<NodeId>(i))) add(g_.nodes()[i]);
  for (const Node& n : added_) add(n);
  tmp.set_inputs(g_.inputs());
  tmp.set_outputs(g_.outputs());
  HONE_TRY(std::vector<NodeId> order, tmp.topological_order());

  // Then the result: nodes in that order, values renumbered, unread ones gone.
  tmp.opsets() = g_.opsets();
  tmp.metadata() = g_.metadata();
  return compact(tmp, order);
}

Result<Graph> compact(const Graph& g, const std::vector<NodeId>& nodes,
                      const std::map<ValueId, Tensor>& constants) {
  std::vector<bool> needed(g.values().size(), false);
  for (ValueId v : g.inputs()) needed[v] = true;
  for (ValueId v : g.outputs()) needed[v] = true;
  for (NodeId id : nodes) {
    for (ValueId v : g.reads_of(id)) needed[v] = true;
    for (ValueId v : g.node(id).outputs)
      if (v != kNoValue) needed[v] = true;
  }
  Graph out(g.name());
  out.opsets() = g.opsets();
  out.metadata() = g.metadata();
  std::vector<ValueId> remap(g.values().size(), kNoValue);
  for (size_t v = 0; v < g.values().size(); ++v) {
    if (!needed[v]) continue;
    Value c = g.values()[v];
    c.producer = -1;
    if (auto it = constants.find(static_cast<ValueId>(v)); it != constants.end()) {
      c.initializer = it->second;
      c.dtype = it->second.dtype();
      c.shape = Shape::of(it->second.shape());
    }
    remap[v] = out.add_value(std::move(c));
  }
  for (NodeId id : nodes) {
    Node n = g.node(id);
    for (ValueId& v : n.inputs)
      if (v != kNoValue) v = remap[v];
    for (ValueId& v : n.outputs)
      if (v != kNoValue) v = remap[v];
    out.add_node_with_outputs(std::move(n));
  }
  std::vector<ValueId> ins, outs;
  for (ValueId v : g.inputs()) ins.push_back(remap[v]);
  for (ValueId v : g.outputs()) outs.push_back(remap[v]);
  out.set_inputs(std::move(ins));
  out.set_outputs(std::move(outs));
  HONE_CHECK_OK_CTX(out.validate(), "after a graph pass on '" + g.name() + "'");
  return out;
}

Result<Graph> finish_pass(const Graph& in, const Rewriter& rw, int count, PassStats* stats,
                          int PassStats::*counter) {
  if (count == 0) return in;
  HONE_TRY(Graph out, rw.finish());
  if (stats) stats->*counter += count;
  return out;
}

Result<Graph> rewrite_nodes(
    const Graph& in, PassStats* stats, const char* pass,
    const std::function<bool(const Node&)>& match,
    const std::function<std::string(const Graph&, Rewriter&, NodeId)>& rewrite,
    int PassStats::*counter) {
  if (std::none_of(in.nodes().begin(), in.nodes().end(), match)) return in;
  Graph g = in;
  propagate_shapes(g);
  Rewriter rw(g);
  int count = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const auto id = static_cast<NodeId>(i);
    const Node& n = g.node(id);
    if (!match(n)) continue;
    if (const std::string why = rewrite(g, rw, id); !why.empty()) {
      HONE_LOG_DEBUG("{}: {} stays: {}", pass, n.describe(), why);
      continue;
    }
    rw.remove(id);
    ++count;
  }
  return finish_pass(in, rw, count, stats, counter);
}

}  // namespace hone::passes
