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
#include <memory>
#include <optional>

#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/attention_op.h"
#include "backends/cuda/op_timer.h"
#include "backends/cuda/storage.h"
#include "core/log.h"
#include "ops/attrs.h"

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

std::optional<int64_t> gather_index(const Graph& g, const Node& n) {
  if (n.op_type != "Gather" || n.inputs.size() != 2 || n.inputs[1] < 0) return std::nullopt;
  const Value& idx = g.value(n.inputs[1]);
  if (!idx.initializer || idx.initializer->numel() != 1 || !idx.initializer->shape().empty() ||
      (idx.initializer->dtype() != DType::kI64 && idx.initializer->dtype() != DType::kI32))
    return std::nullopt;
  return tensor_element_as_int64(*idx.initializer, 0);
}

namespace {

struct View {
  dims_t dims, st;
  int64_t offset = 0;  // elements past the source's start (a Gather of one index)
};

/// The kernels' mask fields for mask dims `md` broadcast to [ob..., Sq, Sk].
Result<void> read_mask(AttnArgs& a, const dims_t& md, const dims_t& ob, int64_t Sq, int64_t Sk) {
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
  return {};
}

class AttentionOp final : public Op {
 public:
  AttentionOp(const Graph& g, AttentionSpec spec, std::vector<AttentionSub> subs,
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
    HONE_TRY(OpPlan unfused, plan_unfused_attention(subs_, label_, in, env, &made));
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
    Check check = check_against_last(env, cands.size());
    return fastest(label_, in, std::move(cands), s_, check);
  }

  /// Half-precision activations: Q, K, V and O bf16/f16 (defined below).
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>& have,
                           const PlanEnv& env) const override;

 private:
  /// Dims and element strides of a member chain's result, read in place from
  /// its source (`src` dims, contiguous): Transposes permute the strides,
  /// views re-stride them; nothing when a view cannot be expressed so.
  Result<View> follow(const dims_t& src, const std::vector<NodeId>& chain,
                      const std::vector<dims_t>& made) const;

