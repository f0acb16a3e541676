// A transformer MLP as one cuda unit under precision=bf16/fp16 (and fp8):
// MatMul + bias, an element-wise chain (GELU), MatMul + bias, its hidden
// activation kept bf16/f16 (MlpOp); under fp8 both products FP8 (fp8.h).
// A chain that computes GELU (chain_is_gelu: checked on the reference, not
// by its op names) runs in the first product's cuBLASLt epilogue instead of
// a kernel of its own: one pass less over the hidden activation, which at
// ViT-B/16's batch 32 is 39 MB a layer each way.
// The plain products are in ops_dense.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "backends/cuda/dense.h"
#include "backends/cuda/fp8.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/storage.h"
#include "core/log.h"
#include "ops/attrs.h"

namespace hone::cuda {
namespace {

/// Under precision=bf16/fp16: a transformer MLP, MatMul + bias, an
/// element-wise chain (GELU), MatMul + bias, as one unit whose hidden
/// activation stays bf16/f16 in the workspace. The first product writes it
/// (cuBLASLt, bias epilogue, bf16/f16 out), the chain rewrites it in place
/// and the second product reads it as its A operand: no f32 copy of the
/// hidden activation and no conversion pass before the second product.
/// Inputs: x, W1 [K, H], b1 [H], W2 [H, N], b2 [N]; output [..., N] f32
/// (bf16/f16 under half-precision activations, plan_half()).
class MlpOp final : public Op {
 public:
  /// `gelu`: the chain computes GELU (chain_is_gelu), so under bf16/fp16 the
  /// first product's epilogue applies it and the chain kernel is not run.
  MlpOp(BuildSettings s, std::shared_ptr<ChainModule> m, std::string fn, std::string ops,
        ValueId w1, ValueId b1, ValueId w2, ValueId b2, bool gelu)
      : gelu_(gelu),
        s_(std::move(s)),
        module_(std::move(m)),
        fn_(std::move(fn)),
        ops_(std::move(ops)),
        bias1_(b1),
        bias2_(b2),
        fp8_w1_(w1, false),
        fp8_w2_(w2, false) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    return plan_with(in, env, false);
  }

  /// Half-precision activations (storage.h): x read as it is stored (half,
  /// row-major) and the output written bf16/f16 (the second product's bias
  /// taken as a half copy): no conversion on either side.
  /// Under precision=fp8 both products are FP8 (fp8.h), x read as it is
  /// stored (f32 too), where the shapes of both allow; otherwise as under
  /// bf16, its kernel naming why not FP8.
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>& have,
                           const PlanEnv& env) const override {
    const bool x_ok = have[0] == Storage::kHalf ? channels_last_is_row_major(in[0]) : s_.math.fp8;
    if (!x_ok) return fail(ErrorCode::kUnsupported, "x is not a row-major half tensor");
    if (!s_.math.fp8) return plan_with(in, env, true);
    auto p = plan_fp8(in, have[0], env);
    if (p) return p;
    HONE_TRY(OpPlan bf16, plan_with(in, env, true));
    bf16.kernel += not_fp8(p.error().message());
    return bf16;
  }

