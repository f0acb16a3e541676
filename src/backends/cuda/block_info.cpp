// Who reads what inside a cuda block (BlockInfo), and the one place that
// decides which kind of unit a node starts: a host value, an attention unit
// or one of its chain's dims-only nodes, a dense op, an index op, an
// add+layernorm, an element-wise chain, or the rest (ops_misc.cpp).
#include <algorithm>

#include "backends/common/host_eval.h"
#include "backends/cuda/op.h"

namespace hone::cuda {

size_t BlockInfo::position(NodeId id) {
  if (position_.empty()) {
    position_.assign(g.nodes().size(), 0);
    if (auto order = g.topological_order())
      for (size_t i = 0; i < order->size(); ++i) position_[static_cast<size_t>((*order)[i])] = i;
  }
  return position_[static_cast<size_t>(id)];
}

const std::vector<NodeId>& BlockInfo::readers(ValueId v) {
  if (readers_.empty()) {
    readers_.resize(g.values().size());
    for (size_t i = 0; i < g.nodes().size(); ++i)
      for (ValueId in : g.nodes()[i].inputs)
        if (in >= 0) {
          auto& r = readers_[static_cast<size_t>(in)];
          if (r.empty() || r.back() != static_cast<NodeId>(i)) r.push_back(static_cast<NodeId>(i));
        }
  }
  return readers_[static_cast<size_t>(v)];
}

NodeId BlockInfo::sole_consumer(ValueId v) const {
  const auto i = static_cast<size_t>(v);
  if (is_output[i] || consumers[i] != 1) return -1;
  const NodeId c = consumer[i];
  return used[static_cast<size_t>(c)] ? -1 : c;
}

Result<Unit> create_unit(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  const std::string& op = n.op_type;
  if (host_eval::host_node(b.g, n, host_eval::Policy::kAnyDtype)) return create_host(b, n);
  if (!b.inside_attention && !b.attention_of.empty()) {
    if (const int a = b.attention_of[static_cast<size_t>(b.node_id(n))]; a >= 0)
      return b.attention[static_cast<size_t>(a)].in_chain(b.node_id(n))
                 ? create_dims_only(b, n)
                 : create_attention(b, n, absorbed);
  }
  if (op == "Transpose")
    if (NodeId ln = -1, add = transposed_into_layernorm(b, n, &ln); add >= 0)
      return create_add_layernorm(b, b.g.node(add), ln, absorbed, &n);
  if (op == "Conv" || op == "Gemm" || op == "MatMul") return create_dense(b, n, absorbed);
  if (op == "Cast" || gathers_on_device(b.g, n) || clips_on_device(b.g, n))
    return create_int_op(b, n);
  if (op == "Gather" || op == "Slice" || op == "Expand" || op == "Split") return create_index(b, n);
  // An Identity of integers or bools is a view (ops_misc.cpp); of floats, a chain's.
  if (op == "Identity" && !n.inputs.empty())
    if (const DType t = known_dtype(b.g, n.inputs[0]);
        t == DType::kI64 || t == DType::kI32 || t == DType::kBool)
      return create_misc(b, n);
  if (op == "BatchNormalization" || op == "Pad") return create_pad_norm(b, n);
  if (element_op(op)) return create_element_op(b, n);
  if (tensor_op(b.g, n)) return create_tensor_op(b, n);
  if (op == "Add")
    if (const NodeId ln = layernorm_after(b, n); ln >= 0)
      return create_add_layernorm(b, n, ln, absorbed);
  if (!eltwise_expr(b.g, n, std::vector<std::string>(eltwise_arity(n), "x")).empty())
    return create_chain(b, n, absorbed);
  if (op == "LayerNormalization") return create_layernorm(b, n, absorbed);
  return create_misc(b, n);
}

}  // namespace hone::cuda
