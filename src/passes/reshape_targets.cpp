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
#include "passes/shape_values.h"

namespace hone {
namespace {

using passes::constant_of;

std::string entries_string(const passes::SymInts& e) {
  std::string s = "[";
  for (size_t i = 0; i < e.size(); ++i) s += (i ? "," : "") + e[i].to_string();
  return s + "]";
}

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
std::optional<Target> constant_target(const passes::SymInts& entries, const Shape& in,
                                      bool allowzero) {
  Target out;
  int inferred = 0;
  bool zero = false;
  for (const ops::SymInt& e : entries) {
    if (e.is_number() && e.number() == -1) ++inferred;
    if (e.is_number() && e.number() == 0) zero = true;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const Dim d = entries[i].dim();
    if (entries[i].is_number()) {
      out.dims.push_back(entries[i].number());
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
  passes::ShapeValues values(g);
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
    const auto e = values.of(n.inputs[1]);
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
          n.describe(), entries_string(*e), x.shape->to_string());
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
  return passes::finish_pass(in, rw, count, stats);
}

}  // namespace hone