 private:
  /// The FP8 plan (precision=fp8): x quantized, the first product into the
  /// bf16 hidden activation, the chain in place on it, the hidden activation
  /// quantized, the second product into a bf16 output; or why not.
  Result<OpPlan> plan_fp8(const std::vector<dims_t>& in, Storage xs, const PlanEnv& env) const {
    HONE_TRY(const Dims d, dims_of(in));
    const int64_t M = d.M, K = d.K, H = d.H, N = d.N;  // captured below
    for (const auto& [n, k] : {std::pair{H, K}, std::pair{N, H}})
      if (const std::string why = fp8_shape_why_not(n, k); !why.empty())
        return fail(ErrorCode::kUnsupported, why);
    HONE_TRY(std::shared_ptr<const Fp8Weight> w1, fp8_w1_.get(env, K, H));
    HONE_TRY(std::shared_ptr<const Fp8Weight> w2, fp8_w2_.get(env, H, N));
    HONE_TRY(std::shared_ptr<LtMatmul> g1, lt_fp8_matmul_bias(M, H, K, *w1));
    HONE_TRY(std::shared_ptr<LtMatmul> g2, lt_fp8_matmul_bias(M, N, H, *w2));
    HONE_TRY(std::shared_ptr<const DeviceBuffer> bias1, bias1_.get(env, kCudaR16BF));
    HONE_TRY(std::shared_ptr<const DeviceBuffer> bias2, bias2_.get(env, kCudaR16BF));
    if (!module_->module) return fail(ErrorCode::kInternal, "chain module not compiled");
    HONE_TRY(CUfunction chain, module_->module->function(fn_));
    OpPlan p;
    dims_t out = in[0];
    out.back() = N;
    p.outputs = {out};
    p.kernel =
        "mlp.fp8.cuda.quantize+cublaslt+bias+nvrtc[" + ops_ + "]+quantize+cublaslt+bias half_io";
    p.reads = {xs, Storage::kF32, Storage::kF32, Storage::kF32, Storage::kF32};
    p.writes = {Storage::kHalf};
    // Workspace: x's e4m3 copy, the bf16 hidden activation, its e4m3 copy,
    // then cuBLASLt's.
    const size_t qx = fp8_bytes(M * K), hy = half_bytes(M * H), qy = fp8_bytes(M * H);
    p.workspace_bytes = qx + hy + qy + std::max(g1->workspace, g2->workspace);
    p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
      const CUdeviceptr y = bind.workspace + qx, lws = y + hy + qy;
      HONE_TRY(const auto x8, quantize_fp8(c, bind.in[0], xs, M * K, bind.workspace));
      HONE_CHECK_OK(lt_fp8_enqueue(c, *g1, *w1, x8.first, x8.second, bias1->ptr(), y, lws));
      long long groups = M * H / 4;
      int bf16 = 1;
      CUdeviceptr yy = y;
      HONE_CHECK_OK(launch_1d(c.d, chain, c.stream, groups, {&yy, &groups, &bf16}));
      HONE_TRY(const auto y8, quantize_fp8(c, y, Storage::kHalf, M * H, y + hy));
      return lt_fp8_enqueue(c, *g2, *w2, y8.first, y8.second, bias2->ptr(), bind.out[0], lws);
    };
    return probe_fp8(std::move(p), in, s_);
  }

  /// M, K, H, N of x [..., K], W1 [K, H], b1 [H], W2 [H, N], b2 [N]; the
  /// error names the shapes.
  struct Dims {
    int64_t M, K, H, N;
  };
  Result<Dims> dims_of(const std::vector<dims_t>& in) const {
    const dims_t& a = in[0];
    if (a.size() < 2 || in[1].size() != 2 || in[3].size() != 2)
      return fail(ErrorCode::kInvalidArgument,
                  "MLP: A of rank 2 or more and 2-D weights, got " + shape_to_string(a) + ", " +
                      shape_to_string(in[1]) + ", " + shape_to_string(in[3]));
    const int64_t K = a.back(), H = in[1][1], N = in[3][1];
    if (in[1][0] != K || in[3][0] != H || numel_of(in[2]) != H || numel_of(in[4]) != N)
      return fail(ErrorCode::kInvalidArgument,
                  "MLP: shapes " + shape_to_string(a) + " " + shape_to_string(in[1]) + " " +
                      shape_to_string(in[2]) + " " + shape_to_string(in[3]) + " " +
                      shape_to_string(in[4]) + " do not chain");
    const int64_t M = numel_of(a) / K;
    if (!fits_int({M, N, K, H, M * H}) || H % 4 != 0)
      return fail(ErrorCode::kUnsupported, "MLP: sizes");
    return Dims{M, K, H, N};
  }

  Result<OpPlan> plan_with(const std::vector<dims_t>& in, const PlanEnv& env, bool hio) const {
    const dims_t& a = in[0];
    HONE_TRY(const Dims d, dims_of(in));
    const int64_t M = d.M, K = d.K, H = d.H, N = d.N;  // captured below
    const int half = s_.math.half;
    const bool gelu = gelu_;
    HONE_TRY(auto l1,
             lt_matmul_bias(M, H, K, {.half = half, .want = 1, .y_type = half, .gelu = gelu}));
    HONE_TRY(auto l2,
             lt_matmul_bias(M, N, H, {.half = half, .want = 1, .y_type = hio ? half : kCudaR32F}));
    std::shared_ptr<LtMatmul> g1 = l1.front(), g2 = l2.front();
    HONE_TRY(std::shared_ptr<const DeviceBuffer> bias1, bias1_.get(env, half));
    std::shared_ptr<const DeviceBuffer> bias2;
    if (hio) {
      HONE_TRY(bias2, bias2_.get(env, half));
    }
    if (!module_->module) return fail(ErrorCode::kInternal, "chain module not compiled");
    HONE_TRY(CUfunction chain, module_->module->function(fn_));
    OpPlan p;
    dims_t out = a;
    out.back() = N;
    p.outputs = {out};
    p.kernel = std::string("mlp.") + (half == kCudaR16BF ? "bf16" : "f16") + ".cuda.cublaslt+bias" +
               (gelu ? "+gelu_epilogue[" + ops_ + " as tanh GELU]" : "+nvrtc[" + ops_ + "]") +
               "+cublaslt+bias" + (hio ? " half_io" : "");
    if (hio) {
      p.reads = {Storage::kHalf, Storage::kF32, Storage::kF32, Storage::kF32, Storage::kF32};
      p.writes = {Storage::kHalf};
    }
    const size_t ha = hio ? 0 : half_bytes(M * K), hy = half_bytes(M * H);
    p.workspace_bytes = ha + hy + std::max(g1->workspace, g2->workspace);
    p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
      const CUdeviceptr w1 = built_half(bind, 1), w2 = built_half(bind, 3);
      if (w1 == 0 || w2 == 0) return fail(ErrorCode::kInternal, "MLP: weights without half copies");
      CUdeviceptr x = bind.in[0];
      if (!hio) {
        HONE_TRY(x, to_half(c, bind.in[0], M * K, bind.workspace, half));
      }
      CUdeviceptr y = bind.workspace + ha;
      const CUdeviceptr lws = y + hy;
      HONE_CHECK_OK(lt_enqueue(c, *g1, x, w1, bias1->ptr(), y, lws));
      if (!gelu) {
        long long groups = M * H / 4;
        int bf16 = half == kCudaR16BF ? 1 : 0;
        HONE_CHECK_OK(launch_1d(c.d, chain, c.stream, groups, {&y, &groups, &bf16}));
      }
      return lt_enqueue(c, *g2, y, w2, hio ? bias2->ptr() : bind.in[4], bind.out[0], lws);
    };
    return p;
  }

  bool gelu_;
  BuildSettings s_;
  std::shared_ptr<ChainModule> module_;
  std::string fn_, ops_;
  HalfBias bias1_, bias2_;
  Fp8WeightCache fp8_w1_, fp8_w2_;  // precision=fp8
};

}  // namespace

