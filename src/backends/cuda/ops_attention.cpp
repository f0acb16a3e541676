// Attention as one unit: the nodes of softmax(Q·Kᵀ·scale + mask)·V that
// find_attention() recognises, widened to the scalar Muls an exporter puts on
// Q and Kᵀ (torch's SDPA export scales both by sqrt(scale)) and the Transpose
// that makes Kᵀ. The unit has candidates, timed per shape at plan time
// (attention_select=time), the fastest kept:
//   - fused kernels (attention_kernels.h): f32 SIMT, and a tensor-core one
//     (bf16/f16 operands under bf16/fp16, tf32 under tf32, 3xTF32 under
//     strict fp32); each accepts only some problems (head dims 32/64[/128],
//     equal K and V head dims, at most 4 batch dims);
//   - the unfused path: the member nodes' own units (transposes, scale
//     chains, batched GEMMs, softmax) run in sequence, intermediates in the
//     workspace; it accepts every problem the nodes accept.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "backends/common/host_eval.h"
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/op.h"
#include "backends/cuda/op_timer.h"
#include "core/log.h"
#include "hone/passes.h"

namespace hone::cuda {

namespace {

/// The elements of a source seen through views, Transposes and one-index
/// Gathers: each dim is a row-major group of atoms (size, element stride),
/// so a reshape that merges dims no single stride covers (B and H of
/// [S, B, H·D] into B·H) still composes exactly, and the result is strided
/// when every final dim is.
class AtomView {
 public:
  AtomView(const dims_t& dims, const dims_t& st) {
    for (size_t i = 0; i < dims.size(); ++i) {
      dims_.emplace_back();
      if (dims[i] != 1) dims_.back().push_back({dims[i], st[i]});
    }
  }
  dims_t sizes() const {
    dims_t out;
    for (const auto& d : dims_) {
      int64_t n = 1;
      for (const Atom& a : d) n *= a.size;
      out.push_back(n);
    }
    return out;
  }
  int64_t offset() const { return offset_; }
  bool transpose(const std::vector<int64_t>& perm) {
    if (perm.size() != dims_.size()) return false;
    std::vector<std::vector<Atom>> t;
    for (int64_t p : perm) {
      const int64_t q = p < 0 ? p + static_cast<int64_t>(perm.size()) : p;
      if (q < 0 || q >= static_cast<int64_t>(perm.size())) return false;
      t.push_back(dims_[static_cast<size_t>(q)]);
    }
    dims_ = std::move(t);
    return true;
  }
  /// Dim `axis` at `index` (already in range), the dim dropped.
  void select(size_t axis, int64_t index) {
    const auto& d = dims_[axis];
    for (size_t j = d.size(); j-- > 0;) {
      offset_ += (index % d[j].size) * d[j].stride;
      index /= d[j].size;
    }
    dims_.erase(dims_.begin() + static_cast<std::ptrdiff_t>(axis));
  }
  /// The same elements in row-major order as dims `to`; false when an atom
  /// would have to be cut unevenly.
  bool reshape(const dims_t& to) {
    std::vector<Atom> atoms;
    for (const auto& d : dims_) atoms.insert(atoms.end(), d.begin(), d.end());
    if (numel_of(sizes()) != numel_of(to)) return false;
    std::vector<std::vector<Atom>> out;
    size_t next = 0;
    for (int64_t t : to) {
      out.emplace_back();
      int64_t need = t;
      while (need > 1) {
        if (next == atoms.size()) return false;
        Atom& a = atoms[next];
        if (a.size <= need) {
          if (need % a.size != 0) return false;
          out.back().push_back(a);
          need /= a.size;
          ++next;
        } else {
          if (a.size % need != 0) return false;
          // The outer part of the atom goes to this dim, the inner to the next.
          out.back().push_back({need, a.stride * (a.size / need)});
          a.size /= need;
          need = 1;
        }
      }
    }
    if (next != atoms.size()) return false;
    dims_ = std::move(out);
    return true;
  }
  /// Each dim's one stride (0 for a dim of size 1), or nothing when a dim's
  /// atoms do not line up as one.
  std::optional<dims_t> strides() const {
    dims_t out;
    for (const auto& d : dims_) {
      if (d.empty()) {
        out.push_back(0);
        continue;
      }
      for (size_t j = 0; j + 1 < d.size(); ++j)
        if (d[j].stride != d[j + 1].stride * d[j + 1].size) return std::nullopt;
      out.push_back(d.back().stride);
    }
    return out;
  }

