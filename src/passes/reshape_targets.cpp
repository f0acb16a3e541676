// fold_reshape_targets: a Reshape whose target is computed from the dims of
// tensors (Shape, Gather, Slice, Unsqueeze, Concat, Cast: how exporters write
// `x.view(x.size(0), x.size(1), 12, 64)` for a dynamic batch and sequence)
// gets a constant target instead, by ONNX's own rules for a Reshape target:
// 0 copies the input's dim at that position (allowzero = 0), and one -1 is
// whatever the element count leaves. An entry equal to the input's
// dim at its position (the same static value or the same symbol) becomes 0,
// static entries stay, and at most one entry no rule covers becomes -1.
// Then the shape subgraph is dead, every backend sees a constant target, and
// the dims after the Reshape are known symbolically to the next one.
#include <optional>
#include <string>
#include <vector>

#include "core/log.h"
#include "hone/passes.h"
#include "ops/attrs.h"
#include "ops/slice.h"
#include "passes/rewrite.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

using passes::constant_of;

/// One entry of a computed i64 list: a static number, or a dim known only by
/// its symbol.
using Entries = std::vector<Dim>;

class Resolver {
 public:
  explicit Resolver(const Graph& g) : g_(g), uses_(g) {}

  /// The entries of the 0-D or 1-D i64 value `v`, when every one is static or
  /// a symbolic dim of some tensor; nothing otherwise.
  std::optional<Entries> entries(ValueId v, int depth = 0) const {
    if (v < 0 || depth > 16) return std::nullopt;
    if (const Tensor* t = constant_of(g_, v)) return constant_entries(*t);
    const Node* n = uses_.producer(v);
    if (n == nullptr || !(n->domain.empty() || n->domain == "ai.onnx") || n->inputs.empty() ||
        n->outputs.size() != 1)
      return std::nullopt;
    const std::string& op = n->op_type;
    if (op == "Shape") return shape_entries(*n);
    if (op == "Cast") {
      // To i64 (7) or i32 (6) only: the entries are integers either way.
      if (const int64_t to = ops::cast_to(*n); to != 7 && to != 6) return std::nullopt;
      return entries(n->inputs[0], depth + 1);
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
      // A scalar made a 1-element list, or the reverse: the entries are the same.
      auto e = entries(n->inputs[0], depth + 1);
      if (!e || e->size() != 1) return std::nullopt;
      return e;
    }
    if (op == "Concat") {
      if (const int64_t axis = ops::axis_attr(*n); axis != 0 && axis != -1) return std::nullopt;
      Entries all;
      for (ValueId in : n->inputs) {
        auto e = entries(in, depth + 1);
        if (!e) return std::nullopt;
        all.insert(all.end(), e->begin(), e->end());
      }
      return all;
    }
    if (op == "Slice" && n->inputs.size() >= 3) {
      // Constant starts, ends (axes, steps) over the list: torch's flatten(2)
      // is Reshape(x, Concat(Slice(Shape(x), [0], [2]), [-1])).
      auto src = entries(n->inputs[0], depth + 1);
      std::vector<std::vector<int64_t>> lists;
      for (size_t k = 1; k < n->inputs.size(); ++k) {
        const Tensor* t = n->inputs[k] < 0 ? nullptr : constant_of(g_, n->inputs[k]);
        if (t == nullptr || t->rank() > 1) return std::nullopt;
        if (t->dtype() != DType::kI64 && t->dtype() != DType::kI32) return std::nullopt;
        std::vector<int64_t> l;
        for (int64_t i = 0; i < t->numel(); ++i) l.push_back(tensor_element_as_int64(*t, i));
        lists.push_back(std::move(l));
      }
      if (!src) return std::nullopt;
      const auto w = ops::slice_window({static_cast<int64_t>(src->size())}, lists[0], lists[1],
                                       lists.size() > 2 ? &lists[2] : nullptr,
                                       lists.size() > 3 ? &lists[3] : nullptr);
      if (!w) return std::nullopt;
      Entries out;
      for (int64_t k = 0; k < w->out[0]; ++k)
        out.push_back((*src)[static_cast<size_t>(w->base + k * w->strides[0])]);
      return out;
    }
    if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && n->inputs.size() == 2)
      return arithmetic(op, n->inputs[0], n->inputs[1], depth);
    if (op == "Gather" && n->inputs.size() == 2 && ops::axis_attr(*n) == 0) {
      auto src = entries(n->inputs[0], depth + 1);
      const Tensor* idx = constant_of(g_, n->inputs[1]);
      if (!src || idx == nullptr || idx->rank() > 1) return std::nullopt;
      if (idx->dtype() != DType::kI64 && idx->dtype() != DType::kI32) return std::nullopt;
      Entries out;
      const auto r = static_cast<int64_t>(src->size());
      for (int64_t i = 0; i < idx->numel(); ++i) {
        int64_t k = tensor_element_as_int64(*idx, i);
        if (k < 0) k += r;
        if (k < 0 || k >= r) return std::nullopt;
        out.push_back((*src)[static_cast<size_t>(k)]);
      }
      return out;
    }
    return std::nullopt;
  }

 private:
  /// Element-wise integer arithmetic of two lists (one may have one entry):
  /// static entries are computed, the rest unknown (ONNX's -1 can stand for
  /// one such entry: `x.view(b * heads, seq, d)`).
  std::optional<Entries> arithmetic(const std::string& op, ValueId a, ValueId b, int depth) const {
    auto x = entries(a, depth + 1), y = entries(b, depth + 1);
    if (!x || !y || (x->size() != y->size() && x->size() != 1 && y->size() != 1))
      return std::nullopt;
    Entries out;
    for (size_t i = 0; i < std::max(x->size(), y->size()); ++i) {
      const Dim& p = (*x)[x->size() == 1 ? 0 : i];
      const Dim& q = (*y)[y->size() == 1 ? 0 : i];
      if (!p.is_static() || !q.is_static()) {
        out.push_back(Dim::unknown());
        continue;
      }
      const int64_t u = p.value(), v = q.value();
      if (op == "Div" && v == 0) return std::nullopt;
      const int64_t r = op == "Add" ? u + v : op == "Sub" ? u - v : op == "Mul" ? u * v : u / v;
      if (r < 0) return std::nullopt;  // a Dim holds no negative number (-1 would read as one)
      out.emplace_back(r);
    }
    return out;
  }

  static std::optional<Entries> constant_entries(const Tensor& t) {
    if (t.rank() > 1 || (t.dtype() != DType::kI64 && t.dtype() != DType::kI32)) return std::nullopt;
    Entries out;
    for (int64_t i = 0; i < t.numel(); ++i) out.emplace_back(tensor_element_as_int64(t, i));
    return out;
  }

  std::optional<Entries> shape_entries(const Node& shape_node) const {
    const Value& x = g_.value(shape_node.inputs[0]);
    if (!x.shape) return std::nullopt;
    const auto [b, e] = ops::shape_range(shape_node, static_cast<int64_t>(x.shape->rank()));
    Entries out;
    for (int64_t i = b; i < e; ++i) {
      const Dim& d = (*x.shape)[static_cast<size_t>(i)];
      if (d.is_unknown()) return std::nullopt;
      out.push_back(d);
    }
    return out;
  }

  const Graph& g_;
  passes::Uses uses_;
};