  /// The fused kernels that accept these shapes, best guess first; `hio`:
  /// only the tensor-core one, reading and writing bf16/f16 (its _hio form).
  Result<std::vector<OpPlan>> plan_fused(const std::vector<dims_t>& in, const PlanEnv& env,
                                         const std::vector<dims_t>& made, bool hio = false) const {
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
    if (!fits_int({nbatch * ((Sq + kAttnSplitRows - 1) / kAttnSplitRows), Sq, Sk}))
      return unsupported("too large");
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
    if (im() >= 0) HONE_CHECK_OK(read_mask(a, in[static_cast<size_t>(im())], ob, Sq, Sk));
    // O: [ob..., Sq, D] contiguous, or written through the output Transpose.
    dims_t out = ob;
    out.push_back(Sq);
    out.push_back(D);
    View o{out, strides_of(out)};
    if (spec_.out_transpose >= 0) {
      const auto ti = std::find(sub_nodes_.begin(), sub_nodes_.end(), spec_.out_transpose);
      if (ti == sub_nodes_.end()) return fail(ErrorCode::kInternal, label_ + ": lost a member");
      const dims_t& td = made[static_cast<size_t>(ti - sub_nodes_.begin())];
      const auto given =
          ops::transpose_perm(g_.node(spec_.out_transpose), static_cast<int64_t>(out.size()));
      if (!given) return unsupported("the output Transpose's perm");
      const std::vector<int64_t>& perm = *given;
      const dims_t ts = strides_of(td);
      for (size_t j = 0; j < perm.size(); ++j) {
        const int64_t p = perm[j] < 0 ? perm[j] + static_cast<int64_t>(perm.size()) : perm[j];
        if (p < 0 || p >= static_cast<int64_t>(out.size()) || td[j] != out[static_cast<size_t>(p)])
          return unsupported("the output Transpose's perm");
        o.st[static_cast<size_t>(p)] = ts[j];
      }
      out = td;
      // Its Reshape (heads merged): the same contiguous bytes, seen so.
      if (spec_.out_reshape >= 0) {
        if (numel_of(made.back()) != numel_of(td))
          return fail(ErrorCode::kInternal, label_ + ": the output Reshape changes the count");
        out = made.back();
      }
    }
    for (size_t i = 0; i < ob.size(); ++i) a.so[i] = o.st[i];
    a.o_row = o.st[ob.size()];
    a.o_col = o.st[ob.size() + 1];
    std::vector<OpPlan> cands;
    const int64_t esize = hio ? 2 : 4;  // bytes per element of Q, K, V and O
    const auto qo = static_cast<CUdeviceptr>(q.offset * esize),
               ko = static_cast<CUdeviceptr>(k.offset * esize),
               vo = static_cast<CUdeviceptr>(v.offset * esize);
    // With `plain` given, fn is a cp.async kernel (attention_async_module),
    // launched where K's and V's rows turn out 16-byte aligned, else `plain`
    // (on 64-row tiles). `rows`: the query rows of one block of fn.
    auto add = [&](std::string kernel, std::string fn, unsigned threads, std::string plain = {},
                   int64_t rows = kAttnRows) {
      OpPlan p;
      p.outputs = {out};
      p.kernel = std::move(kernel);
      const int q_at = iq(), k_at = ik(), v_at = iv(), m_at = im();
      const auto blocks = static_cast<unsigned>(nbatch * ((Sq + rows - 1) / rows)),
                 plain_blocks = static_cast<unsigned>(nbatch * tiles);
      p.run = [a, fn, plain, threads, q_at, k_at, v_at, m_at, blocks, plain_blocks, qo, ko, vo,
               esize](const ExecCtx& c, const Bind& b) -> Result<void> {
        AttnArgs x = a;
        x.q = b.in[static_cast<size_t>(q_at)] + qo;
        x.k = b.in[static_cast<size_t>(k_at)] + ko;
        x.v = b.in[static_cast<size_t>(v_at)] + vo;
        x.mask = m_at >= 0 ? b.in[static_cast<size_t>(m_at)] : 0;
        x.o = b.out[0];
        x.vec = vector_access(x, esize);
        const bool staged = !plain.empty() && (x.vec & 24) == 24;
        HONE_TRY(const Module* m, staged ? attention_async_module(c.d) : attention_module(c.d));
        HONE_TRY(CUfunction f, m->function(plain.empty() || staged ? fn : plain));
        return launch_grid(c.d, f, c.stream, plain.empty() || staged ? blocks : plain_blocks, 1, 1,
                           threads, 1, {&x});
      };
      cands.push_back(std::move(p));
    };
    const std::string d = std::to_string(D);
    if (hio) {
      if (s_.math.half == 0) return unsupported("half operands outside a bf16/fp16 build");
      const bool bf16 = s_.math.half == kCudaR16BF;
      const std::string type = bf16 ? "bf16" : "f16",
                        plain = "hone_attn_mma_" + d + "_" + type + "_hio";
      // The cp.async kernel where K's and V's strides and offsets keep their
      // rows 16-byte aligned (the buffers themselves are), and it compiles.
      AttnArgs at_offsets = a;
      at_offsets.k = ko;
      at_offsets.v = vo;
      if (D <= 64 && (vector_access(at_offsets, esize) & 24) == 24) {
        if (auto m = attention_async_module(*drv); m) {
          add("attention." + type + ".cuda.fused_mma_async_half_io",
              "hone_attn_mma_async_" + d + "_" + type + "_hio", 128, plain);
          // Split along the keys: for few (batch, head) pairs, where 64-row
          // tiles would leave most multiprocessors idle; timed like the rest.
          if (nbatch * tiles < 2 * static_cast<int64_t>(drv->multiprocessors()))
            add("attention." + type + ".cuda.fused_mma_split_half_io",
                "hone_attn_mma_split_" + d + "_" + type + "_hio", 128, plain, kAttnSplitRows);
        } else {
          HONE_LOG_DEBUG("cuda: {}: no cp.async attention kernel: {}", label_, m.error().message());
        }
      }
      add("attention." + type + ".cuda.fused_mma_half_io", plain, 128);
      return cands;
    }
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

  /// fastest()'s check of every candidate against the last one, on random
  /// inputs but the real scale factors (which the kernels read at plan time).
  Check check_against_last(const PlanEnv& env, size_t cands) const {
    Check check;
    check.reference = static_cast<int>(cands) - 1;
    check.tolerance = check_tolerance(s_.math.half, s_.math.tf32);
    for (ValueId v : inputs_)
      check.fixed.push_back(std::find(spec_.scale_values.begin(), spec_.scale_values.end(), v) !=
                                    spec_.scale_values.end()
                                ? env.value(v)
                                : nullptr);
    return check;
  }

  int iq() const { return io_[0]; }
  int ik() const { return io_[1]; }
  int iv() const { return io_[2]; }
  int im() const { return io_[3]; }

  const Graph& g_;
  std::vector<ValueId> inputs_;  // the unit's inputs
  AttentionSpec spec_;
  std::vector<AttentionSub> subs_;
  std::vector<NodeId> sub_nodes_;  // the member node of each sub, in order
  std::vector<int> io_;            // unit-input indices of q, k, v, mask (-1: none)
  BuildSettings s_;
  std::string label_;
};

Result<View> AttentionOp::follow(const dims_t& src, const std::vector<NodeId>& chain,
                                 const std::vector<dims_t>& made) const {
  AtomView v(src, strides_of(src));
  for (NodeId id : chain) {
    const auto at = std::find(sub_nodes_.begin(), sub_nodes_.end(), id);
    if (at == sub_nodes_.end()) return fail(ErrorCode::kInternal, label_ + ": lost a member");
    const dims_t& out = made[static_cast<size_t>(at - sub_nodes_.begin())];
    const Node& n = g_.node(id);
    const dims_t now = v.sizes();
    if (n.op_type == "Transpose") {
      const auto perm = ops::transpose_perm(n, static_cast<int64_t>(now.size()));
      if (!perm || !v.transpose(*perm))
        return fail(ErrorCode::kUnsupported, "fused attention: a Transpose's perm");
    } else if (n.op_type == "Gather") {
      const auto index = gather_index(g_, n);
      const auto r = static_cast<int64_t>(now.size());
      int64_t axis = ops::axis_attr(n);
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

// Half-precision activations (storage.h): Q, K and V read as bf16/f16 and O
// written so, by the tensor-core kernel's _hio form, when a source is half
// already; the mask and scales stay f32. Only the fused kernel reads half, so
// a problem it refuses runs plan() on f32 copies.
Result<OpPlan> AttentionOp::plan_half(const std::vector<dims_t>& in,
                                      const std::vector<Storage>& have, const PlanEnv& env) const {
  if (s_.math.half == 0 || s_.attention == AttentionSelect::kUnfused)
    return fail(ErrorCode::kUnsupported, "no half attention in this build");
  bool any = false;
  for (int at : {iq(), ik(), iv()}) {
    const auto i = static_cast<size_t>(at);
    // A rank-4 half value is channels-last: the views assume row-major.
    if (have[i] == Storage::kHalf && !channels_last_is_row_major(in[i]))
      return fail(ErrorCode::kUnsupported, "a channels-last operand");
    any = any || have[i] == Storage::kHalf;
  }
  if (!any) return fail(ErrorCode::kUnsupported, "no half operand");
  std::vector<dims_t> made;
  HONE_TRY(OpPlan unfused, plan_unfused_attention(subs_, label_, in, env, &made));
  (void)unfused;  // planned for its members' dims only
  HONE_TRY(std::vector<OpPlan> fused, plan_fused(in, env, made, true));
  // The kernel writes O row-major; a rank-4 half value is read channels-last
  // (storage.h), so such an output stays f32 (plan()).
  if (!channels_last_is_row_major(fused.front().outputs[0]))
    return fail(ErrorCode::kUnsupported,
                "a rank-4 output " + shape_to_string(fused.front().outputs[0]));
  for (OpPlan& p : fused) {
    p.reads.assign(in.size(), Storage::kF32);
    for (int at : {iq(), ik(), iv()}) p.reads[static_cast<size_t>(at)] = Storage::kHalf;
    p.writes = {Storage::kHalf};
  }
  if (fused.size() == 1 || s_.attention == AttentionSelect::kFused) return std::move(fused.front());
  // The cp.async kernel must match the plain one (last) before timing; the
  // label differs from plan()'s, whose candidates read f32.
  Check check = check_against_last(env, fused.size());
  return fastest(label_ + " half-io", in, std::move(fused), s_, check);
}

}  // namespace

std::unique_ptr<Op> make_attention_op(const Graph& g, AttentionSpec spec,
                                      std::vector<AttentionSub> subs, std::vector<NodeId> sub_nodes,
                                      std::vector<ValueId> inputs, std::vector<int> io,
                                      BuildSettings s, std::string label) {
  return std::make_unique<AttentionOp>(g, std::move(spec), std::move(subs), std::move(sub_nodes),
                                       std::move(inputs), std::move(io), std::move(s),
                                       std::move(label));
}

}  // namespace hone::cuda
