// Conv, Gemm and MatMul on SGEMM, each with its fused epilogue: Conv folds a
// following BatchNormalization into its weights at create; bias, residual
// Add and activations run as an element-wise program on each finished piece
// of the output, in place.
#include <cmath>

#include "backends/blas/kernels/conv.h"
#include "backends/blas/kernels/gemm.h"
#include "backends/blas/op.h"
#include "ops/attrs.h"
#include "ops/broadcast.h"
#include "ops/window.h"

namespace hone::blas {
namespace {

using kernels::EwProgram;

const Tensor* constant_of(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
  const Value& v = g.value(n.inputs[i]);
  return v.initializer ? &*v.initializer : nullptr;
}

int64_t numel(const dims_t& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

size_t round16(size_t n) {
  return (n + 15) / 16 * 16;
}

/// The element-wise program after a dense op. It runs in place on each
/// finished piece of the dense output, unless its operands broadcast the
/// result larger than that output (known only per signature for graphs
/// without shapes): then the dense op writes to workspace and the program
/// runs as a separate pass into the real output.
struct Epilogue {
  const EwProgram* prog = nullptr;
  const EwOperands* ops = nullptr;
  kernels::EwLayout layout;
  dims_t out;             // the unit's output dims
  bool separate = false;  // see above
  size_t dense_floats = 0;

  /// The in-place callback for output `y`, or empty when there is nothing
  /// to run in place.
  std::function<void(int64_t, int64_t)> bind(const RunArgs& a, float* y) const {
    if (prog->code.empty() || separate) return {};
    return [this, y, operands = bind_operands(*ops, a, y)](int64_t b, int64_t e) {
      kernels::eltwise_run(*prog, layout, operands, y, b, e);
    };
  }
  /// Where the dense op writes: the output, or workspace past `used` floats.
  float* dense_target(const RunArgs& a, size_t used) const {
    return separate ? a.workspace + used : a.outputs[0];
  }
  /// The separate pass, when there is one.
  void finish(const RunArgs& a, const float* dense) const {
    if (!separate) return;
    kernels::eltwise_run_parallel(*a.pool, *prog, layout, bind_operands(*ops, a, dense),
                                  a.outputs[0]);
  }
};

Result<Epilogue> plan_epilogue(const EwProgram& prog, const EwOperands& ops,
                               const std::vector<dims_t>& inputs, const dims_t& dense) {
  Epilogue ep;
  ep.prog = &prog;
  ep.ops = &ops;
  ep.out = dense;
  if (prog.code.empty()) return ep;
  std::vector<dims_t> shapes{dense};
  for (size_t k = 1; k < ops.size(); ++k)
    if (!ops.is_per_channel(k))
      shapes.push_back(ops.input[k] >= 0 ? inputs[static_cast<size_t>(ops.input[k])]
                                         : ops.own[k].shape());
  HONE_TRY(ep.out, ops::broadcast_shapes(shapes));
  ep.separate = ep.out != dense;
  if (ep.separate) ep.dense_floats = round16(static_cast<size_t>(numel(dense)));
  HONE_TRY(ep.layout, plan_operands(ops, inputs, dense, ep.out));
  return ep;
}

// --- Conv ---------------------------------------------------------------------

class ConvOp final : public Op {
 public:
  ConvOp(Node node, Tensor packed_w, int w_input, std::vector<float> bias, EwProgram prog,
         EwOperands ops)
      : node_(std::move(node)),
        w_(std::move(packed_w)),
        w_input_(w_input),
        bias_(std::move(bias)),
        prog_(std::move(prog)),
        ops_(std::move(ops)) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    ThreadPool& pool = env.pool;
    const dims_t& x = in[0];
    const dims_t& w = w_input_ >= 0 ? in[static_cast<size_t>(w_input_)] : w_.shape();
    if (x.size() < 3 || x.size() > 4)
      return fail(ErrorCode::kUnsupported, "Conv input " + dims_str(x) + ": only 1-D and 2-D");
    if (w.size() != x.size())
      return fail(ErrorCode::kInvalidArgument,
                  "Conv weights " + dims_str(w) + " and input " + dims_str(x) + " ranks differ");
    HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(node_));
    const int64_t group = ca.group;
    if (x[1] != w[1] * group || w[0] % group != 0)
      return fail(ErrorCode::kInvalidArgument, "Conv input " + dims_str(x) + ", weights " +
                                                   dims_str(w) + " and group " +
                                                   std::to_string(group) + " disagree");
    const dims_t spatial(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
    HONE_TRY(ops::Window win, ops::make_window(node_, spatial, kernel, false, "Conv"));
    kernels::Conv2dShape s;
    s.n = x[0];
    s.c = x[1];
    s.m = w[0];
    s.group = group;
    const bool one_d = spatial.size() == 1;
    const size_t wd = one_d ? 0 : 1;  // index of the width dim in the window
    s.h = one_d ? 1 : spatial[0];
    s.w = spatial[wd];
    s.kh = one_d ? 1 : kernel[0];
    s.kw = kernel[wd];
    s.oh = one_d ? 1 : win.out[0];
    s.ow = win.out[wd];
    s.sh = one_d ? 1 : win.strides[0];
    s.sw = win.strides[wd];
    s.dh = one_d ? 1 : win.dilations[0];
    s.dw = win.dilations[wd];
    s.pt = one_d ? 0 : win.pad_begin[0];
    s.pl = win.pad_begin[wd];
    dims_t out{s.n, s.m};
    out.insert(out.end(), win.out.begin(), win.out.end());
    if (numel(out) == 0) return fail(ErrorCode::kUnsupported, "Conv output is empty");
    HONE_TRY(Epilogue ep, plan_epilogue(prog_, ops_, in, out));
    OpPlan p;
    p.outputs = {ep.out};
    const bool dw = s.depthwise();
    if (!bias_.empty() && static_cast<int64_t>(bias_.size()) != s.m)
      return fail(ErrorCode::kInvalidArgument, "Conv bias of " + std::to_string(bias_.size()) +
                                                   " values for " + std::to_string(s.m) +
                                                   " output channels");
    const int threads = pool.num_threads();
    p.kernel = dw ? "conv2d.f32.blas.depthwise"
                  : (s.pointwise() ? "conv2d.f32.blas.pointwise" : "conv2d.f32.blas.im2col");
    if (!dw && kernels::conv2d_batched(s, threads)) p.kernel += ".batched";
    // The bias is where the kernel starts each output, not an epilogue pass.
    std::string epilogue = bias_.empty() ? "" : "bias";
    if (!prog_.code.empty()) epilogue += (epilogue.empty() ? "" : ",") + prog_.describe();
    if (!epilogue.empty()) p.kernel += " +" + epilogue;
    const size_t col = round16(dw ? kernels::conv2d_depthwise_workspace(s, threads)
                                  : kernels::conv2d_im2col_workspace(s, threads));
    p.workspace_floats = col + ep.dense_floats;
    p.run = [this, s, dw, col, ep = std::move(ep)](const RunArgs& a) {
      const float* w = w_input_ >= 0 ? a.inputs[static_cast<size_t>(w_input_)] : w_.data<float>();
      const float* b = bias_.empty() ? nullptr : bias_.data();
      float* y = ep.dense_target(a, col);
      const kernels::OutputDone done = ep.bind(a, y);
      if (dw)
        kernels::conv2d_depthwise(s, a.inputs[0], w, b, y, a.workspace, *a.pool, &done);
      else
        kernels::conv2d_im2col(s, a.inputs[0], w, b, y, a.workspace, *a.pool, &done);
      ep.finish(a, y);
    };
    return p;
  }

 private:
  Node node_;
  Tensor w_;                 // packed (BN-folded) constant weights; undefined when w_input_ >= 0
  int w_input_;              // unit input holding runtime weights, or -1
  std::vector<float> bias_;  // per output channel (BN-folded); empty: none
  EwProgram prog_;
  EwOperands ops_;
};

Result<Unit> create_conv(const BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  const Graph& g = b.g;
  Unit u;
  u.label = n.describe();
  u.inputs.push_back(n.inputs[0]);
  const Tensor* w = constant_of(g, n, 1);
  const Tensor* bias = constant_of(g, n, 2);
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && bias == nullptr)
    return fail(ErrorCode::kUnsupported, "Conv bias must be a constant");
  int w_input = -1;
  Tensor packed;
  std::vector<float> bvec;
  bool folded = false;
  ValueId cur = n.outputs[0];
  if (w == nullptr) {
    u.inputs.push_back(n.inputs[1]);
    w_input = 1;
    // Runtime weights: the bias is used as given (plan() checks its length).
    if (bias) {
      if (bias->dtype() != DType::kF32)
        return fail(ErrorCode::kUnsupported, "Conv bias must be f32, got " + bias->describe());
      bvec.assign(bias->data<float>(), bias->data<float>() + bias->numel());
    }
  } else {
    if (w->rank() < 3)
      return fail(ErrorCode::kInvalidArgument, "Conv weights " + w->describe() + " need rank >= 3");
    packed = w->clone();
    const int64_t m = w->dim(0), per = w->numel() / std::max<int64_t>(m, 1);
    bvec.assign(static_cast<size_t>(m), 0.0f);
    if (bias) {
      if (bias->numel() != m)
        return fail(ErrorCode::kInvalidArgument, "Conv bias " + bias->describe() +
                                                     " does not match " + std::to_string(m) +
                                                     " output channels");
      std::copy(bias->data<float>(), bias->data<float>() + m, bvec.begin());
    }
    // Fold a following BatchNormalization: w' = w * k, b' = (b - mean) * k + beta,
    // k = scale / sqrt(var + eps), once, here.
    const Node* bn = b.sole_consumer(cur);
    const auto bn_attrs = bn && bn->op_type == "BatchNormalization"
                              ? ops::batch_norm_attrs(*bn)
                              : Result<ops::BatchNormAttrs>(fail(ErrorCode::kUnsupported, ""));
    if (bn_attrs && bn->inputs[0] == cur && !bn_attrs->training_mode) {
      const Tensor* sc = constant_of(g, *bn, 1);
      const Tensor* be = constant_of(g, *bn, 2);
      const Tensor* mean = constant_of(g, *bn, 3);
      const Tensor* var = constant_of(g, *bn, 4);
      if (sc && be && mean && var && sc->numel() == m && be->numel() == m && mean->numel() == m &&
          var->numel() == m) {
        const double eps = bn_attrs->epsilon;
        float* pw = packed.data<float>();
        for (int64_t o = 0; o < m; ++o) {
          const double k = sc->data<float>()[o] / std::sqrt(var->data<float>()[o] + eps);
          for (int64_t i = 0; i < per; ++i)
            pw[o * per + i] = static_cast<float>(pw[o * per + i] * k);
          bvec[static_cast<size_t>(o)] = static_cast<float>(
              (bvec[static_cast<size_t>(o)] - mean->data<float>()[o]) * k + be->data<float>()[o]);
        }
        absorbed->push_back(static_cast<NodeId>(bn - g.nodes().data()));
        u.label += "+BatchNormalization";
        cur = bn->outputs[0];
        folded = true;
      }
    }
  }
  EwProgram prog;
  EwOperands ops;
  ops.input.push_back(-2);
  ops.own.emplace_back();
  if (bias == nullptr && !folded) bvec.clear();
  const size_t before = absorbed->size();
  cur = absorb_eltwise(b, cur, true, &prog, &ops, &u.inputs, absorbed);
  for (size_t i = before; i < absorbed->size(); ++i)
    u.label += "+" + g.node((*absorbed)[i]).op_type;
  u.outputs = {cur};
  u.op = std::make_unique<ConvOp>(n, std::move(packed), w_input, std::move(bvec), std::move(prog),
                                  std::move(ops));
  return u;
}

// --- Gemm and MatMul ----------------------------------------------------------

/// y[batch..., m, n] = A[..., m, k] x B[..., k, n] (+ epilogue), ONNX
/// broadcasting of batch dims, 1-D operands promoted and squeezed; Gemm is the
/// 2-D case with transposes and alpha.
class MatMulOp final : public Op {
 public:
  MatMulOp(bool gemm, bool ta, bool tb, float alpha, EwProgram prog, EwOperands ops)
      : gemm_(gemm),
        ta_(ta),
        tb_(tb),
        alpha_(alpha),
        prog_(std::move(prog)),
        ops_(std::move(ops)) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
    dims_t a = in[0], b = in[1];
    const std::string op = gemm_ ? "Gemm" : "MatMul";
    if (gemm_ && (a.size() != 2 || b.size() != 2))
      return fail(ErrorCode::kInvalidArgument,
                  "Gemm needs 2-D A and B, got " + dims_str(a) + " and " + dims_str(b));
    if (a.empty() || b.empty()) return fail(ErrorCode::kInvalidArgument, "MatMul of a scalar");
    const bool a1 = a.size() == 1, b1 = b.size() == 1;
    if (a1) a.insert(a.begin(), 1);
    if (b1) b.push_back(1);
    const int64_t m = ta_ ? a[a.size() - 1] : a[a.size() - 2];
    const int64_t k = ta_ ? a[a.size() - 2] : a[a.size() - 1];
    const int64_t kb = tb_ ? b[b.size() - 1] : b[b.size() - 2];
    const int64_t n = tb_ ? b[b.size() - 2] : b[b.size() - 1];
    if (k != kb)
      return fail(ErrorCode::kInvalidArgument,
                  op + " inner dims differ: " + dims_str(in[0]) + " x " + dims_str(in[1]));
    HONE_TRY(dims_t batch, ops::broadcast_shapes(
                               {dims_t(a.begin(), a.end() - 2), dims_t(b.begin(), b.end() - 2)}));
    dims_t out = batch;
    if (!a1) out.push_back(m);
    if (!b1) out.push_back(n);
    if (numel(out) == 0 || k == 0) return fail(ErrorCode::kUnsupported, op + " of an empty tensor");
    HONE_TRY(Epilogue ep, plan_epilogue(prog_, ops_, in, out));
    // Per batch dim: offsets of A and B (0 where broadcast).
    const size_t r = batch.size();
    dims_t sa(r, 0), sb(r, 0);
    {
      int64_t st_a = m * k, st_b = k * n;
      for (size_t i = r; i-- > 0;) {
        const size_t ia = i + a.size() - 2 - r, ib = i + b.size() - 2 - r;
        const bool has_a = i + a.size() - 2 >= r, has_b = i + b.size() - 2 >= r;
        if (has_a && a[ia] != 1) sa[i] = st_a;
        if (has_b && b[ib] != 1) sb[i] = st_b;
        if (has_a) st_a *= a[ia];
        if (has_b) st_b *= b[ib];
      }
    }
    const int64_t batches = numel(batch);
    bool b_shared = true;  // every batch reads the same B: one tall GEMM
    for (int64_t s : sb) b_shared = b_shared && s == 0;
    bool a_dense = !ta_;  // A's batches are consecutive m x k blocks
    for (size_t i = 0; i < r; ++i) a_dense = a_dense && (sa[i] != 0 || batch[i] == 1);
    OpPlan p;
    p.outputs = {ep.out};
    p.workspace_floats = ep.dense_floats;
    p.kernel = std::string(gemm_ ? "gemm" : "matmul") + ".f32.blas.sgemm";
    if (!prog_.code.empty()) p.kernel += " +" + prog_.describe();
    const bool tall = b_shared && (batches == 1 || a_dense);
    p.run = [=, this, ep = std::move(ep)](const RunArgs& args) {
      const float* pa = args.inputs[0];
      const float* pb = args.inputs[1];
      float* y = ep.dense_target(args, 0);
      const int64_t lda = ta_ ? m : k, ldb = tb_ ? k : n;
      const auto done = ep.bind(args, y);
      if (tall) {
        const kernels::RowsDone rows = [&](int64_t r0, int64_t r1) {
          if (done) done(r0 * n, r1 * n);
        };
        kernels::sgemm_rows(*args.pool, ta_, tb_, batches * m, n, k, alpha_, pa, lda, pb, ldb, 0.0f,
                            y, n, &rows);
        ep.finish(args, y);
        return;
      }
      auto offsets = [&](int64_t t, int64_t* oa, int64_t* ob) {
        *oa = 0;
        *ob = 0;
        for (size_t i = r; i-- > 0;) {
          const int64_t idx = t % batch[i];
          t /= batch[i];
          *oa += idx * sa[i];
          *ob += idx * sb[i];
        }
      };
      args.pool->parallel_for(batches, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          int64_t oa, ob;
          offsets(t, &oa, &ob);
          kernels::sgemm(ta_, tb_, m, n, k, alpha_, pa + oa, lda, pb + ob, ldb, 0.0f, y + t * m * n,
                         n);
          if (done) done(t * m * n, (t + 1) * m * n);
        }
      });
      ep.finish(args, y);
    };
    return p;
  }

 private:
  bool gemm_, ta_, tb_;
  float alpha_;
  EwProgram prog_;
  EwOperands ops_;
};

