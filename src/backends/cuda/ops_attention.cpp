// Attention as one unit: the nodes of softmax(Q·Kᵀ·scale + mask)·V that
// find_attention() recognises, widened to the scalar Muls an exporter puts on
// Q and Kᵀ (torch's SDPA export scales both by sqrt(scale)) and the Transpose
// that makes Kᵀ. The unit has candidates, timed per shape at plan time
// (attention_select=time), the fastest kept:
//   - fused kernels (attention_kernels.h): f32 SIMT, and under bf16/fp16 the
//     tensor-core one; each accepts only some problems (head dims 32/64[/128],
//     equal K and V head dims, at most 4 batch dims);
//   - the unfused path: the member nodes' own units (transposes, scale
//     chains, batched GEMMs, softmax) run in sequence, intermediates in the
//     workspace; it accepts every problem the nodes accept.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "backends/common/host_eval.h"
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/op.h"
#include "backends/cuda/op_timer.h"
#include "core/log.h"
#include "hone/passes.h"

namespace hone::cuda {
namespace {

size_t round256(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

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
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty()) {
    if (!x.shape || x.shape->rank() != 2) return false;
    return true;  // rank 2, default perm reverses: a swap
  }
  const size_t r = perm.size();
  if (r < 2) return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return perm[r - 2] == static_cast<int64_t>(r - 1) && perm[r - 1] == static_cast<int64_t>(r - 2);
}

struct Sub {
  std::unique_ptr<Op> op;
  std::vector<int> in;  // per input: index into the unit's inputs, or -1 - (earlier sub)
};

class AttentionOp final : public Op {
 public:
  AttentionOp(AttentionSpec spec, std::vector<Sub> subs, std::vector<int> io, ConvSettings s,
              std::string label)
      : spec_(std::move(spec)),
        subs_(std::move(subs)),
        io_(std::move(io)),
        s_(std::move(s)),
        label_(std::move(label)) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    HONE_TRY(OpPlan unfused, plan_unfused(in, env));
    if (s_.attention_select == AttentionSelect::kUnfused) return unfused;
    auto fused = plan_fused(in, env);
    if (!fused) {
      HONE_LOG_DEBUG("cuda: {}: unfused ({})", label_, fused.error().message());
      return unfused;
    }
    std::vector<OpPlan> cands = std::move(*fused);
    if (s_.attention_select == AttentionSelect::kFused) return std::move(cands.front());
    cands.push_back(std::move(unfused));
    return fastest(label_, in, std::move(cands), s_.tf32 ? kCublasTf32Math : kCublasDefaultMath,
                   s_.dnn);
  }

 private:
  /// The member nodes' own plans in sequence.
  Result<OpPlan> plan_unfused(const std::vector<dims_t>& in, const PlanEnv& env) const {
    struct Step {
      OpPlan p;
      std::vector<int> in;
      int64_t view_of = -2;  // -2: own buffer; else the Sub::in code its output views
      size_t view_offset = 0, offset = 0;
    };
    std::vector<Step> steps(subs_.size());
    std::vector<dims_t> made(subs_.size());
    size_t total = 0, ws = 0;
    std::string names;
    for (size_t i = 0; i < subs_.size(); ++i) {
      std::vector<dims_t> dims;
      for (int code : subs_[i].in)
        dims.push_back(code >= 0 ? in[static_cast<size_t>(code)]
                                 : made[static_cast<size_t>(-1 - code)]);
      HONE_TRY(OpPlan p, subs_[i].op->plan(dims, env));
      if (p.outputs.size() != 1 || std::any_of(p.host.begin(), p.host.end(),
                                               [](const auto& h) { return h != nullptr; }))
        return fail(ErrorCode::kInternal, label_ + ": a member makes other than one device value");
      made[i] = p.outputs[0];
      Step& st = steps[i];
      st.in = subs_[i].in;
      if (!p.alias.empty() && p.alias[0] >= 0) {
        st.view_of = subs_[i].in[static_cast<size_t>(p.alias[0])];
        st.view_offset =
            (p.alias_offset.empty() ? 0 : static_cast<size_t>(p.alias_offset[0])) * sizeof(float);
      } else if (i + 1 < subs_.size()) {
        st.offset = total;
        total += round256(static_cast<size_t>(numel_of(p.outputs[0])) * sizeof(float));
      }
      ws = std::max(ws, p.workspace_bytes);
      if (p.run) names += (names.empty() ? "" : ",") + p.kernel;
      st.p = std::move(p);
    }
    if (steps.back().view_of != -2)
      return fail(ErrorCode::kInternal, label_ + ": the last member is a view");
    OpPlan out;
    out.outputs = {made.back()};
    out.workspace_bytes = total + ws;
    out.kernel = "attention.unfused[" + names + "]";
    auto shared = std::make_shared<std::vector<Step>>(std::move(steps));
    out.run = [shared, total](const ExecCtx& c, const Bind& b) -> Result<void> {
      const std::vector<Step>& st = *shared;
      std::vector<CUdeviceptr> ptr(st.size());
      auto at = [&](int code) {
        return code >= 0 ? b.in[static_cast<size_t>(code)] : ptr[static_cast<size_t>(-1 - code)];
      };
      for (size_t i = 0; i < st.size(); ++i) {
        if (st[i].view_of != -2)
          ptr[i] = at(static_cast<int>(st[i].view_of)) + st[i].view_offset;
        else
          ptr[i] = i + 1 < st.size() ? b.workspace + st[i].offset : b.out[0];
        if (!st[i].p.run) continue;
        Bind sb;
        for (int code : st[i].in) {
          sb.in.push_back(at(code));
          sb.half.push_back(code >= 0 ? built_half(b, static_cast<size_t>(code)) : 0);
        }
        sb.out = {ptr[i]};
        sb.workspace = b.workspace + total;
        HONE_CHECK_OK(st[i].p.run(c, sb));
      }
      return {};
    };
    return out;
  }

