// eliminate_transposes: layout shuffles that compute nothing. Exporters leave
// Transpose pairs around reshapes and before MatMul (x @ W^T); a pair that
// cancels is two full copies of a tensor for nothing, and a transposed MatMul
// operand is what Gemm's transA/transB are for.
#include <algorithm>
#include <numeric>
#include <optional>

#include "eval/kernel_util.h"
#include "hone/passes.h"
#include "ops/attrs.h"
#include "passes/rewrite.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

/// A Transpose's permutation; the default (reverse) needs the input's rank.
std::optional<std::vector<int64_t>> perm_of(const Graph& g, const Node& t) {
  const Value& x = g.value(t.inputs[0]);
  if (!x.shape) {
    if (t.has_attr("perm")) return t.attr_ints("perm");
    return std::nullopt;
  }
  auto p = ops::transpose_perm(t, static_cast<int64_t>(x.shape->rank()));
  if (!p) return std::nullopt;
  return *p;
}

bool is_identity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool all_readers_use_inputs(const Graph& g, const passes::Uses& uses, ValueId v) {
  for (NodeId r : uses.readers(v)) {
    const Node& n = g.node(r);
    if (std::find(n.inputs.begin(), n.inputs.end(), v) == n.inputs.end()) return false;
  }
  return true;
}

/// A constant scalar of `n`'s input `i`, or nothing.
std::optional<double> const_scalar(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return std::nullopt;
  const Value& v = g.value(n.inputs[i]);
  if (!v.initializer || v.initializer->numel() != 1) return std::nullopt;
  return tensor_element_as_double(*v.initializer, 0);
}

/// `n` passes its input through: an Identity, a Cast to its input's type, or a Dropout whose mask
/// nobody reads that is not training (training_mode absent or a constant false) or drops nothing
/// (ratio a constant 0, as exporters write a module's `dropout(p=0.0, training=True)`). ONNX:
/// Dropout is then the identity.
bool passes_through(const Graph& g, const passes::Uses& uses, const Node& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0) return false;
  if (n.op_type == "Identity") return n.inputs.size() == 1 && n.outputs.size() == 1;
  if (n.op_type == "Cast") {
    // To the type it already has (llama's softmax in f32 of an f32 input).
    const DType from = g.value(n.inputs[0]).dtype;
    const auto to = eval::dtype_from_onnx(ops::cast_to(n));
    return n.outputs.size() == 1 && from != DType::kUndefined && to && *to == from;
  }
  if (n.op_type != "Dropout") return false;
  if (n.outputs.size() > 1 && n.outputs[1] >= 0 &&
      (!uses.readers(n.outputs[1]).empty() || uses.is_output(n.outputs[1])))
    return false;
  const bool has_mode = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const std::optional<double> training = const_scalar(g, n, 2);
  if (!has_mode || (training && *training == 0)) return true;
  const std::optional<double> ratio = const_scalar(g, n, 1);
  return training && ratio && *ratio == 0;
}

size_t rank_of(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  return val.shape ? val.shape->rank() : size_t{99};
}

/// `out` (made by removed nodes) now equals `x`: redirect its readers, or,
/// when it is a graph output whose name must stay, make it with an Identity.
void forward(const Graph& g, passes::Rewriter& rw, const passes::Uses& uses, ValueId out,
             ValueId x) {
  if (uses.is_output(out)) {
    Node id;
    id.name = rw.node_name(g.value(out).name + "_identity");
    id.op_type = "Identity";
    id.inputs = {x};
    id.outputs = {out};
    rw.add_node(std::move(id));
  } else {
    rw.replace_uses(out, x);
  }
}

}  // namespace

Result<Graph> eliminate_transposes(const Graph& in, PassStats* stats) {
  Graph g = in;
  passes::propagate_shapes(g);
  passes::Uses uses(g);
  passes::Rewriter rw(g);
  int count = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const auto id = static_cast<NodeId>(i);
    const Node& n = g.nodes()[i];
    if (rw.taken(id)) continue;
    if (passes_through(g, uses, n) && !uses.is_output(n.outputs[0]) &&
        all_readers_use_inputs(g, uses, n.outputs[0])) {
      rw.remove(id);
      rw.replace_uses(n.outputs[0], n.inputs[0]);
      ++count;
      continue;
    }
    if (passes::is_op(n, "Transpose", 1)) {
      const Node* inner = uses.producer(n.inputs[0]);
      if (inner == nullptr || !passes::is_op(*inner, "Transpose", 1)) continue;
      const NodeId inner_id = g.value(n.inputs[0]).producer;
      if (rw.taken(inner_id)) continue;
      auto p1 = perm_of(g, *inner), p2 = perm_of(g, n);
      if (!p1 || !p2 || p1->size() != p2->size()) continue;
      std::vector<int64_t> q;
      bool valid = true;
      for (int64_t k : *p2) {
        valid = valid && k >= 0 && k < static_cast<int64_t>(p1->size());
        if (valid) q.push_back((*p1)[static_cast<size_t>(k)]);
      }
      if (!valid) continue;
      const bool inner_goes = uses.sole_reader(n.inputs[0]) == id;
      if (!inner_goes && !is_identity(q)) continue;  // would trade one Transpose for another
      if (!is_identity(q) || !all_readers_use_inputs(g, uses, n.outputs[0])) {
        if (is_identity(q)) continue;
        Node t = n;
        t.inputs = {inner->inputs[0]};
        t.attrs["perm"] = q;
        rw.add_node(std::move(t));
      } else {
        forward(g, rw, uses, n.outputs[0], inner->inputs[0]);
      }
      rw.remove(id);
      if (inner_goes) rw.remove(inner_id);
      ++count;
      continue;
    }
    if (passes::is_op(n, "MatMul", 2)) {
      // MatMul(Transpose(A), Transpose(B)) of matrices -> Gemm(A, B, transA, transB).
      if (rank_of(g, n.inputs[0]) != 2 || rank_of(g, n.inputs[1]) != 2) continue;
      Node gemm = n;
      gemm.op_type = "Gemm";
      gemm.attrs.clear();
      std::vector<NodeId> gone;
      for (size_t side = 0; side < 2; ++side) {
        const Node* t = uses.producer(n.inputs[side]);
        if (t == nullptr || !passes::is_op(*t, "Transpose", 1)) continue;
        const NodeId tid = g.value(n.inputs[side]).producer;
        auto p = perm_of(g, *t);
        if (!p || *p != std::vector<int64_t>{1, 0} || uses.sole_reader(n.inputs[side]) != id ||
            rw.taken(tid))
          continue;
        gemm.inputs[side] = t->inputs[0];
        gemm.attrs[side == 0 ? "transA" : "transB"] = int64_t{1};
        gone.push_back(tid);
      }
      if (gone.empty()) continue;
      for (NodeId t : gone) rw.remove(t);
      rw.remove(id);
      rw.add_node(std::move(gemm));
      ++count;
    }
  }
  return passes::finish_pass(in, rw, count, stats);
}

}  // namespace hone
