// lower_depth_to_space: DepthToSpace (a super-resolution net's PixelShuffle,
// in DCR or CRD order) and SpaceToDepth become Reshape, Transpose, Reshape,
// which every backend runs, where the input's channels and spatial dims are
// known numbers (the batch may be symbolic: the targets copy it with 0):
//   DCR: [N, bs, bs, C', H, W] -> perm (0, 3, 4, 1, 5, 2) -> [N, C', H*bs, W*bs]
//   CRD: [N, C', bs, bs, H, W] -> perm (0, 1, 4, 2, 5, 3) -> [N, C', H*bs, W*bs]
//   SpaceToDepth: [N, C, H', bs, W', bs] -> perm (0, 3, 5, 1, 2, 4) -> [N, C*bs*bs, H', W']
// Left alone, with the reason logged: a dim that is not a number, a block size
// that does not divide, an unknown mode.
#include <string>
#include <vector>

#include "core/log.h"
#include "hone/passes.h"
#include "ops/attrs.h"
#include "passes/rewrite.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

struct Plan {
  std::vector<int64_t> split, perm, out;
};

/// The three steps of `n`, or why not.
std::string plan_of(const Graph& g, const Node& n, Plan* p) {
  const Value& x = g.value(n.inputs[0]);
  if (!x.shape || x.shape->rank() != 4) return "the input's rank is not known to be 4";
  for (size_t d = 1; d < 4; ++d)
    if (!(*x.shape)[d].is_static()) return "dim " + std::to_string(d) + " is not a number";
  const auto a = ops::depth_space_attrs(n);
  if (!a) return a.error().message();
  const int64_t bs = a->blocksize;
  const int64_t c = (*x.shape)[1].value(), h = (*x.shape)[2].value(), w = (*x.shape)[3].value();
  if (n.op_type == "DepthToSpace") {
    if (c % (bs * bs) != 0) return "channels not divisible by blocksize^2";
    const int64_t c2 = c / (bs * bs);
    if (!a->crd)
      *p = {{0, bs, bs, c2, h, w}, {0, 3, 4, 1, 5, 2}, {0, c2, h * bs, w * bs}};
    else
      *p = {{0, c2, bs, bs, h, w}, {0, 1, 4, 2, 5, 3}, {0, c2, h * bs, w * bs}};
    return {};
  }
  if (h % bs != 0 || w % bs != 0) return "spatial dims not divisible by blocksize";
  *p = {{0, c, h / bs, bs, w / bs, bs}, {0, 3, 5, 1, 2, 4}, {0, c * bs * bs, h / bs, w / bs}};
  return {};
}

}  // namespace

Result<Graph> lower_depth_to_space(const Graph& in, PassStats* stats) {
  bool any = false;
  for (const Node& n : in.nodes())
    any = any || n.op_type == "DepthToSpace" || n.op_type == "SpaceToDepth";
  if (!any) return in;
  Graph g = in;
  passes::propagate_shapes(g);
  passes::Rewriter rw(g);
  int count = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.node(static_cast<NodeId>(i));
    if ((n.op_type != "DepthToSpace" && n.op_type != "SpaceToDepth") || !n.domain.empty() ||
        n.inputs.empty() || n.outputs.empty())
      continue;
    Plan p;
    if (const std::string why = plan_of(g, n, &p); !why.empty()) {
      HONE_LOG_DEBUG("lower_depth_to_space: {} stays: {}", n.describe(), why);
      continue;
    }
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
    rw.remove(static_cast<NodeId>(i));
    ++count;
  }
  return passes::finish_pass(in, rw, count, stats);
}

}  // namespace hone
