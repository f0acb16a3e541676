// find_elementwise_chains and find_attention: patterns backends compile as
// one unit but that have no standard ONNX op to rewrite them into, so the
// passes report them instead of changing the graph.
#include <set>

#include "hone/passes.h"
#include "ops/attrs.h"
#include "passes/rewrite.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

bool is_elementwise(const Node& n) {
  static const std::set<std::string> kUnary = {
      "Relu",      "LeakyRelu",   "Sigmoid",    "Tanh",     "Erf",  "Sqrt", "Exp",
      "Log",       "Neg",         "Abs",        "Gelu",     "Elu",  "Selu", "Clip",
      "HardSwish", "HardSigmoid", "Reciprocal", "Softplus", "Mish", "Sin",  "Cos",
      "Floor",     "Ceil",        "Round",      "Identity", "Swish"};
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  if (!n.domain.empty() || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  if (n.op_type == "Clip") return !n.inputs.empty();
  if (kUnary.count(n.op_type)) return n.inputs.size() == 1;
  return kBinary.count(n.op_type) && n.inputs.size() == 2;
}

/// `other`, combined with a chain value of shape `chain`, leaves the shape as
/// it is: a constant that broadcasts into it, or a value of known shape that does.
bool joins_without_growing(const Graph& g, ValueId other, const std::optional<Shape>& chain) {
  const Value& o = g.value(other);
  if (!o.shape || !chain) return o.initializer && o.initializer->numel() == 1;
  if (o.shape->rank() > chain->rank()) return false;
  const size_t off = chain->rank() - o.shape->rank();
  for (size_t i = 0; i < o.shape->rank(); ++i) {
    const Dim& d = (*o.shape)[i];
    if (!(d == Dim(1) || d == (*chain)[off + i])) return false;
    if (d.is_unknown()) return false;
  }
  return true;
}

/// The node continuing a chain from `n`: the sole reader of n's output, when
/// it is element-wise and reads it as a whole-tensor operand.
NodeId successor(const Graph& g, const passes::Uses& uses, const Node& n) {
  const ValueId v = n.outputs[0];
  const NodeId r = uses.sole_reader(v);
  if (r < 0 || !is_elementwise(g.node(r))) return -1;
  const Node& next = g.node(r);
  if (next.inputs.size() == 2) {
    const ValueId other = passes::other_operand(next, v);
    if (other == kNoValue || !joins_without_growing(g, other, g.value(v).shape)) return -1;
  } else if (next.inputs[0] != v) {
    return -1;  // Clip reading v as a bound
  }
  return r;
}

}  // namespace

std::vector<ElementwiseChain> find_elementwise_chains(const Graph& in) {
  Graph g = in;
  passes::propagate_shapes(g);
  passes::Uses uses(g);
  std::vector<NodeId> succ(g.nodes().size(), -1);
  std::vector<bool> has_pred(g.nodes().size(), false);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (!is_elementwise(g.nodes()[i])) continue;
    succ[i] = successor(g, uses, g.nodes()[i]);
    if (succ[i] >= 0) has_pred[static_cast<size_t>(succ[i])] = true;
  }
  std::vector<ElementwiseChain> out;
  auto order = g.topological_order();
  if (!order) return out;
  for (NodeId id : *order) {
    if (!is_elementwise(g.node(id)) || has_pred[static_cast<size_t>(id)]) continue;
    ElementwiseChain c;
    for (NodeId k = id; k >= 0; k = succ[static_cast<size_t>(k)]) c.nodes.push_back(k);
    if (c.nodes.size() >= 2) out.push_back(std::move(c));
  }
  return out;
}

std::vector<AttentionMatch> find_attention(const Graph& g) {
  passes::Uses uses(g);
  std::vector<AttentionMatch> out;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& av = g.nodes()[i];
    if (!passes::is_op(av, "MatMul", 2)) continue;
    AttentionMatch m;
    m.av = static_cast<NodeId>(i);
    ValueId v = av.inputs[0];
    auto step = [&](ValueId val) -> const Node* {
      if (uses.sole_reader(val) < 0) return nullptr;
      return uses.producer(val);
    };
    const Node* sm = step(v);
    if (!sm || !passes::is_op(*sm, "Softmax", 1)) continue;
    const auto sa = ops::softmax_attrs(*sm, g.opset());
    if (!sa) continue;
    const int64_t axis = sa->axis;
    const Value& sv = g.value(sm->inputs[0]);
    if (axis != -1 && !(sv.shape && axis == static_cast<int64_t>(sv.shape->rank()) - 1)) continue;
    m.softmax = g.value(v).producer;
    v = sm->inputs[0];
    const Node* n = step(v);
    if (n && passes::is_op(*n, "Add", 2)) {  // a mask; the scores are the non-constant side
      m.mask = g.value(v).producer;
      const Node* a = uses.producer(n->inputs[0]);
      v = a && (a->op_type == "MatMul" || a->op_type == "Mul" || a->op_type == "Div")
              ? n->inputs[0]
              : n->inputs[1];
      n = step(v);
    }
    if (n && (passes::is_op(*n, "Mul", 2) || passes::is_op(*n, "Div", 2))) {
      const auto s = passes::scalar_of(g, n->inputs[1]);
      const auto s0 = n->op_type == "Mul" ? passes::scalar_of(g, n->inputs[0]) : std::nullopt;
      if (!s && !s0) continue;
      m.scale = g.value(v).producer;
      m.scale_value = n->op_type == "Div" ? 1.0 / *s : (s ? *s : *s0);
      v = s ? n->inputs[0] : n->inputs[1];
      n = step(v);
    }
    if (!n || !passes::is_op(*n, "MatMul", 2)) continue;
    m.qk = g.value(v).producer;
    out.push_back(m);
  }
  return out;
}

}  // namespace hone