  /// The fused kernels that accept these shapes, best guess first.
  Result<std::vector<OpPlan>> plan_fused(const std::vector<dims_t>& in,
                                         const PlanEnv& env) const {
    auto unsupported = [&](const std::string& why) {
      return fail(ErrorCode::kUnsupported, "fused attention: " + why);
    };
    const dims_t& q = in[static_cast<size_t>(iq())];
    const dims_t& k = in[static_cast<size_t>(ik())];
    const dims_t& v = in[static_cast<size_t>(iv())];
    if (q.size() < 2 || k.size() < 2 || v.size() < 2) return unsupported("an operand below rank 2");
    const int64_t D = q.back(), Sq = q[q.size() - 2];
    const int64_t Dk = spec_.k_transposed ? k[k.size() - 2] : k.back();
    const int64_t Sk = spec_.k_transposed ? k.back() : k[k.size() - 2];
    if (Dk != D || v[v.size() - 2] != Sk)
      return fail(ErrorCode::kInvalidArgument, "attention: Q " + shape_to_string(q) + ", K " +
                                                   shape_to_string(k) + ", V " +
                                                   shape_to_string(v) + " do not agree");
    if (v.back() != D) return unsupported("V's head dim differs from Q's");
    if (D != 32 && D != 64 && D != 128) return unsupported("head dim " + std::to_string(D));
    HONE_TRY(const Driver* drv, Driver::get());
    if (drv->cc_major() < 8) return unsupported("mma.sync bf16/f16 needs sm_80 or newer");
    if (auto m = attention_module(*drv); !m)
      return unsupported("its kernels do not compile here: " + m.error().message());
    const dims_t qb(q.begin(), q.end() - 2), kb(k.begin(), k.end() - 2), vb(v.begin(), v.end() - 2);
    HONE_TRY(dims_t ob, ops::broadcast_shapes({qb, kb, vb}));
    if (ob != qb) return unsupported("Q broadcasts along a batch dim");
    if (ob.size() > static_cast<size_t>(kAttnMaxBatch))
      return unsupported(std::to_string(ob.size()) + " batch dims");
    const int64_t nbatch = numel_of(ob), tiles = (Sq + kAttnRows - 1) / kAttnRows;
    if (!fits_int({nbatch, Sq, Sk}) || tiles > 65535) return unsupported("too large");
    double scale = spec_.scale;
    for (ValueId sv : spec_.scale_values) {
      const Tensor* t = env.value(sv);
      if (t == nullptr || t->dtype() != DType::kF32 || t->numel() != 1)
        return unsupported("a scale that is not one f32 value known at plan time");
      scale *= static_cast<double>(t->data<float>()[0]);
    }
    AttnArgs a;
    a.nb = static_cast<int32_t>(ob.size());
    a.len_q = static_cast<int32_t>(Sq);
    a.len_k = static_cast<int32_t>(Sk);
    a.scale = static_cast<float>(scale);
    auto batch_strides = [&](const dims_t& x, int64_t rows, int64_t cols, int64_t* st,
                             int64_t* r = nullptr, int64_t* c = nullptr) -> Result<void> {
      dims_t target = ob;
      target.push_back(rows);
      target.push_back(cols);
      HONE_TRY(dims_t bc, ops::broadcast_shapes({x, target}));
      if (bc != target)
        return fail(ErrorCode::kInvalidArgument,
                    "attention: " + shape_to_string(x) + " does not broadcast to " +
                        shape_to_string(target));
      const dims_t s = broadcast_strides(x, target);
      for (size_t i = 0; i < ob.size(); ++i) st[i] = s[i];
      if (r) *r = s[ob.size()];
      if (c) *c = s[ob.size() + 1];
      return {};
    };
    for (size_t i = 0; i < ob.size(); ++i) a.bdims[i] = ob[i];
    HONE_CHECK_OK(batch_strides(q, Sq, D, a.sq));
    if (spec_.k_transposed) {
      HONE_CHECK_OK(batch_strides(k, D, Sk, a.sk, &a.k_col, &a.k_row));
    } else {
      HONE_CHECK_OK(batch_strides(k, Sk, D, a.sk, &a.k_row, &a.k_col));
    }
    HONE_CHECK_OK(batch_strides(v, Sk, D, a.sv));
    if (im() >= 0) {
      a.has_mask = 1;
      HONE_CHECK_OK(
          batch_strides(in[static_cast<size_t>(im())], Sq, Sk, a.sm, &a.mask_r, &a.mask_c));
    }
    dims_t out = ob;
    out.push_back(Sq);
    out.push_back(D);
    std::vector<OpPlan> cands;
    auto add = [&](std::string kernel, std::string fn, unsigned threads) {
      OpPlan p;
      p.outputs = {out};
      p.kernel = std::move(kernel);
      const int q_at = iq(), k_at = ik(), v_at = iv(), m_at = im();
      const auto gx = static_cast<unsigned>(nbatch), gy = static_cast<unsigned>(tiles);
      p.run = [a, fn, threads, q_at, k_at, v_at, m_at, gx, gy](const ExecCtx& c,
                                                               const Bind& b) -> Result<void> {
        HONE_TRY(const Module* m, attention_module(c.d));
        HONE_TRY(CUfunction f, m->function(fn));
        AttnArgs x = a;
        x.q = b.in[static_cast<size_t>(q_at)];
        x.k = b.in[static_cast<size_t>(k_at)];
        x.v = b.in[static_cast<size_t>(v_at)];
        x.mask = m_at >= 0 ? b.in[static_cast<size_t>(m_at)] : 0;
        x.o = b.out[0];
        return launch_grid(c.d, f, c.stream, gx, gy, 1, threads, 1, {&x});
      };
      cands.push_back(std::move(p));
    };
    const std::string d = std::to_string(D);
    if (s_.gemm_half != 0) {
      const bool bf16 = s_.gemm_half == kCudaR16BF;
      add(std::string("attention.") + (bf16 ? "bf16" : "f16") + ".cuda.fused_mma",
          "hone_attn_mma_" + d + (bf16 ? "_bf16" : "_f16"), 128);
    }
    if (D <= 64) add("attention.f32.cuda.fused_simt", "hone_attn_simt_" + d, 64);
    if (cands.empty()) return unsupported("head dim " + d + " has no f32 kernel");
    return cands;
  }

