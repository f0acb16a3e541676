// lower_tile: Tile by constant repeats becomes the copies every backend runs.
// Where each repeated axis has size 1 (`x[..., -1:].repeat(1, 1, 8)`, a
// class token repeated over the batch) it is one Expand to the repeats; where
// a repeated axis has a larger known size d, the axis is split into [1, d]
// by a Reshape, broadcast to [r, d] by the Expand and merged back to r * d
// by a second Reshape (row-major, so the copies follow one another as Tile's
// do). A symbolic axis that is not repeated is copied by 0 in the targets,
// or by -1 (once) where a split axis comes before it.
// Left alone, with the reason logged: repeats that are not constant, an
// unknown rank, a repeated axis whose size is not known, a repeat of 0.
#include <string>
#include <vector>

#include "hone/passes.h"
#include "passes/rewrite.h"

namespace hone {
namespace {

using passes::constant_of;

/// The Reshape targets (empty when none is needed) and the Expand shape for
/// Tile of dims `x` by `reps`.
struct TilePlan {
  std::vector<int64_t> split, expand, merge;
};

/// The plan for `n`, or why not.
std::string plan_of(const Graph& g, const Node& n, TilePlan* p) {
  if (n.inputs.size() != 2 || n.outputs.empty()) return "it has not two inputs and an output";
  const Value& x = g.value(n.inputs[0]);
  if (!x.shape) return "its input's rank is not known";
  const Tensor* r = constant_of(g, n.inputs[1]);
  if (r == nullptr) return "its repeats are not constant";
  const Shape& s = *x.shape;
  if (r->numel() != static_cast<int64_t>(s.rank()))
    return "its repeats have " + std::to_string(r->numel()) + " entries for an input of rank " +
           std::to_string(s.rank());
  bool split_before = false;
  int inferred = 0;
  for (size_t i = 0; i < s.rank(); ++i) {
    const int64_t rep = tensor_element_as_int64(*r, static_cast<int64_t>(i));
    if (rep < 1)
      return "axis " + std::to_string(i) + " is repeated " + std::to_string(rep) + " times";
    const bool known = s[i].is_static();
    if (rep > 1 && !known)
      return "axis " + std::to_string(i) + " is repeated and its size " + s[i].to_string() +
             " is not a number";
    const int64_t d = known ? s[i].value() : 0;
    if (rep > 1 && d != 1) {  // split into [1, d], broadcast to [rep, d]
      p->split.insert(p->split.end(), {1, d});
      p->expand.insert(p->expand.end(), {rep, 1});
      p->merge.push_back(rep * d);
      split_before = true;
      continue;
    }
    // Not split: d (or rep where d is 1), a symbolic dim copied by 0 at the
    // same position or, past a split axis, by the one -1.
    int64_t e = known ? d * rep : 0;
    if (!known && split_before) {
      if (++inferred > 1) return "two symbolic dims follow a repeated axis";
      e = -1;
    }
    p->split.push_back(known ? d : e);
    p->expand.push_back(rep);
    p->merge.push_back(e);
  }
  if (p->split.size() == s.rank()) p->split.clear(), p->merge.clear();  // no axis split
  return {};
}

}  // namespace

Result<Graph> lower_tile(const Graph& in, PassStats* stats) {
  auto match = [](const Node& n) { return n.op_type == "Tile" && n.domain.empty(); };
  auto lower = [](const Graph& g, passes::Rewriter& rw, NodeId id) -> std::string {
    const Node& n = g.node(id);
    TilePlan p;
    if (std::string why = plan_of(g, n, &p); !why.empty()) return why;
    const DType dtype = g.value(n.inputs[0]).dtype;
    auto add = [&](const std::string& op, ValueId x, const std::vector<int64_t>& shape,
                   ValueId out) {
      if (out == kNoValue) out = rw.new_value(n.name + "_" + op, dtype);
      const ValueId c =
          rw.add_constant(n.name + "_" + op + "_shape",
                          Tensor::from<int64_t>({static_cast<int64_t>(shape.size())}, shape));
      Node m;
      m.name = rw.node_name(n.name + "_" + op);
      m.op_type = op;
      m.inputs = {x, c};
      m.outputs = {out};
      rw.add_node(std::move(m));
      return out;
    };
    if (p.split.empty()) {
      add("Expand", n.inputs[0], p.expand, n.outputs[0]);
    } else {
      const ValueId split = add("Reshape", n.inputs[0], p.split, kNoValue);
      const ValueId wide = add("Expand", split, p.expand, kNoValue);
      add("Reshape", wide, p.merge, n.outputs[0]);
    }
    return {};
  };
  return passes::rewrite_nodes(in, stats, "lower_tile", match, lower);
}

}  // namespace hone
