#include "hone/graph.h"

#include <algorithm>
#include <set>

namespace hone {

// --- Node -------------------------------------------------------------------

namespace {
template <class T>
const T* find_attr(const Node& n, const std::string& key) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return nullptr;
  return std::get_if<T>(&it->second);
}
}  // namespace

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  const auto* v = find_attr<int64_t>(*this, key);
  return v ? *v : fallback;
}
float Node::attr_float(const std::string& key, float fallback) const {
  if (const auto* v = find_attr<float>(*this, key)) return *v;
  if (const auto* i = find_attr<int64_t>(*this, key)) return static_cast<float>(*i);
  return fallback;
}
std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  const auto* v = find_attr<std::string>(*this, key);
  return v ? *v : fallback;
}
std::vector<int64_t> Node::attr_ints(const std::string& key, std::vector<int64_t> fallback) const {
  const auto* v = find_attr<std::vector<int64_t>>(*this, key);
  return v ? *v : fallback;
}
std::vector<float> Node::attr_floats(const std::string& key, std::vector<float> fallback) const {
  const auto* v = find_attr<std::vector<float>>(*this, key);
  return v ? *v : fallback;
}
std::vector<std::string> Node::attr_strings(const std::string& key) const {
  const auto* v = find_attr<std::vector<std::string>>(*this, key);
  return v ? *v : std::vector<std::string>{};
}
const Tensor* Node::attr_tensor(const std::string& key) const {
  return find_attr<Tensor>(*this, key);
}
const Graph* Node::attr_graph(const std::string& key) const {
  const auto* v = find_attr<std::shared_ptr<const Graph>>(*this, key);
  return v ? v->get() : nullptr;
}
std::string Node::describe() const {
  return "'" + name + "' (" + op_type + ")";
}

namespace {

void collect_captures(const Graph& g, std::set<std::string>& out);

void collect_node_captures(const Node& n, std::set<std::string>& out) {
  for (const auto& [key, attr] : n.attrs) {
    if (const auto* sg = std::get_if<std::shared_ptr<const Graph>>(&attr))
      collect_captures(**sg, out);
    if (const auto* gs = std::get_if<std::vector<std::shared_ptr<const Graph>>>(&attr))
      for (const auto& sub : *gs) collect_captures(*sub, out);
  }
}

// Names `g` reads from enclosing scopes: its own captures, plus those of its
// nodes' subgraphs that `g` does not define itself.
void collect_captures(const Graph& g, std::set<std::string>& out) {
  for (ValueId v : g.captured_values()) out.insert(g.value(v).name);
  const std::set<ValueId> inputs(g.inputs().begin(), g.inputs().end());
  for (const Node& n : g.nodes()) {
    std::set<std::string> inner;
    collect_node_captures(n, inner);
    for (const std::string& name : inner) {
      const ValueId id = g.find_value(name);
      const bool defined = id != kNoValue && (g.value(id).producer >= 0 ||
                                              g.value(id).initializer || inputs.count(id) != 0);
      if (!defined) out.insert(name);
    }
  }
}

}  // namespace

std::vector<std::string> captured_names(const Node& node) {
  std::set<std::string> names;
  collect_node_captures(node, names);
  return {names.begin(), names.end()};
}

// --- Graph ------------------------------------------------------------------

std::vector<ValueId> Graph::reads_of(NodeId id) const {
  const Node& n = node(id);
  std::vector<ValueId> reads;
  for (ValueId v : n.inputs)
    if (v != kNoValue && !value(v).name.empty()) reads.push_back(v);
  for (const std::string& name : captured_names(n))
    if (ValueId v = find_value(name); v != kNoValue) reads.push_back(v);
  return reads;
}

ValueId Graph::add_value(Value v) {
  const auto id = static_cast<ValueId>(values_.size());
  if (!v.name.empty()) by_name_.emplace(v.name, id);
  values_.push_back(std::move(v));
  return id;
}

ValueId Graph::add_input(std::string name, DType dtype, std::optional<Shape> shape) {
  Value v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.shape = std::move(shape);
  const ValueId id = add_value(std::move(v));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_initializer(std::string name, Tensor t) {
  Value v;
  v.name = std::move(name);
  v.dtype = t.dtype();
  v.shape = Shape::of(t.shape());
  v.initializer = std::move(t);
  return add_value(std::move(v));
}

std::vector<ValueId> Graph::add_node(std::string op_type, std::vector<ValueId> inputs,
                                     int num_outputs, std::map<std::string, Attribute> attrs,
                                     std::string name, std::string domain) {
  if (name.empty()) name = op_type + "_" + std::to_string(auto_names_++);
  Node n;
  n.op_type = std::move(op_type);
  n.domain = std::move(domain);
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  for (int i = 0; i < num_outputs; ++i) {
    Value v;
    v.name = name + "_out" + std::to_string(i);
    n.outputs.push_back(add_value(std::move(v)));
  }
  n.name = std::move(name);
  std::vector<ValueId> outs = n.outputs;
  add_node_with_outputs(std::move(n));
  return outs;
}

NodeId Graph::add_node_with_outputs(Node node) {
  const auto id = static_cast<NodeId>(nodes_.size());
  for (ValueId o : node.outputs)
    if (o >= 0 && static_cast<size_t>(o) < values_.size() && values_[o].producer < 0)
      values_[o].producer = id;
  nodes_.push_back(std::move(node));
  return id;
}

ValueId Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? kNoValue : it->second;
}

