// A transformer MLP as one cuda unit under precision=bf16/fp16: MatMul +
// bias, an element-wise chain (GELU), MatMul + bias, its hidden activation
// kept bf16/f16 (MlpOp). The plain products are in ops_dense.cpp.
#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "backends/cuda/dense.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/storage.h"
#include "core/log.h"

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
  MlpOp(BuildSettings s, std::shared_ptr<ChainModule> m, std::string fn, std::string ops,
        ValueId b1, ValueId b2)
      : s_(std::move(s)),
        module_(std::move(m)),
        fn_(std::move(fn)),
        ops_(std::move(ops)),
        bias1_(b1),
        bias2_(b2) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    return plan_with(in, env, false);
  }

  /// Half-precision activations (storage.h): x read as it is stored (half,
  /// row-major) and the output written bf16/f16 (the second product's bias
  /// taken as a half copy): no conversion on either side.
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>& have,
                           const PlanEnv& env) const override {
    if (have[0] != Storage::kHalf || !channels_last_is_row_major(in[0]))
      return fail(ErrorCode::kUnsupported, "x is not a row-major half tensor");
    return plan_with(in, env, true);
  }

 private:
  Result<OpPlan> plan_with(const std::vector<dims_t>& in, const PlanEnv& env, bool hio) const {
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
    const int half = s_.math.half;
    HONE_TRY(auto l1, lt_matmul_bias(M, H, K, {.half = half, .want = 1, .y_type = half}));
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
    p.kernel = std::string("mlp.") + (half == kCudaR16BF ? "bf16" : "f16") +
               ".cuda.cublaslt+bias+nvrtc[" + ops_ + "]+cublaslt+bias" + (hio ? " half_io" : "");
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
      long long groups = M * H / 4;
      int bf16 = half == kCudaR16BF ? 1 : 0;
      HONE_CHECK_OK(launch_1d(c.d, chain, c.stream, groups, {&y, &groups, &bf16}));
      return lt_enqueue(c, *g2, y, w2, hio ? bias2->ptr() : bind.in[4], bind.out[0], lws);
    };
    return p;
  }

  BuildSettings s_;
  std::shared_ptr<ChainModule> module_;
  std::string fn_, ops_;
  HalfBias bias1_, bias2_;
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
      u.op = std::make_unique<MlpOp>(b.settings, b.chains, *fn, ops, b1, b2);
      return u;
    } else {
      HONE_LOG_DEBUG("cuda: {}: no MLP unit: {}", u.label, fn.error().message());
    }
  }
  return std::nullopt;
}

}  // namespace hone::cuda