NodeId bias_add_of(const BlockInfo& b, const Node& n) {
  const Graph& g = b.g;
  if (n.op_type != "MatMul" || n.inputs.size() != 2 || n.outputs.size() != 1) return -1;
  const Value& w = g.value(n.inputs[1]);
  if (!w.initializer || w.initializer->dtype() != DType::kF32 || w.initializer->shape().size() != 2)
    return -1;
  const int64_t N = w.initializer->shape()[1];
  const NodeId c = b.sole_consumer(n.outputs[0]);
  if (c < 0) return -1;
  const Node& add = g.node(c);
  if (add.op_type != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1 ||
      add.inputs[0] == add.inputs[1])
    return -1;
  const ValueId bias = add.inputs[0] == n.outputs[0] ? add.inputs[1] : add.inputs[0];
  const Value& bv = g.value(bias);
  if (!bv.initializer || bv.initializer->dtype() != DType::kF32 || bv.initializer->numel() != N)
    return -1;
  const auto& bd = bv.initializer->shape();
  if (bd.empty() || bd.back() != N) return -1;  // [N] or [1, ..., 1, N]
  const Value& x = g.value(n.inputs[0]);
  if (x.shape && x.shape->rank() < 2) return -1;          // a vector A drops a dim
  if (x.shape && bd.size() > x.shape->rank()) return -1;  // the bias would add dims
  return c;
}