/// A constant target equivalent to `entries` for an input of dims `in`.
struct Target {
  std::vector<int64_t> dims;
  bool copies = false;  // some 0 copies the input's dim (it needs allowzero = 0)
};

/// The constant target equivalent to `entries` for an input of dims `in`;
/// nothing when two or more entries are neither static nor the input's dim at
/// their position. Under allowzero = 1 (the dynamo exporter writes it on every
/// Reshape) a static 0 is a dim of 0, so a target that also copies a dim
/// cannot be written as a constant: nothing then too.
std::optional<Target> constant_target(const Entries& entries, const Shape& in, bool allowzero) {
  Target out;
  int inferred = 0;
  bool zero = false;
  for (const Dim& d : entries) {
    if (d.is_static() && d.value() == -1) ++inferred;
    if (d.is_static() && d.value() == 0) zero = true;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const Dim& d = entries[i];
    if (d.is_static()) {
      out.dims.push_back(d.value());
    } else if (d.is_symbolic() && i < in.rank() && in[i] == d) {
      out.dims.push_back(0);
      out.copies = true;
    } else {
      if (++inferred > 1) return std::nullopt;
      out.dims.push_back(-1);
    }
  }
  if (allowzero && zero && out.copies) return std::nullopt;
  return out;
}

}  // namespace

Result<Graph> fold_reshape_targets(const Graph& in, PassStats* stats) {
  Graph g = in;
  passes::propagate_shapes(g);
  const Resolver resolve(g);
  passes::Rewriter rw(g);
  int count = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.op_type != "Reshape" || !n.domain.empty() || n.inputs.size() != 2 || n.inputs[0] < 0 ||
        n.inputs[1] < 0 || n.outputs.size() != 1)
      continue;
    if (constant_of(g, n.inputs[1]) != nullptr) continue;
    const Value& x = g.value(n.inputs[0]);
    if (!x.shape) continue;
    const auto e = resolve.entries(n.inputs[1]);
    if (!e) {
      HONE_LOG_DEBUG(
          "fold_reshape_targets: {} keeps its computed target: not all of it is dims "
          "and constants",
          n.describe());
      continue;
    }
    const bool allowzero = ops::reshape_allowzero(n);
    const auto target = constant_target(*e, *x.shape, allowzero);
    if (!target) {
      HONE_LOG_DEBUG(
          "fold_reshape_targets: {} keeps its computed target {}: its input is {}, "
          "two entries differ from it, or allowzero holds a 0 beside a copied dim",
          n.describe(), Shape(*e).to_string(), x.shape->to_string());
      continue;
    }
    Node r = n;
    // A copied dim is a 0 under allowzero = 0; where allowzero was 1 the
    // target has no other 0 (constant_target), so the meaning is the same.
    if (target->copies) r.attrs.erase("allowzero");
    r.inputs[1] = rw.add_constant(
        n.name + "_shape",
        Tensor::from<int64_t>({static_cast<int64_t>(target->dims.size())}, target->dims));
    rw.remove(static_cast<NodeId>(i));
    rw.add_node(std::move(r));
    ++count;
  }
  if (count == 0) return in;
  HONE_TRY(Graph out, rw.finish());
  if (stats) stats->rewritten += count;
  return out;
}

}  // namespace hone