std::vector<ValueId> Graph::captured_values() const {
  std::set<ValueId> is_input(inputs_.begin(), inputs_.end());
  std::set<ValueId> seen;
  std::vector<ValueId> out;
  auto consider = [&](ValueId v) {
    if (v < 0 || static_cast<size_t>(v) >= values_.size()) return;
    const Value& val = values_[v];
    if (val.producer >= 0 || val.initializer || is_input.count(v)) return;
    if (seen.insert(v).second) out.push_back(v);
  };
  for (const Node& n : nodes_)
    for (ValueId v : n.inputs) consider(v);
  for (ValueId v : outputs_) consider(v);
  return out;
}

Result<std::vector<NodeId>> Graph::topological_order() const {
  const size_t n = nodes_.size();
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<NodeId>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    std::set<NodeId> deps;
    for (ValueId v : reads_of(static_cast<NodeId>(i))) {
      if (v < 0 || static_cast<size_t>(v) >= values_.size()) continue;
      const NodeId p = values_[v].producer;
      if (p >= 0 && deps.insert(p).second) {
        consumers[p].push_back(static_cast<NodeId>(i));
        ++indegree[i];
      }
    }
  }
  // Kahn's algorithm, keeping the original order among ready nodes so the
  // result is deterministic and matches the file order when it is valid.
  std::vector<NodeId> order;
  order.reserve(n);
  std::set<NodeId> ready;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.insert(static_cast<NodeId>(i));
  while (!ready.empty()) {
    const NodeId id = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(id);
    for (NodeId c : consumers[id])
      if (--indegree[c] == 0) ready.insert(c);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (indegree[i] > 0)
        return fail(ErrorCode::kInvalidArgument,
                    "graph '" + name_ + "' has a cycle through node " + nodes_[i].describe());
  }
  return order;
}

Result<void> Graph::validate(const std::vector<std::string>& outer_names) const {
  const auto nvalues = static_cast<ValueId>(values_.size());
  auto in_range = [&](ValueId v) { return v >= 0 && v < nvalues; };
  std::set<std::string> names;
  for (const Value& v : values_) {
    if (v.name.empty()) continue;
    if (!names.insert(v.name).second)
      return fail(ErrorCode::kInvalidArgument,
                  "graph '" + name_ + "' defines value '" + v.name + "' more than once");
  }
  std::vector<int> producers(values_.size(), 0);
  std::set<ValueId> is_input(inputs_.begin(), inputs_.end());
  for (ValueId v : inputs_)
    if (!in_range(v))
      return fail(ErrorCode::kInvalidArgument,
                  "graph '" + name_ + "' has an input id out of range");
  for (const Node& node : nodes_) {
    if (node.op_type.empty())
      return fail(ErrorCode::kInvalidArgument,
                  "graph '" + name_ + "' has node '" + node.name + "' with no op_type");
    for (ValueId v : node.inputs)
      if (v != kNoValue && !in_range(v))
        return fail(ErrorCode::kInvalidArgument,
                    "node " + node.describe() + " reads a value id out of range");
    for (ValueId v : node.outputs) {
      if (v == kNoValue) continue;
      if (!in_range(v))
        return fail(ErrorCode::kInvalidArgument,
                    "node " + node.describe() + " writes a value id out of range");
      if (++producers[v] > 1)
        return fail(ErrorCode::kInvalidArgument,
                    "value '" + values_[v].name + "' is produced by more than one node");
      if (is_input.count(v) || values_[v].initializer)
        return fail(ErrorCode::kInvalidArgument, "node " + node.describe() +
                                                     " overwrites graph input or initializer '" +
                                                     values_[v].name + "'");
    }
  }
  std::set<std::string> outer(outer_names.begin(), outer_names.end());
  for (ValueId v : captured_values()) {
    const Value& val = values_[v];
    if (!outer.count(val.name)) {
      // Find a reader to name in the message.
      for (const Node& node : nodes_)
        for (ValueId in : node.inputs)
          if (in == v)
            return fail(
                ErrorCode::kInvalidArgument,
                "node " + node.describe() + " reads '" + val.name +
                    "', which is not a graph input, an initializer or the output of any node");
      return fail(
          ErrorCode::kInvalidArgument,
          "graph output '" + val.name + "' is not produced by any node, input or initializer");
    }
  }
  for (ValueId v : outputs_)
    if (!in_range(v))
      return fail(ErrorCode::kInvalidArgument,
                  "graph '" + name_ + "' has an output id out of range");
  auto order = topological_order();
  if (!order) return fail(order.error());
  return {};
}

int64_t Graph::opset(const std::string& domain) const {
  auto it = opsets_.find(domain);
  if (it != opsets_.end()) return it->second;
  return domain.empty() ? 17 : 1;
}

int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (const Value& v : values_)
    if (v.initializer) n += v.initializer->numel();
  return n;
}

int64_t Graph::parameter_bytes() const {
  int64_t n = 0;
  for (const Value& v : values_)
    if (v.initializer) n += static_cast<int64_t>(v.initializer->nbytes());
  return n;
}

}  // namespace hone