Result<Unit> create_matmul(const BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  const Graph& g = b.g;
  const bool gemm = n.op_type == "Gemm";
  Unit u;
  u.label = n.describe();
  u.inputs = {n.inputs[0], n.inputs[1]};
  EwProgram prog;
  EwOperands ops;
  ops.input.push_back(-2);
  ops.own.emplace_back();
  HONE_TRY(const ops::GemmAttrs ga, gemm ? ops::gemm_attrs(n) : Result<ops::GemmAttrs>());
  if (gemm && n.inputs.size() > 2 && n.inputs[2] >= 0) {
    const float beta = ga.beta;
    const Tensor* c = constant_of(g, n, 2);
    if (beta != 0.0f) {
      if (c != nullptr) {
        Tensor scaled = c->clone();
        for (float& v : scaled.span<float>()) v *= beta;
        ops.input.push_back(-1);
        ops.own.push_back(std::move(scaled));
      } else if (beta == 1.0f) {
        u.inputs.push_back(n.inputs[2]);
        ops.input.push_back(2);
        ops.own.emplace_back();
      } else {
        return fail(ErrorCode::kUnsupported, "Gemm with beta != 1 and a non-constant C");
      }
      prog.code.push_back({kernels::EwOp::kAdd, 1, false, 0, 0});
    }
  }
  const size_t before = absorbed->size();
  const ValueId last = absorb_eltwise(b, n.outputs[0], true, &prog, &ops, &u.inputs, absorbed);
  for (size_t i = before; i < absorbed->size(); ++i)
    u.label += "+" + g.node((*absorbed)[i]).op_type;
  u.outputs = {last};
  u.op = std::make_unique<MatMulOp>(gemm, ga.trans_a, ga.trans_b, ga.alpha, std::move(prog),
                                    std::move(ops));
  return u;
}

}  // namespace

Result<Unit> create_dense(const BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  if (n.op_type == "Conv") return create_conv(b, n, absorbed);
  return create_matmul(b, n, absorbed);
}

}  // namespace hone::blas