  int iq() const { return io_[0]; }
  int ik() const { return io_[1]; }
  int iv() const { return io_[2]; }
  int im() const { return io_[3]; }

  AttentionSpec spec_;
  std::vector<Sub> subs_;
  std::vector<int> io_;  // unit-input indices of q, k, v, mask (-1: none)
  ConvSettings s_;
  std::string label_;
};

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
    sp.q = q;
    sp.k = k;
    sp.v = g.node(m.av).inputs[1];
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

Result<Unit> create_attention(BlockInfo& b, const Node& first, std::vector<NodeId>* absorbed) {
  const Graph& g = b.g;
  const NodeId first_id = b.node_id(first);
  const AttentionSpec& sp = b.attention[static_cast<size_t>(b.attention_of[static_cast<size_t>(first_id)])];
  HONE_TRY(std::vector<NodeId> order, g.topological_order());
  std::vector<NodeId> members;
  for (NodeId id : order)
    if (std::find(sp.members.begin(), sp.members.end(), id) != sp.members.end())
      members.push_back(id);
  Unit u;
  std::vector<Sub> subs;
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
      return fail(ErrorCode::kInternal, "attention member " + g.node(id).describe() +
                                            " did not make a one-node unit");
    }
    Sub s;
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
    if (id != first_id) absorbed->push_back(id);
  }
  b.inside_attention = false;
  // Where the fused kernels find q, k, v and the mask among the unit's inputs.
  auto index_of = [&](ValueId v) -> Result<int> {
    if (v < 0) return -1;
    auto at = std::find(u.inputs.begin(), u.inputs.end(), v);
    if (at == u.inputs.end())
      return fail(ErrorCode::kInternal, "attention operand '" + g.value(v).name +
                                            "' is not read by its members");
    return static_cast<int>(at - u.inputs.begin());
  };
  std::vector<int> io;
  for (ValueId v : {sp.q, sp.k, sp.v, sp.mask}) {
    HONE_TRY(int i, index_of(v));
    io.push_back(i);
  }
  u.outputs = {g.node(sp.av).outputs[0]};
  u.label = g.node(sp.av).describe() + " attention of " + std::to_string(members.size()) + " nodes";
  u.op = std::make_unique<AttentionOp>(sp, std::move(subs), std::move(io), b.conv, u.label);
  return u;
}

}  // namespace hone::cuda
