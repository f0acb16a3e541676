// Attention units of the cuda backend: which nodes form one
// (find_attention_units: find_attention()'s match widened to the scalar Muls
// on Q and Kᵀ, the Transpose making Kᵀ, and the views and Transposes that
// split and merge the heads) and the unit made of them (create_attention);
// the op that plans and runs it is in ops_attention.cpp.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "backends/common/host_eval.h"
#include "backends/cuda/attention_op.h"
#include "core/log.h"
#include "hone/passes.h"
#include "ops/attrs.h"

namespace hone::cuda {
namespace {

/// `v` is one f32 value known when a plan is built: a constant, or a host
/// value (its size is checked at plan time).
bool plan_scalar(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  if (val.initializer)
    return val.initializer->dtype() == DType::kF32 && val.initializer->numel() == 1;
  // Its dtype and size are checked again when a plan reads it.
  if ((val.dtype != DType::kF32 && val.dtype != DType::kUndefined) ||
      !host_eval::host_value(g, v, host_eval::Policy::kAnyDtype))
    return false;
  return !val.shape || !val.shape->is_static() || val.shape->numel() == 1;
}

/// A Transpose swapping the last two axes and nothing else.
bool swaps_last_two(const Graph& g, const Node& n) {
  if (n.op_type != "Transpose" || n.inputs.size() != 1 || n.outputs.size() != 1) return false;
  const Value& x = g.value(n.inputs[0]);
  std::vector<int64_t> perm;
  if (x.shape) {
    auto p = ops::transpose_perm(n, static_cast<int64_t>(x.shape->rank()));
    if (!p) return false;
    perm = std::move(*p);
  } else if (n.has_attr("perm")) {
    perm = n.attr_ints("perm");  // the default needs the rank
  } else {
    return false;
  }
  const size_t r = perm.size();
  if (r < 2) return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return perm[r - 2] == static_cast<int64_t>(r - 1) && perm[r - 1] == static_cast<int64_t>(r - 2);
}

}  // namespace

void find_attention_units(BlockInfo& b) {
  const Graph& g = b.g;
  b.attention_of.assign(g.nodes().size(), -1);
  // The only reader of `v`, when `v` is no block output.
  auto sole = [&](ValueId v) {
    const auto i = static_cast<size_t>(v);
    return !b.is_output[i] && b.consumers[i] == 1;
  };
  auto producer = [&](ValueId v) -> const Node* {
    const NodeId p = g.value(v).producer;
    return p >= 0 ? &g.node(p) : nullptr;
  };
  for (const AttentionMatch& m : find_attention(g)) {
    AttentionSpec sp;
    sp.av = m.av;
    sp.scale = m.scale_value;
    sp.members = {m.qk, m.softmax, m.av};
    if (m.scale >= 0) sp.members.push_back(m.scale);
    if (m.mask >= 0) {
      sp.members.push_back(m.mask);
      const Node& add = g.node(m.mask);
      const ValueId scores = m.scale >= 0 ? g.node(m.scale).outputs[0] : g.node(m.qk).outputs[0];
      sp.mask = add.inputs[0] == scores ? add.inputs[1] : add.inputs[0];
      if (g.value(sp.mask).dtype != DType::kF32) continue;
    }
    const Node& qk = g.node(m.qk);
    // A scalar Mul read only by the next member: its factor joins the scale.
    auto absorb_mul = [&](ValueId& v) {
      const Node* p = producer(v);
      if (!p || p->op_type != "Mul" || p->inputs.size() != 2 || !sole(v)) return false;
      for (int side = 0; side < 2; ++side) {
        const ValueId s = p->inputs[static_cast<size_t>(side)];
        const ValueId x = p->inputs[static_cast<size_t>(1 - side)];
        if (s == x || !plan_scalar(g, s)) continue;
        sp.members.push_back(g.value(v).producer);
        sp.scale_values.push_back(s);
        v = x;
        return true;
      }
      return false;
    };
    ValueId q = qk.inputs[0], k = qk.inputs[1];
    absorb_mul(q);
    for (int step = 0; step < 3; ++step) {
      if (absorb_mul(k)) continue;
      const Node* p = producer(k);
      if (sp.k_transposed && p && sole(k) && swaps_last_two(g, *p)) {
        sp.members.push_back(g.value(k).producer);
        sp.k_transposed = false;
        k = p->inputs[0];
        continue;
      }
      break;
    }
    // Views, Transposes and one-index Gathers that only reshuffle an operand
    // are read through (the fused kernels take any strides and an offset): a
    // head split needs no copy.
    // 16 steps: the dynamo exporter's packed-QKV K path is 11 views long (its
    // Kᵀ is Reshape [B·H, S, D], Transpose, Reshape back).
    auto trace = [&](ValueId& x, std::vector<NodeId>& chain) {
      for (int step = 0; step < 16; ++step) {
        const Node* p = producer(x);
        if (!p || b.is_output[static_cast<size_t>(x)] || p->outputs.size() != 1 ||
            p->inputs.empty())
          break;
        const std::string& op = p->op_type;
        if (op != "Transpose" && op != "Reshape" && op != "Squeeze" && op != "Unsqueeze" &&
            op != "Flatten" && !gather_index(g, *p))
          break;
        chain.insert(chain.begin(), g.value(x).producer);
        x = p->inputs[0];
      }
    };
    ValueId v = g.node(m.av).inputs[1];
    trace(q, sp.q_chain);
    trace(k, sp.k_chain);
    trace(v, sp.v_chain);
    // A chain's values are never made: whatever reads one must be in the unit
    // or read only its dims (Shape). Where a reader is neither, that chain
    // starts after the value; a cut can cut the others (they share nodes).
    const std::vector<NodeId> core = sp.members;
    auto in_unit_or_shape = [&](ValueId val, const std::set<NodeId>& mem) {
      if (b.is_output[static_cast<size_t>(val)]) return false;
      for (NodeId r : b.readers(val))
        if (!mem.count(r) && g.node(r).op_type != "Shape") return false;
      return true;
    };
    const std::pair<std::vector<NodeId>*, ValueId*> chains[] = {
        {&sp.q_chain, &q}, {&sp.k_chain, &k}, {&sp.v_chain, &v}};
    for (bool cut = true; cut;) {
      cut = false;
      std::set<NodeId> mem(core.begin(), core.end());
      for (const auto& [chain, src] : chains) mem.insert(chain->begin(), chain->end());
      for (const auto& [chain, src] : chains) {
        for (size_t i = chain->size(); i-- > 0;) {
          const ValueId out = g.node((*chain)[i]).outputs[0];
          if (in_unit_or_shape(out, mem)) continue;
          *src = out;
          chain->erase(chain->begin(), chain->begin() + static_cast<std::ptrdiff_t>(i) + 1);
          cut = true;
          break;
        }
      }
    }
    for (const auto& [chain, src] : chains)
      for (NodeId id : *chain)
        if (std::find(sp.members.begin(), sp.members.end(), id) == sp.members.end())
          sp.members.push_back(id);
    // The output's Transpose (merging the heads back) is written through too.
    const ValueId o = g.node(m.av).outputs[0];
    if (sole(o)) {
      const NodeId c = b.consumer[static_cast<size_t>(o)];
      const Node& t = g.node(c);
      if (t.op_type == "Transpose" && t.outputs.size() == 1) {
        sp.out_transpose = c;
        sp.members.push_back(c);
        // Its Reshape merging the heads: a view of the written output.
        const ValueId to = t.outputs[0];
        if (sole(to)) {
          const NodeId rc = b.consumer[static_cast<size_t>(to)];
          const Node& r = g.node(rc);
          if ((r.op_type == "Reshape" || r.op_type == "Flatten") && r.outputs.size() == 1 &&
              !r.inputs.empty() && r.inputs[0] == to) {
            sp.out_reshape = rc;
            sp.members.push_back(rc);
          }
        }
      }
    }
    sp.q = q;
    sp.k = k;
    sp.v = v;
    // The unit reads q, k, v and the mask from outside: one made by a member
    // (a chain that stopped inside another's shared trunk) is no unit.
    const std::set<NodeId> all(sp.members.begin(), sp.members.end());
    bool inside = false;
    for (ValueId x : {sp.q, sp.k, sp.v, sp.mask})
      inside = inside || (x >= 0 && all.count(g.value(x).producer) != 0);
    if (inside) {
      HONE_LOG_DEBUG("cuda: attention at {} left unfused: an operand is made inside the unit",
                     g.node(m.av).describe());
      continue;
    }
    bool taken = false;
    for (NodeId id : sp.members) taken = taken || b.attention_of[static_cast<size_t>(id)] >= 0;
    if (taken) continue;
    for (NodeId id : sp.members) {
      b.attention_of[static_cast<size_t>(id)] = static_cast<int>(b.attention.size());
      b.used[static_cast<size_t>(id)] = true;  // no chain reaches into the unit
    }
    b.attention.push_back(std::move(sp));
  }
}

bool AttentionSpec::in_chain(NodeId id) const {
  for (const auto* c : {&q_chain, &k_chain, &v_chain})
    if (std::find(c->begin(), c->end(), id) != c->end()) return true;
  return false;
}

namespace {

/// A chain node's own op, planned for its output dims only: the attention
/// unit reads the chain's source in place, and Shape nodes read these dims.
class DimsOnlyOp final : public Op {
 public:
  explicit DimsOnlyOp(std::unique_ptr<Op> op) : op_(std::move(op)) {}
  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    HONE_TRY(OpPlan p, op_->plan(in, env));
    OpPlan out;
    out.outputs = std::move(p.outputs);
    out.kernel = "dims.read_in_place_by_attention";
    out.dims_only = true;
    return out;
  }

