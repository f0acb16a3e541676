// Private to the cuda backend: what the dense units (ops_dense.cpp: Gemm,
// MatMul, MatMul + bias; ops_mlp.cpp: a transformer MLP) share: their
// operands in bf16/f16, the timed choice between precisions, cuBLASLt's
// bias-epilogue products (gemm.cpp), and a MatMul's bias Add.
//
//   HONE_TRY(auto lts, lt_matmul_bias(M, N, K, {.half = half}));   // one per algorithm
//   OpPlan p = lt_plan("matmul", out, M, N, K, half, lts->front(), 0);
//   if (NodeId add = bias_add_of(b, n); add >= 0) ...             // fuse the bias Add
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/op.h"
#include "backends/cuda/op_timer.h"

namespace hone::cuda {

/// A product's operands as it reads them: the bound f32 inputs, or in
/// bf16/f16 (`half`) A converted into the workspace and B the copy made at
/// build, else converted after A. `na`, `nb`: their element counts.
[[nodiscard]] Result<std::pair<CUdeviceptr, CUdeviceptr>> product_operands(const ExecCtx& c,
                                                                           const Bind& bind,
                                                                           int64_t na, int64_t nb,
                                                                           int half);

/// Under precision=bf16/fp16 with gemm_select=time: the product on bf16/f16
/// operands (`reduced`, with its conversions) or SGEMM in the build's math
/// mode (`full`, TF32), whichever runs these shapes faster (fastest(), so
/// timed once per process and shape, recorded and replayed per backend):
/// small or oddly shaped products, such as attention's per-head ones over
/// 197 tokens, can lose to TF32 once their operands must be converted on
/// every run. `problem`: the product's flags beyond its kernel ids and dims.
[[nodiscard]] Result<OpPlan> pick(const std::string& label, const std::vector<int64_t>& problem,
                                  const std::vector<dims_t>& in, OpPlan reduced, OpPlan full,
                                  const BuildSettings& s);

/// cuBLASLt descriptors of one product shape, destroyed with the plan.
struct LtMatmul {
  const Api* a = nullptr;
  LtHandle desc = nullptr, la = nullptr, lb = nullptr, lc = nullptr;
  LtAlgo algo{};
  size_t workspace = 0;
  std::mutex mu;  // the bias pointer is set on the shared descriptor before each enqueue
  ~LtMatmul() {
    if (!a) return;
    if (desc) a->cublasLtMatmulDescDestroy(desc);
    for (LtHandle l : {la, lb, lc})
      if (l) a->cublasLtMatrixLayoutDestroy(l);
  }
};

/// How lt_matmul_bias() describes a product.
struct LtOptions {
  int half = 0;       // bf16/f16 operands (their cudaDataType), or 0: f32
  bool tf32 = false;  // f32 operands on TF32 tensor cores
  bool tb = false;    // B stored [N, K]
  /// With a `half`: A and B stay f32 and cuBLASLt rounds them to bf16/f16
  /// itself (CUBLAS_COMPUTE_32F_FAST_16BF/16F), no conversion pass.
  bool f32_in = false;
  int want = 3;  // algorithms at most
  /// Y's cudaDataType; a bf16/f16 Y takes its bias in that type too.
  int y_type = kCudaR32F;
  /// GELU (cuBLASLt's tanh form) after the bias, in the same epilogue.
  bool gelu = false;
  /// false: no bias (cuBLASLt's default epilogue; `gelu` is ignored).
  bool bias = true;
};

/// Y[M, N] = A[M, K] · B[K, N] + bias[N] with the bias in cuBLASLt's epilogue
/// (or without a bias, LtOptions::bias):
/// one per algorithm of cuBLASLt's heuristic for the shape (at most
/// `o.want`, its best guess first), or why cuBLASLt cannot (no library, no
/// algorithm).
[[nodiscard]] Result<std::vector<std::shared_ptr<LtMatmul>>> lt_matmul_bias(int64_t M, int64_t N,
                                                                            int64_t K,
                                                                            const LtOptions& o);

/// Enqueues Y = A · B + bias on `lt` (column-major, as cuBLAS: Yᵀ = Bᵀ · Aᵀ),
/// its workspace at `ws`. The bias pointer (0: `lt` has none) is set on
/// `lt`'s descriptor, so the enqueue holds `lt`'s lock.
[[nodiscard]] Result<void> lt_enqueue(const ExecCtx& c, LtMatmul& lt, CUdeviceptr A, CUdeviceptr B,
                                      CUdeviceptr bias, CUdeviceptr Y, CUdeviceptr ws);

/// A plan running `lt`'s product (Y = A · B + bias[N]; bias: input 2).
/// `rank`: the algorithm's place in cuBLASLt's heuristic (0: its best guess),
/// part of the kernel's name. `bt`: B's f32 copy stored [N, K] (`lt` made
/// with tb), used instead of input 1; its kernel ids end in ".t". `f32_in`:
/// `lt` was made so (f32 operands rounded by cuBLASLt); its ids end in ".f32in".
OpPlan lt_plan(const std::string& op, const dims_t& out, int64_t M, int64_t N, int64_t K, int half,
               std::shared_ptr<LtMatmul> lt, size_t rank,
               std::shared_ptr<const DeviceBuffer> bt = nullptr, bool f32_in = false);

/// A constant bias's bf16/f16 copy on the device, for a product that writes
/// bf16/f16 and so takes its bias in that type: made on first use from the
/// value's contents (PlanEnv), kept while a plan holds it, shared by the
/// plans of one unit (its shape signatures).
class HalfBias {
 public:
  explicit HalfBias(ValueId bias) : bias_(bias) {}
  /// The copy, or why not (the bias is no known f32 constant; no device).
  [[nodiscard]] Result<std::shared_ptr<const DeviceBuffer>> get(const PlanEnv& env, int half) const;

 private:
  ValueId bias_;
  mutable std::mutex mu_;
  mutable std::weak_ptr<const DeviceBuffer> kept_;
};

/// Half-precision activations (storage.h): a plan running `lt`'s product
/// (made with y_type = `half`) on input 0 as stored (half, row-major) and
/// input 1's bf16/f16 copy (made at build, else converted into the
/// workspace), writing a bf16/f16 Y (N columns) viewed as `out`, the bias's half
/// copy in the epilogue. Kernel id OP.bf16|f16.cuda.cublaslt+bias half_io;
/// with no `bias` (`lt` made without one), OP.bf16|f16.cuda.cublaslt half_io.
OpPlan lt_half_io_plan(const std::string& op, const dims_t& out, int64_t N, int64_t K, int half,
                       std::shared_ptr<LtMatmul> lt, std::shared_ptr<const DeviceBuffer> bias);

/// Under precision=bf16/fp16: cuBLASLt's bias-epilogue plans on the f32
/// operands as they are, rounded by cuBLASLt (no conversion pass before the
/// product), for the timed choice against those on converted operands.
void add_f32_in(std::vector<OpPlan>& cands, const std::string& op, const dims_t& out, int64_t M,
                int64_t N, int64_t K, int half, bool tb, const std::string& label);

/// The Add of a constant bias over the last dim of MatMul `n`'s output, when
/// `n` multiplies by a constant 2-D weight and nothing else reads its output;
/// else -1.
NodeId bias_add_of(const BlockInfo& b, const Node& n);
/// The MLP unit (MlpOp, ops_mlp.cpp) starting at MatMul `n`, or nothing when
/// `n` starts none (why, when a chain was found, is logged at debug level).
std::optional<Unit> create_mlp(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed);

}  // namespace hone::cuda