 private:
  struct Atom {
    int64_t size, stride;
  };
  std::vector<std::vector<Atom>> dims_;
  int64_t offset_ = 0;
};

}  // namespace

std::optional<dims_t> restride(const dims_t& dims, const dims_t& st, const dims_t& to) {
  if (numel_of(dims) != numel_of(to) || numel_of(dims) == 0) return std::nullopt;
  AtomView v(dims, st);
  if (!v.reshape(to)) return std::nullopt;
  return v.strides();
}

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

struct View {
  dims_t dims, st;
  int64_t offset = 0;  // elements past the source's start (a Gather of one index)
};

/// The scalar index of a Gather that selects one slice (a constant), or nothing.
std::optional<int64_t> gather_index(const Graph& g, const Node& n) {
  if (n.op_type != "Gather" || n.inputs.size() != 2 || n.inputs[1] < 0) return std::nullopt;
  const Value& idx = g.value(n.inputs[1]);
  if (!idx.initializer || idx.initializer->numel() != 1 || !idx.initializer->shape().empty() ||
      (idx.initializer->dtype() != DType::kI64 && idx.initializer->dtype() != DType::kI32))
    return std::nullopt;
  return tensor_element_as_int64(*idx.initializer, 0);
}

struct Sub {
  std::unique_ptr<Op> op;
  std::vector<int> in;  // per input: index into the unit's inputs, or -1 - (earlier sub)
};

class AttentionOp final : public Op {
 public:
  AttentionOp(const Graph& g, AttentionSpec spec, std::vector<Sub> subs,
              std::vector<NodeId> sub_nodes, std::vector<ValueId> inputs, std::vector<int> io,
              BuildSettings s, std::string label)
      : g_(g),
        inputs_(std::move(inputs)),
        spec_(std::move(spec)),
        subs_(std::move(subs)),
        sub_nodes_(std::move(sub_nodes)),
        io_(std::move(io)),
        s_(std::move(s)),
        label_(std::move(label)) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    std::vector<dims_t> made;
    HONE_TRY(OpPlan unfused, plan_unfused(in, env, &made));
    if (s_.attention == AttentionSelect::kUnfused) return unfused;
    auto fused = plan_fused(in, env, made);
    if (!fused) {
      HONE_LOG_DEBUG("cuda: {}: unfused ({})", label_, fused.error().message());
      return unfused;
    }
    std::vector<OpPlan> cands = std::move(*fused);
    if (s_.attention == AttentionSelect::kFused) return std::move(cands.front());
    cands.push_back(std::move(unfused));
    // The fused kernels must match the unfused path on random inputs (with
    // the real scale factors, which they read at plan time) before timing.
    Check check;
    check.reference = static_cast<int>(cands.size()) - 1;
    check.tolerance = check_tolerance(s_.math.half, s_.math.tf32);
    for (ValueId v : inputs_)
      check.fixed.push_back(std::find(spec_.scale_values.begin(), spec_.scale_values.end(), v) !=
                                    spec_.scale_values.end()
                                ? env.value(v)
                                : nullptr);
    return fastest(label_, in, std::move(cands), s_, check);
  }

