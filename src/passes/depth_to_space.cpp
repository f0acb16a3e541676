// lower_depth_to_space: DepthToSpace (a super-resolution net's PixelShuffle,
// in DCR or CRD order) and SpaceToDepth become Reshape, Transpose, Reshape,
// which every backend runs, where the input's channels and spatial dims are
// known numbers (the batch may be symbolic: the targets copy it with 0), by
// ops::depth_space_layout's split, permutation and output dims.
// Left alone, with the reason logged: a dim that is not a number, a block size
// that does not divide, an unknown mode.
#include <string>
#include <vector>

#include "hone/passes.h"
#include "ops/attrs.h"
#include "ops/depth_space.h"
#include "passes/rewrite.h"

namespace hone {
namespace {

/// The three steps of `n` (the batch copied by 0 in both targets), or why not.
std::string layout_of(const Graph& g, const Node& n, ops::DepthSpaceLayout* l) {
  const Value& x = g.value(n.inputs[0]);
  if (!x.shape || x.shape->rank() != 4) return "the input's rank is not known to be 4";
  for (size_t d = 1; d < 4; ++d)
    if (!(*x.shape)[d].is_static()) return "dim " + std::to_string(d) + " is not a number";
  const auto a = ops::depth_space_attrs(n);
  if (!a) return a.error().message();
  // 1 stands for the batch, which the targets copy with 0.
  const std::vector<int64_t> dims{1, (*x.shape)[1].value(), (*x.shape)[2].value(),
                                  (*x.shape)[3].value()};
  auto got = ops::depth_space_layout(n.op_type, *a, dims);
  if (!got) return got.error().message();
  *l = *std::move(got);
  l->split[0] = 0;
  l->out[0] = 0;
  return {};
}

}  // namespace

Result<Graph> lower_depth_to_space(const Graph& in, PassStats* stats) {
  auto match = [](const Node& n) {
    return (n.op_type == "DepthToSpace" || n.op_type == "SpaceToDepth") && n.domain.empty() &&
           !n.inputs.empty() && !n.outputs.empty();
  };
  auto lower = [](const Graph& g, passes::Rewriter& rw, NodeId id) -> std::string {
    const Node& n = g.node(id);
    ops::DepthSpaceLayout p;
    if (std::string why = layout_of(g, n, &p); !why.empty()) return why;
    const DType dtype = g.value(n.inputs[0]).dtype;
    auto add = [&](const std::string& op, std::vector<ValueId> ins,
                   std::map<std::string, Attribute> attrs, ValueId out) {
      if (out == kNoValue) out = rw.new_value(n.name + "_" + op, dtype);
      Node m;
      m.name = rw.node_name(n.name + "_" + op);
      m.op_type = op;
      m.inputs = std::move(ins);
      m.outputs = {out};
      m.attrs = std::move(attrs);
      rw.add_node(std::move(m));
      return out;
    };
    auto target = [&](const std::vector<int64_t>& t) {
      return rw.add_constant(n.name + "_shape",
                             Tensor::from<int64_t>({static_cast<int64_t>(t.size())}, t));
    };
    const ValueId split = add("Reshape", {n.inputs[0], target(p.split)}, {}, kNoValue);
    const ValueId moved = add("Transpose", {split}, {{"perm", p.perm}}, kNoValue);
    add("Reshape", {moved, target(p.out)}, {}, n.outputs[0]);
    return {};
  };
  return passes::rewrite_nodes(in, stats, "lower_depth_to_space", match, lower);
}

}  // namespace hone
