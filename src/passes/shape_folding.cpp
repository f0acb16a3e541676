// fold_shapes: Shape/Size/Gather/Slice over statically known dims become
// constants. What is built from them (Unsqueeze, Concat, Cast, arithmetic)
// is then constant and fold_constants finishes the job.
#include <algorithm>

#include "hone/passes.h"
#include "ops/attrs.h"
#include "passes/rewrite.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

using passes::constant_of;
using passes::int_list;

/// The dims a Shape node reports (start/end attributes of opset 15 applied),
/// as optional per entry: nothing where the dim is not static.
std::optional<std::vector<Dim>> shape_entries(const Graph& g, const Node& shape_node) {
  const Value& x = g.value(shape_node.inputs[0]);
  if (!x.shape) return std::nullopt;
  const auto r = static_cast<int64_t>(x.shape->rank());
  const auto [b, e] = ops::shape_range(shape_node, r);
  std::vector<Dim> out;
  for (int64_t i = b; i < e; ++i) out.push_back((*x.shape)[static_cast<size_t>(i)]);
  return out;
}

Tensor i64_tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  return Tensor::from<int64_t>(std::move(shape), values);
}

/// Gather(Shape(x), const indices) with every gathered dim static.
std::optional<Tensor> fold_gather(const Graph& g, const Node& n, const std::vector<Dim>& dims) {
  const Tensor* idx = constant_of(g, n.inputs[1]);
  if (idx == nullptr || ops::axis_attr(n) != 0) return std::nullopt;
  if (idx->dtype() != DType::kI64 && idx->dtype() != DType::kI32) return std::nullopt;
  const auto r = static_cast<int64_t>(dims.size());
  std::vector<int64_t> vals;
  for (int64_t i = 0; i < idx->numel(); ++i) {
    int64_t k = tensor_element_as_int64(*idx, i);
    if (k < 0) k += r;
    if (k < 0 || k >= r || !dims[static_cast<size_t>(k)].is_static()) return std::nullopt;
    vals.push_back(dims[static_cast<size_t>(k)].value());
  }
  return i64_tensor(idx->shape(), vals);
}

/// Slice(Shape(x), starts, ends[, axes=[0]][, steps=[1]]) with every kept dim static.
std::optional<Tensor> fold_slice(const Graph& g, const Node& n, const std::vector<Dim>& dims) {
  if (n.inputs.size() < 3) return std::nullopt;
  auto starts = int_list(g, n, "", 1), ends = int_list(g, n, "", 2);
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
  if (n.inputs.size() > 3 && n.inputs[3] >= 0) {
    auto axes = int_list(g, n, "", 3);
    if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
  }
  if (n.inputs.size() > 4 && n.inputs[4] >= 0) {
    auto steps = int_list(g, n, "", 4);
    if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
  }
  const auto r = static_cast<int64_t>(dims.size());
  auto clampi = [&](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
  const int64_t b = clampi((*starts)[0]), e = std::max(b, clampi((*ends)[0]));
  std::vector<int64_t> vals;
  for (int64_t i = b; i < e; ++i) {
    if (!dims[static_cast<size_t>(i)].is_static()) return std::nullopt;
    vals.push_back(dims[static_cast<size_t>(i)].value());
  }
  return i64_tensor({e - b}, vals);
}

}  // namespace

Result<Graph> fold_shapes(const Graph& in, PassStats* stats) {
  Graph g = in;
  passes::propagate_shapes(g);
  passes::Uses uses(g);
  passes::Rewriter rw(g);
  int count = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (!n.domain.empty() && n.domain != "ai.onnx") continue;
    if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1 || n.outputs[0] < 0) continue;
    const Value& x = g.value(n.inputs[0]);
    if (n.op_type == "Size" && x.shape && x.shape->numel() >= 0) {
      rw.remove(static_cast<NodeId>(i));
      rw.make_constant(n.outputs[0], Tensor::scalar<int64_t>(x.shape->numel()));
      ++count;
      continue;
    }
    if (n.op_type == "Shape") {
      auto dims = shape_entries(g, n);
      if (!dims) continue;
      std::vector<int64_t> vals;
      for (const Dim& d : *dims)
        if (d.is_static()) vals.push_back(d.value());
      if (vals.size() != dims->size()) continue;  // symbolic: its readers may still fold
      rw.remove(static_cast<NodeId>(i));
      rw.make_constant(n.outputs[0], i64_tensor({static_cast<int64_t>(vals.size())}, vals));
      ++count;
      continue;
    }
    if (n.op_type != "Gather" && n.op_type != "Slice") continue;
    const Node* shape_node = uses.producer(n.inputs[0]);
    if (shape_node == nullptr || shape_node->op_type != "Shape" || !shape_node->domain.empty() ||
        shape_node->inputs.empty())
      continue;
    auto dims = shape_entries(g, *shape_node);
    if (!dims) continue;
    auto t = n.op_type == "Gather" ? fold_gather(g, n, *dims) : fold_slice(g, n, *dims);
    if (!t) continue;
    rw.remove(static_cast<NodeId>(i));
    rw.make_constant(n.outputs[0], std::move(*t));
    ++count;
  }
  return passes::finish_pass(in, rw, count, stats, &PassStats::folded);
}

}  // namespace hone