 private:
  /// The member nodes' own plans in sequence.
  /// `made`: each member's output dims.
  Result<OpPlan> plan_unfused(const std::vector<dims_t>& in, const PlanEnv& env,
                              std::vector<dims_t>* made_out) const {
    struct Step {
      OpPlan p;
      std::vector<int> in;
      // The Sub::in code whose bytes its output views (any value: -2 is the
      // second member), when `view`; else it has its own buffer.
      bool view = false;
      int view_of = 0;
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
      if (p.outputs.size() != 1 ||
          std::any_of(p.host.begin(), p.host.end(), [](const auto& h) { return h != nullptr; }))
        return fail(ErrorCode::kInternal, label_ + ": a member makes other than one device value");
      made[i] = p.outputs[0];
      Step& st = steps[i];
      st.in = subs_[i].in;
      if (!p.alias.empty() && p.alias[0] >= 0) {
        st.view = true;
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
    if (steps.back().view)
      return fail(ErrorCode::kInternal, label_ + ": the last member is a view");
    *made_out = made;
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
        if (st[i].view)
          ptr[i] = at(st[i].view_of) + st[i].view_offset;
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

  /// Dims and element strides of a member chain's result, read in place from
  /// its source (`src` dims, contiguous): Transposes permute the strides,
  /// views re-stride them; nothing when a view cannot be expressed so.
  Result<View> follow(const dims_t& src, const std::vector<NodeId>& chain,
                      const std::vector<dims_t>& made) const {
    AtomView v(src, strides_of(src));
    for (NodeId id : chain) {
      const auto at = std::find(sub_nodes_.begin(), sub_nodes_.end(), id);
      if (at == sub_nodes_.end()) return fail(ErrorCode::kInternal, label_ + ": lost a member");
      const dims_t& out = made[static_cast<size_t>(at - sub_nodes_.begin())];
      const Node& n = g_.node(id);
      const dims_t now = v.sizes();
      if (n.op_type == "Transpose") {
        std::vector<int64_t> perm = n.attr_ints("perm");
        if (perm.empty())
          for (size_t i = now.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
        if (!v.transpose(perm))
          return fail(ErrorCode::kUnsupported, "fused attention: a Transpose's perm");
      } else if (n.op_type == "Gather") {
        const auto index = gather_index(g_, n);
        const auto r = static_cast<int64_t>(now.size());
        int64_t axis = n.attr_int("axis", 0);
        if (axis < 0) axis += r;
        if (!index || axis < 0 || axis >= r)
          return fail(ErrorCode::kUnsupported, "fused attention: " + n.describe());
        const auto a = static_cast<size_t>(axis);
        const int64_t i = *index < 0 ? *index + now[a] : *index;
        if (i < 0 || i >= now[a])
          return fail(ErrorCode::kInvalidArgument,
                      n.describe() + ": index " + std::to_string(*index) + " is out of range");
        v.select(a, i);
      } else if (!v.reshape(out)) {
        return fail(ErrorCode::kUnsupported,
                    "fused attention: " + n.describe() + " is no view of its input");
      }
      if (v.sizes() != out) return fail(ErrorCode::kInternal, label_ + ": a member's dims differ");
    }
    auto st = v.strides();
    if (!st)
      return fail(ErrorCode::kUnsupported,
                  "fused attention: an operand's chain is no strided view of its source");
    return View{v.sizes(), std::move(*st), v.offset()};
  }

  /// The fused kernels that accept these shapes, best guess first.
  Result<std::vector<OpPlan>> plan_fused(const std::vector<dims_t>& in, const PlanEnv& env,
                                         const std::vector<dims_t>& made) const {
    auto unsupported = [&](const std::string& why) {
      return fail(ErrorCode::kUnsupported, "fused attention: " + why);
    };
    HONE_TRY(View q, follow(in[static_cast<size_t>(iq())], spec_.q_chain, made));
    HONE_TRY(View k, follow(in[static_cast<size_t>(ik())], spec_.k_chain, made));
    HONE_TRY(View v, follow(in[static_cast<size_t>(iv())], spec_.v_chain, made));
    if (q.dims.size() < 2 || k.dims.size() < 2 || v.dims.size() < 2)
      return unsupported("an operand below rank 2");
    if (spec_.k_transposed) {  // as K [..., Sk, D]
      std::swap(k.dims[k.dims.size() - 1], k.dims[k.dims.size() - 2]);
      std::swap(k.st[k.st.size() - 1], k.st[k.st.size() - 2]);
    }
    const int64_t D = q.dims.back(), Sq = q.dims[q.dims.size() - 2];
    const int64_t Sk = k.dims[k.dims.size() - 2];
    if (k.dims.back() != D || v.dims[v.dims.size() - 2] != Sk)
      return fail(ErrorCode::kInvalidArgument, "attention: Q " + shape_to_string(q.dims) + ", K " +
                                                   shape_to_string(k.dims) + ", V " +
                                                   shape_to_string(v.dims) + " do not agree");
    if (v.dims.back() != D) return unsupported("V's head dim differs from Q's");
    if (D != 32 && D != 64 && D != 128) return unsupported("head dim " + std::to_string(D));
    HONE_TRY(const Driver* drv, Driver::get());
    if (drv->cc_major() < 8) return unsupported("mma.sync bf16/f16 needs sm_80 or newer");
    if (auto m = attention_module(*drv); !m)
      return unsupported("its kernels do not compile here: " + m.error().message());
    const dims_t qb(q.dims.begin(), q.dims.end() - 2), kb(k.dims.begin(), k.dims.end() - 2),
        vb(v.dims.begin(), v.dims.end() - 2);
    HONE_TRY(dims_t ob, ops::broadcast_shapes({qb, kb, vb}));
    if (ob != qb) return unsupported("Q broadcasts along a batch dim");
    if (ob.size() > static_cast<size_t>(kAttnMaxBatch))
      return unsupported(std::to_string(ob.size()) + " batch dims");
    const int64_t nbatch = numel_of(ob), tiles = (Sq + kAttnRows - 1) / kAttnRows;
    if (!fits_int({nbatch * tiles, Sq, Sk})) return unsupported("too large");
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
    for (size_t i = 0; i < ob.size(); ++i) a.bdims[i] = ob[i];
    // A view's batch strides, right-aligned to ob (0 where it broadcasts).
    auto batch = [&](const View& x, int64_t* st, int64_t* row, int64_t* col) {
      const size_t r = x.dims.size() - 2, off = ob.size() - r;
      for (size_t i = 0; i < r; ++i) st[off + i] = x.dims[i] == 1 ? 0 : x.st[i];
      *row = x.st[r];
      *col = x.st[r + 1];
    };
    batch(q, a.sq, &a.q_row, &a.q_col);
    batch(k, a.sk, &a.k_row, &a.k_col);
    batch(v, a.sv, &a.v_row, &a.v_col);
    if (im() >= 0) {
      const dims_t& md = in[static_cast<size_t>(im())];
      dims_t target = ob;
      target.push_back(Sq);
      target.push_back(Sk);
      HONE_TRY(dims_t bc, ops::broadcast_shapes({md, target}));
      if (bc != target)
        return fail(ErrorCode::kInvalidArgument, "attention: mask " + shape_to_string(md) +
                                                     " does not broadcast to " +
                                                     shape_to_string(target));
      const dims_t st = broadcast_strides(md, target);
      a.has_mask = 1;
      for (size_t i = 0; i < ob.size(); ++i) a.sm[i] = st[i];
      a.mask_r = st[ob.size()];
      a.mask_c = st[ob.size() + 1];
    }
    // O: [ob..., Sq, D] contiguous, or written through the output Transpose.
    dims_t out = ob;
    out.push_back(Sq);
    out.push_back(D);
    View o{out, strides_of(out)};
    if (spec_.out_transpose >= 0) {
      const dims_t& td = made.back();
      std::vector<int64_t> perm = g_.node(spec_.out_transpose).attr_ints("perm");
      if (perm.empty())
        for (size_t i = out.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
      if (perm.size() != out.size()) return unsupported("the output Transpose's perm");
      const dims_t ts = strides_of(td);
      for (size_t j = 0; j < perm.size(); ++j) {
        const int64_t p = perm[j] < 0 ? perm[j] + static_cast<int64_t>(perm.size()) : perm[j];
        if (p < 0 || p >= static_cast<int64_t>(out.size()) || td[j] != out[static_cast<size_t>(p)])
          return unsupported("the output Transpose's perm");
        o.st[static_cast<size_t>(p)] = ts[j];
      }
      out = td;
    }
    for (size_t i = 0; i < ob.size(); ++i) a.so[i] = o.st[i];
    a.o_row = o.st[ob.size()];
    a.o_col = o.st[ob.size() + 1];
    std::vector<OpPlan> cands;
    auto add = [&](std::string kernel, std::string fn, unsigned threads) {
      OpPlan p;
      p.outputs = {out};
      p.kernel = std::move(kernel);
      const int q_at = iq(), k_at = ik(), v_at = iv(), m_at = im();
      const auto qo = static_cast<CUdeviceptr>(q.offset * 4),
                 ko = static_cast<CUdeviceptr>(k.offset * 4),
                 vo = static_cast<CUdeviceptr>(v.offset * 4);
      const auto blocks = static_cast<unsigned>(nbatch * tiles);
      p.run = [a, fn, threads, q_at, k_at, v_at, m_at, blocks, qo, ko, vo](
                  const ExecCtx& c, const Bind& b) -> Result<void> {
        HONE_TRY(const Module* m, attention_module(c.d));
        HONE_TRY(CUfunction f, m->function(fn));
        AttnArgs x = a;
        x.q = b.in[static_cast<size_t>(q_at)] + qo;
        x.k = b.in[static_cast<size_t>(k_at)] + ko;
        x.v = b.in[static_cast<size_t>(v_at)] + vo;
        x.mask = m_at >= 0 ? b.in[static_cast<size_t>(m_at)] : 0;
        x.o = b.out[0];
        x.vec = vector_access(x);
        return launch_grid(c.d, f, c.stream, blocks, 1, 1, threads, 1, {&x});
      };
      cands.push_back(std::move(p));
    };
    const std::string d = std::to_string(D);
    if (s_.math.half != 0) {
      const bool bf16 = s_.math.half == kCudaR16BF;
      add(std::string("attention.") + (bf16 ? "bf16" : "f16") + ".cuda.fused_mma",
          "hone_attn_mma_" + d + (bf16 ? "_bf16" : "_f16"), 128);
    } else if (D <= 64) {
      // Tensor cores on f32 operands: rounded to tf32 where the precision allows
      // it, else each product split in three tf32 products (3xTF32).
      if (s_.math.tf32)
        add("attention.tf32.cuda.fused_mma", "hone_attn_tf32_" + d, 128);
      else
        add("attention.f32.cuda.fused_mma3xtf32", "hone_attn_3xtf32_" + d, 128);
    }
    if (D <= 64) add("attention.f32.cuda.fused_simt", "hone_attn_simt_" + d, 64);
    if (cands.empty()) return unsupported("head dim " + d + " has no f32 kernel");
    return cands;
  }

  int iq() const { return io_[0]; }
  int ik() const { return io_[1]; }
  int iv() const { return io_[2]; }
  int im() const { return io_[3]; }

  const Graph& g_;
  std::vector<ValueId> inputs_;  // the unit's inputs
  AttentionSpec spec_;
  std::vector<Sub> subs_;
  std::vector<NodeId> sub_nodes_;  // the member node of each sub, in order
  std::vector<int> io_;            // unit-input indices of q, k, v, mask (-1: none)
  BuildSettings s_;
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
    // Views, Transposes and one-index Gathers that only reshuffle an operand
    // are read through (the fused kernels take any strides and an offset): a
    // head split needs no copy.
    auto trace = [&](ValueId& x, std::vector<NodeId>& chain) {
      for (int step = 0; step < 8; ++step) {
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
      }
    }
    sp.q = q;
    sp.k = k;
    sp.v = v;
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
      return fail(ErrorCode::kInternal,
                  "attention member " + g.node(id).describe() + " did not make a one-node unit");
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
  u.outputs = {g.node(sp.out_transpose >= 0 ? sp.out_transpose : sp.av).outputs[0]};
  u.label = g.node(sp.av).describe() + " attention of " + std::to_string(members.size()) + " nodes";
  u.op = std::make_unique<AttentionOp>(g, sp, std::move(subs), members, u.inputs, std::move(io),
                                       b.settings, u.label);
  return u;
}

}  // namespace hone::cuda