 private:
  std::unique_ptr<Op> op_;
};

}  // namespace

Result<Unit> create_dims_only(BlockInfo& b, const Node& n) {
  std::vector<NodeId> none;
  b.inside_attention = true;
  auto u = create_unit(b, n, &none);
  b.inside_attention = false;
  if (!u) return fail(std::move(u).error());
  if (!none.empty() || u->outputs.size() != 1)
    return fail(ErrorCode::kInternal,
                "attention chain node " + n.describe() + " did not make a one-node unit");
  u->op = std::make_unique<DimsOnlyOp>(std::move(u->op));
  return u;
}

Result<Unit> create_attention(BlockInfo& b, const Node& first, std::vector<NodeId>* absorbed) {
  const Graph& g = b.g;
  const NodeId first_id = b.node_id(first);
  const AttentionSpec& sp =
      b.attention[static_cast<size_t>(b.attention_of[static_cast<size_t>(first_id)])];
  HONE_TRY(std::vector<NodeId> order, g.topological_order());
  std::vector<NodeId> members;
  for (NodeId id : order)
    if (std::find(sp.members.begin(), sp.members.end(), id) != sp.members.end())
      members.push_back(id);
  Unit u;
  std::vector<AttentionSub> subs;
  std::map<ValueId, int> made;
  b.inside_attention = true;
  for (NodeId id : members) {
    std::vector<NodeId> none;
    auto sub = create_unit(b, g.node(id), &none);
    if (!sub) {
      b.inside_attention = false;
      return fail(std::move(sub).error());
    }
    if (!none.empty() || sub->outputs.size() != 1) {
      b.inside_attention = false;
      return fail(ErrorCode::kInternal,
                  "attention member " + g.node(id).describe() + " did not make a one-node unit");
    }
    AttentionSub s;
    for (ValueId v : sub->inputs) {
      if (auto it = made.find(v); it != made.end()) {
        s.in.push_back(-1 - it->second);
        continue;
      }
      auto at = std::find(u.inputs.begin(), u.inputs.end(), v);
      if (at == u.inputs.end()) at = u.inputs.insert(u.inputs.end(), v);
      s.in.push_back(static_cast<int>(at - u.inputs.begin()));
    }
    made[sub->outputs[0]] = static_cast<int>(subs.size());
    s.op = std::move(sub->op);
    subs.push_back(std::move(s));
    if (id != first_id && !sp.in_chain(id)) absorbed->push_back(id);
  }
  b.inside_attention = false;
  // Where the fused kernels find q, k, v and the mask among the unit's inputs.
  auto index_of = [&](ValueId v) -> Result<int> {
    if (v < 0) return -1;
    auto at = std::find(u.inputs.begin(), u.inputs.end(), v);
    if (at == u.inputs.end())
      return fail(ErrorCode::kInternal,
                  "attention operand '" + g.value(v).name + "' is not read by its members");
    return static_cast<int>(at - u.inputs.begin());
  };
  std::vector<int> io;
  for (ValueId v : {sp.q, sp.k, sp.v, sp.mask}) {
    HONE_TRY(int i, index_of(v));
    io.push_back(i);
  }
  const NodeId last = sp.out_reshape >= 0     ? sp.out_reshape
                      : sp.out_transpose >= 0 ? sp.out_transpose
                                              : sp.av;
  u.outputs = {g.node(last).outputs[0]};
  u.label = g.node(sp.av).describe() + " attention of " + std::to_string(members.size()) + " nodes";
  u.op = make_attention_op(g, sp, std::move(subs), members, u.inputs, std::move(io), b.settings,
                           u.label);
  return u;
}

}  // namespace hone::cuda
