// hone::Graph: the typed dataflow graph every stage of hone works on.
//
//   Graph g("mlp");
//   ValueId x = g.add_input("x", DType::kF32, Shape{Dim::symbol("batch"), 4});
//   ValueId y = g.add_node("Relu", {x}, 1)[0];   // returns output value ids
//   g.add_output(y);  HONE_CHECK_OK(g.validate());
//
// Values are referred to by ValueId (an index into the graph's value table);
// nodes by NodeId. A value is a graph input, an initializer (constant), a node
// output, or, in a subgraph (If/Loop bodies), a name captured from an
// enclosing graph. Node inputs use kNoValue for omitted optional inputs.
// Thread-safety: a const Graph may be read from many threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "hone/dtype.h"
#include "hone/error.h"
#include "hone/shape.h"
#include "hone/tensor.h"

namespace hone {

class Graph;
using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;

/// What a value holds at run time. Most values are tensors; ONNX sequences
/// and optionals exist for the ops that need them.
enum class ValueKind : uint8_t { kTensor, kSequence, kOptional };

struct Value {
  std::string name;
  ValueKind kind = ValueKind::kTensor;
  DType dtype = DType::kUndefined;  // element type (of the tensor, or sequence elements)
  std::optional<Shape> shape;       // unknown rank when empty
  NodeId producer = -1;             // -1 for inputs, initializers and captures
  std::optional<Tensor> initializer;
  std::string doc;
};

/// An attribute value, as ONNX has them.
using Attribute = std::variant<int64_t, float, std::string, Tensor, std::shared_ptr<const Graph>,
                               std::vector<int64_t>, std::vector<float>, std::vector<std::string>,
                               std::vector<Tensor>, std::vector<std::shared_ptr<const Graph>>>;

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::map<std::string, Attribute> attrs;

  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  /// Typed getters: the value if present and of that type, else `fallback`.
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(const std::string& key, std::vector<float> fallback = {}) const;
  std::vector<std::string> attr_strings(const std::string& key) const;
  const Tensor* attr_tensor(const std::string& key) const;
  const Graph* attr_graph(const std::string& key) const;
  /// "'conv1' (Conv)" for messages.
  std::string describe() const;
};

/// Names that `node`'s subgraph attributes (If branches, Loop/Scan bodies,
/// recursively) read from enclosing scopes: the implicit inputs of the node.
std::vector<std::string> captured_names(const Node& node);

class Graph {
 public:
  explicit Graph(std::string name = "graph") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  // --- building -----------------------------------------------------------
  /// Adds a value with no producer (used by importers before wiring nodes).
  ValueId add_value(Value v);
  ValueId add_input(std::string name, DType dtype, std::optional<Shape> shape);
  ValueId add_initializer(std::string name, Tensor t);
  /// Adds a node and `num_outputs` fresh output values named "<node>_out<i>"
  /// (or "<op>_<n>_out<i>"); returns the output ids.
  std::vector<ValueId> add_node(std::string op_type, std::vector<ValueId> inputs, int num_outputs,
                                std::map<std::string, Attribute> attrs = {}, std::string name = "",
                                std::string domain = "");
  /// Adds a node whose outputs already exist (importers); sets their producer.
  NodeId add_node_with_outputs(Node node);
  void add_output(ValueId v) { outputs_.push_back(v); }
  void set_outputs(std::vector<ValueId> outs) { outputs_ = std::move(outs); }
  void set_inputs(std::vector<ValueId> ins) { inputs_ = std::move(ins); }

  // --- reading ------------------------------------------------------------
  const std::vector<Value>& values() const { return values_; }
  const Value& value(ValueId id) const { return values_[static_cast<size_t>(id)]; }
  Value& value(ValueId id) { return values_[static_cast<size_t>(id)]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  Node& node(NodeId id) { return nodes_[static_cast<size_t>(id)]; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  /// Value by name, or kNoValue.
  ValueId find_value(const std::string& name) const;
  /// Values that are read but have no producer, are not inputs and not
  /// initializers: in a subgraph, names captured from enclosing scopes.
  std::vector<ValueId> captured_values() const;
  /// Values of this graph that node `id` reads: its inputs (omitted ones
  /// skipped) and the values its subgraphs capture by name.
  std::vector<ValueId> reads_of(NodeId id) const;
  /// Nodes in an order where every producer precedes its consumers (captures
  /// by subgraphs count as reads); error naming a node on a cycle if there is one.
  [[nodiscard]] Result<std::vector<NodeId>> topological_order() const;
  /// Structural checks: ids in range, every value has at most one producer,
  /// outputs are defined, no cycles, names unique. `outer_names` lists names
  /// visible from enclosing graphs (for subgraphs), which may be captured.
  [[nodiscard]] Result<void> validate(const std::vector<std::string>& outer_names = {}) const;

  // --- model-level facts (ONNX opsets, metadata) ----------------------------
  /// Operator-set version per domain ("" → 17).
  std::map<std::string, int64_t>& opsets() { return opsets_; }
  const std::map<std::string, int64_t>& opsets() const { return opsets_; }
  int64_t opset(const std::string& domain = "") const;
  std::map<std::string, std::string>& metadata() { return metadata_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  /// Number of parameters (initializer elements) and their bytes.
  int64_t parameter_count() const;
  int64_t parameter_bytes() const;

 private:
  std::string name_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::map<std::string, ValueId> by_name_;
  std::map<std::string, int64_t> opsets_;
  std::map<std::string, std::string> metadata_;
  int64_t auto_names_ = 0;
};

}  // namespace hone