namespace {

/// The nodes of an MLP unit starting at MatMul `n` (MlpOp): its bias Add,
/// the element-wise nodes between it and the second MatMul (in order), that
/// MatMul and its bias Add; empty when `n` starts none. Every value inside
/// is read only inside.
struct MlpNodes {
  NodeId add1 = -1, mm2 = -1, add2 = -1;
  std::vector<NodeId> chain;
};
std::optional<MlpNodes> mlp_from(BlockInfo& b, const Node& n) {
  const Graph& g = b.g;
  MlpNodes m;
  if (b.settings.math.half == 0 || !b.settings.gemm.epilogue || (m.add1 = bias_add_of(b, n)) < 0)
    return std::nullopt;
  // Its products are cuBLASLt's (a bf16/f16 output with its bias epilogue).
  const auto d = Driver::get();
  if (!d || (*d)->lt() == nullptr) return std::nullopt;
  const int64_t H = g.value(n.inputs[1]).initializer->shape()[1];
  if (H % 4 != 0) return std::nullopt;
  const ValueId h = g.node(m.add1).outputs[0];
  // Grow the chain from h's readers: element-wise nodes with one output, in
  // no unit yet, until one value is left whose only reader is a MatMul.
  std::vector<ValueId> open{h};
  std::set<NodeId> chain;
  ValueId end = -1;
  while (!open.empty()) {
    const ValueId v = open.back();
    open.pop_back();
    if (b.is_output[static_cast<size_t>(v)]) return std::nullopt;
    for (NodeId r : b.readers(v)) {
      if (chain.count(r)) continue;
      const Node& x = g.node(r);
      if (x.op_type == "MatMul") {
        if (end >= 0 && end != v) return std::nullopt;
        if (b.readers(v).size() != 1 || x.inputs[0] != v) return std::nullopt;
        end = v;
        m.mm2 = r;
        continue;
      }
      std::vector<std::string> probe(eltwise_arity(x), "x");
      if (b.used[static_cast<size_t>(r)] || x.outputs.size() != 1 ||
          eltwise_expr(g, x, probe).empty() || chain.size() >= 16)
        return std::nullopt;
      chain.insert(r);
      open.push_back(x.outputs[0]);
    }
  }
  if (chain.empty() || m.mm2 < 0 || (m.add2 = bias_add_of(b, g.node(m.mm2))) < 0)
    return std::nullopt;
  const Value& w2 = g.value(g.node(m.mm2).inputs[1]);
  if (w2.initializer->shape()[0] != H) return std::nullopt;
  m.chain.assign(chain.begin(), chain.end());
  std::sort(m.chain.begin(), m.chain.end(),
            [&](NodeId x, NodeId y) { return b.position(x) < b.position(y); });
  // Every chain value but the end is read inside the chain only.
  for (NodeId c : m.chain) {
    const ValueId o = g.node(c).outputs[0];
    if (o == end) continue;
    for (NodeId r : b.readers(o))
      if (!chain.count(r)) return std::nullopt;
  }
  return m;
}

/// Whether the chain from `h` to `end` computes GELU within what bf16/f16
/// storage of the hidden activation already loses: run on the reference over
/// h in [-10, 10] (its constants read from the graph), it stays within 1e-3
/// of cuBLASLt's tanh form, 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))).
/// The exact (erf) GELU is within 5e-4 of that form; its bf16 output is
/// rounded by up to 4e-3 of its size. Sigmoid forms such as h sigmoid(1.702 h)
/// (0.02 off) and anything else keep their own kernel.
bool chain_is_gelu(const BlockInfo& b, ValueId h, const std::vector<NodeId>& chain, ValueId end) {
  const Graph& g = b.g;
  constexpr int kPoints = 401;
  std::vector<float> xs(kPoints);
  for (int i = 0; i < kPoints; ++i) xs[static_cast<size_t>(i)] = -10.0f + 0.05f * i;
  std::map<ValueId, Tensor> vals;
  vals.emplace(h, Tensor::from<float>({kPoints}, xs));
  host_eval::Env env;
  env.value = [&](ValueId v) -> const Tensor* {
    if (auto it = vals.find(v); it != vals.end()) return &it->second;
    const Value& val = g.value(v);
    return val.initializer ? &*val.initializer : nullptr;
  };
  env.dims = [](ValueId) -> const std::vector<int64_t>* { return nullptr; };
  for (NodeId id : chain) {
    const Node& n = g.node(id);
    auto out = host_eval::evaluate(g, n, env);
    if (!out || out->size() != 1) return false;
    vals.insert_or_assign(n.outputs[0], std::move(out->front()));
  }
  const auto it = vals.find(end);
  if (it == vals.end() || it->second.dtype() != DType::kF32 || it->second.numel() != kPoints)
    return false;
  const float* y = it->second.data<float>();
  for (int i = 0; i < kPoints; ++i) {
    const double x = xs[static_cast<size_t>(i)];
    if (!(std::abs(y[i] - ops::gelu_tanh(x)) <= 1e-3)) return false;
  }
  return true;
}

}  // namespace

std::optional<Unit> create_mlp(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  Unit u;
  u.label = n.describe();
  if (const std::optional<MlpNodes> m = mlp_from(b, n)) {
    const Graph& g = b.g;
    std::string ops;
    const ValueId h = g.node(m->add1).outputs[0];
    if (auto fn = half_chain_kernel(b, h, m->chain, &ops)) {
      const Node &a1 = g.node(m->add1), &mm2 = g.node(m->mm2), &a2 = g.node(m->add2);
      std::vector<NodeId> nodes{m->add1};
      nodes.insert(nodes.end(), m->chain.begin(), m->chain.end());
      nodes.push_back(m->mm2);
      nodes.push_back(m->add2);
      for (NodeId id : nodes) {
        b.used[static_cast<size_t>(id)] = true;
        absorbed->push_back(id);
      }
      const ValueId b1 = a1.inputs[0] == n.outputs[0] ? a1.inputs[1] : a1.inputs[0];
      const ValueId b2 = a2.inputs[0] == mm2.outputs[0] ? a2.inputs[1] : a2.inputs[0];
      u.label += " MLP +Add+" + std::to_string(m->chain.size()) + " element-wise+MatMul+Add";
      u.inputs = {n.inputs[0], n.inputs[1], b1, mm2.inputs[1], b2};
      u.outputs = {a2.outputs[0]};
      const bool gelu = chain_is_gelu(b, h, m->chain, mm2.inputs[0]);
      u.op = std::make_unique<MlpOp>(b.settings, b.chains, *fn, ops, n.inputs[1], b1, mm2.inputs[1],
                                     b2, gelu);
      return u;
    } else {
      HONE_LOG_DEBUG("cuda: {}: no MLP unit: {}", u.label, fn.error().message());
    }
  }
  return std::nullopt;
}

}  // namespace hone::cuda
