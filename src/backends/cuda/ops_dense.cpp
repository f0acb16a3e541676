// Dense ops on cuBLAS: SGEMM, or with precision=bf16/fp16 cublasGemmStridedBatchedEx
// on bf16/f16 operands into an f32 result, summed in f32. Operands that are
// constants were converted once at build (Bind::half); the others are
// converted into the workspace by hone_to_half before each product. cuBLAS is
// column-major and hone row-major: a row-major [r, c] matrix is the
// column-major [c, r] one, so Y = A·B is computed as Yᵀ = Bᵀ·Aᵀ by swapping
// the operands (no data moves). A MatMul by a constant weight with a bias
// Add after it is one unit (gemm_epilogue): cuBLASLt's bias epilogue, each
// algorithm of its heuristic, with f32 operands also on a copy of the weight
// stored [N, K], timed against the bias broadcast into Y before an SGEMM.
// Under bf16/fp16, a transformer MLP (MatMul + bias, element-wise chain,
// MatMul + bias) is one unit whose hidden activation stays bf16/f16 (MlpOp).
// Conv lives in ops_conv.cpp.
#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "backends/cuda/kernels.h"
#include "backends/cuda/op_timer.h"
#include "core/log.h"

#include "backends/cuda/op.h"

namespace hone::cuda {

/// Row-major Y[M, N] = alpha * A[M, K] · B[K, N] + beta * Y, `batch` times
/// with the given element strides (0 repeats an operand).
Result<void> gemm_rm(const ExecCtx& c, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                     float alpha, CUdeviceptr a, int64_t sa, CUdeviceptr b, int64_t sb, float beta,
                     CUdeviceptr y, int64_t sy, int64_t batch, int half) {
  const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n);
  if (half != 0)
    return c.d.check_blas(
        c.d.api().cublasGemmStridedBatchedEx(
            c.blas, tb ? kCublasOpT : kCublasOpN, ta ? kCublasOpT : kCublasOpN, static_cast<int>(n),
            static_cast<int>(m), static_cast<int>(k), &alpha, reinterpret_cast<const void*>(b),
            half, ldb, sb, reinterpret_cast<const void*>(a), half, lda, sa, &beta,
            reinterpret_cast<void*>(y), kCudaR32F, static_cast<int>(n), sy, static_cast<int>(batch),
            kCublasCompute32F, kCublasGemmDefault),
        "cublasGemmStridedBatchedEx");
  const auto* A = reinterpret_cast<const float*>(a);
  const auto* B = reinterpret_cast<const float*>(b);
  auto* Y = reinterpret_cast<float*>(y);
  const int opa = ta ? kCublasOpT : kCublasOpN, opb = tb ? kCublasOpT : kCublasOpN;
  if (batch == 1)
    return c.d.check_blas(c.d.api().cublasSgemm(c.blas, opb, opa, static_cast<int>(n),
                                                static_cast<int>(m), static_cast<int>(k), &alpha, B,
                                                ldb, A, lda, &beta, Y, static_cast<int>(n)),
                          "cublasSgemm");
  return c.d.check_blas(
      c.d.api().cublasSgemmStridedBatched(
          c.blas, opb, opa, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha,
          B, ldb, sb, A, lda, sa, &beta, Y, static_cast<int>(n), sy, static_cast<int>(batch)),
      "cublasSgemmStridedBatched");
}

std::string gemm_kernel(const std::string& op, const std::string& sgemm, int half) {
  if (half == 0) return op + ".f32.cuda." + sgemm;
  std::string k = sgemm;  // "im2col+sgemm" -> "im2col+gemm_ex"
  if (const size_t at = k.find("sgemm"); at != std::string::npos) k.replace(at, 5, "gemm_ex");
  return op + (half == kCudaR16BF ? ".bf16" : ".f16") + ".cuda." + k;
}

size_t half_bytes(int64_t n) {
  return (static_cast<size_t>(n) * 2 + 255) / 256 * 256;
}

Result<CUdeviceptr> to_half(const ExecCtx& c, CUdeviceptr x, int64_t n, CUdeviceptr dst, int half) {
  HONE_TRY(CUfunction f, c.fixed.function("hone_to_half"));
  long long count = n;
  int bf16 = half == kCudaR16BF ? 1 : 0;
  HONE_CHECK_OK(launch_1d(c.d, f, c.stream, n, {&x, &dst, &count, &bf16}));
  return dst;
}

bool fits_int(std::initializer_list<int64_t> xs) {
  for (int64_t x : xs)
    if (x > (1LL << 31) - 1) return false;
  return true;
}

namespace {

/// A product's operands as it reads them: the bound f32 inputs, or in
/// bf16/f16 (`half`) A converted into the workspace and B the copy made at
/// build, else converted after A. `na`, `nb`: their element counts.
Result<std::pair<CUdeviceptr, CUdeviceptr>> product_operands(const ExecCtx& c, const Bind& bind,
                                                             int64_t na, int64_t nb, int half) {
  CUdeviceptr A = bind.in[0], B = bind.in[1];
  if (half == 0) return std::pair{A, B};
  HONE_TRY(A, to_half(c, A, na, bind.workspace, half));
  B = built_half(bind, 1);
  if (B == 0) {
    HONE_TRY(B, to_half(c, bind.in[1], nb, bind.workspace + half_bytes(na), half));
  }
  return std::pair{A, B};
}

/// Under precision=bf16/fp16 with gemm_select=time: the product on bf16/f16
/// operands (`reduced`, with its conversions) or SGEMM in the build's math
/// mode (`full`, TF32), whichever runs these shapes faster (fastest(), so
/// timed once per process and shape, recorded and replayed per backend):
/// small or oddly shaped products, such as attention's per-head ones over
/// 197 tokens, can lose to TF32 once their operands must be converted on
/// every run. `problem`: the product's flags beyond its kernel ids and dims.
Result<OpPlan> pick(const std::string& label, const std::vector<int64_t>& problem,
                    const std::vector<dims_t>& in, OpPlan reduced, OpPlan full,
                    const BuildSettings& s) {
  std::string flags = "product";
  for (int64_t x : problem) flags += " " + std::to_string(x);
  std::vector<OpPlan> cands;
  cands.push_back(std::move(reduced));
  cands.push_back(std::move(full));
  return fastest(label, in, std::move(cands), s, {}, flags);
}

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
};

/// Y[M, N] = A[M, K] · B[K, N] + bias[N] with the bias in cuBLASLt's epilogue:
/// one per algorithm of cuBLASLt's heuristic for the shape (at most
/// `o.want`, its best guess first), or why cuBLASLt cannot (no library, no
/// algorithm).
Result<std::vector<std::shared_ptr<LtMatmul>>> lt_matmul_bias(int64_t M, int64_t N, int64_t K,
                                                              const LtOptions& o) {
  const int half = o.half, want = o.want;
  const bool tb = o.tb;
  HONE_TRY(const Driver* d, Driver::get());
  if (d->lt() == nullptr)
    return fail(ErrorCode::kUnsupported, "cuBLASLt not found: " + d->lt_why_not());
  HONE_CHECK_OK(d->make_current());
  const Api& a = d->api();
  int compute = half == 0 && o.tf32 ? kCublasCompute32FFastTf32 : kCublasCompute32F;
  if (half != 0 && o.f32_in)
    compute = half == kCudaR16BF ? kCublasCompute32FFast16BF : kCublasCompute32FFast16F;
  // Column-major, as cuBLAS: Yᵀ[N, M] = Bᵀ[N, K] · Aᵀ[K, M], the bias along Yᵀ's rows.
  // A B stored [N, K] (tb) is column-major [K, N], transposed by the product.
  const int ab = half != 0 && !o.f32_in ? half : kCudaR32F;
  // Each algorithm gets descriptors of its own: a plan sets its bias pointer
  // on its descriptor before each enqueue.
  auto describe = [&]() -> Result<std::shared_ptr<LtMatmul>> {
    auto lt = std::make_shared<LtMatmul>();
    lt->a = &a;
    HONE_CHECK_OK(d->check_blas(a.cublasLtMatmulDescCreate(&lt->desc, compute, kCudaR32F),
                                "cublasLtMatmulDescCreate"));
    const uint32_t epilogue = kLtEpilogueBias;
    HONE_CHECK_OK(d->check_blas(
        a.cublasLtMatmulDescSetAttribute(lt->desc, kLtDescEpilogue, &epilogue, sizeof(epilogue)),
        "cublasLtMatmulDescSetAttribute"));
    if (tb) {
      const int32_t t = kCublasOpT;
      HONE_CHECK_OK(
          d->check_blas(a.cublasLtMatmulDescSetAttribute(lt->desc, kLtDescTransA, &t, sizeof(t)),
                        "cublasLtMatmulDescSetAttribute"));
    }
    HONE_CHECK_OK(
        d->check_blas(a.cublasLtMatrixLayoutCreate(&lt->la, ab, tb ? K : N, tb ? N : K, tb ? K : N),
                      "cublasLtMatrixLayoutCreate"));
    HONE_CHECK_OK(d->check_blas(a.cublasLtMatrixLayoutCreate(&lt->lb, ab, K, M, K),
                                "cublasLtMatrixLayoutCreate"));
    HONE_CHECK_OK(d->check_blas(a.cublasLtMatrixLayoutCreate(&lt->lc, o.y_type, N, M, N),
                                "cublasLtMatrixLayoutCreate"));
    return lt;
  };
  HONE_TRY(std::shared_ptr<LtMatmul> first, describe());
  LtHandle pref = nullptr;
  HONE_CHECK_OK(
      d->check_blas(a.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate"));
  const uint64_t max_ws = 16u << 20;
  std::vector<LtHeuristic> h(static_cast<size_t>(std::max(want, 1)));
  int count = 0;
  auto found = [&]() -> Result<void> {
    HONE_CHECK_OK(d->check_blas(
        a.cublasLtMatmulPreferenceSetAttribute(pref, kLtPrefMaxWorkspace, &max_ws, sizeof(max_ws)),
        "cublasLtMatmulPreferenceSetAttribute"));
    return d->check_blas(a.cublasLtMatmulAlgoGetHeuristic(
                             d->lt(), first->desc, first->la, first->lb, first->lc, first->lc, pref,
                             static_cast<int>(h.size()), h.data(), &count),
                         "cublasLtMatmulAlgoGetHeuristic");
  }();
  a.cublasLtMatmulPreferenceDestroy(pref);
  if (!found) return fail(std::move(found).error());
  std::vector<std::shared_ptr<LtMatmul>> out;
  for (int i = 0; i < std::min(count, static_cast<int>(h.size())); ++i) {
    if (h[static_cast<size_t>(i)].state != 0) continue;
    std::shared_ptr<LtMatmul> lt = first;
    if (!out.empty()) {
      HONE_TRY(lt, describe());
    }
    lt->algo = h[static_cast<size_t>(i)].algo;
    lt->workspace = (h[static_cast<size_t>(i)].workspace_size + 255) / 256 * 256;
    out.push_back(std::move(lt));
  }
  if (out.empty())
    return fail(ErrorCode::kUnsupported, "cuBLASLt has no bias-epilogue algorithm for this shape");
  return out;
}

/// Enqueues Y = A · B + bias on `lt` (column-major, as cuBLAS: Yᵀ = Bᵀ · Aᵀ),
/// its workspace at `ws`. The bias pointer is set on `lt`'s descriptor, so
/// the enqueue holds `lt`'s lock.
Result<void> lt_enqueue(const ExecCtx& c, LtMatmul& lt, CUdeviceptr A, CUdeviceptr B,
                        CUdeviceptr bias, CUdeviceptr Y, CUdeviceptr ws) {
  const float one = 1.0f, zero = 0.0f;
  const Api& a = c.d.api();
  std::lock_guard lock(lt.mu);
  const void* bp = reinterpret_cast<const void*>(bias);
  HONE_CHECK_OK(
      c.d.check_blas(a.cublasLtMatmulDescSetAttribute(lt.desc, kLtDescBiasPointer, &bp, sizeof(bp)),
                     "cublasLtMatmulDescSetAttribute"));
  void* y = reinterpret_cast<void*>(Y);
  return c.d.check_blas(
      a.cublasLtMatmul(c.d.lt(), lt.desc, &one, reinterpret_cast<const void*>(B), lt.la,
                       reinterpret_cast<const void*>(A), lt.lb, &zero, y, lt.lc, y, lt.lc, &lt.algo,
                       reinterpret_cast<void*>(ws), lt.workspace, c.stream),
      "cublasLtMatmul");
}

/// A plan running `lt`'s product (Y = A · B + bias[N]; bias: input 2).
/// `rank`: the algorithm's place in cuBLASLt's heuristic (0: its best guess),
/// part of the kernel's name. `bt`: B's f32 copy stored [N, K] (`lt` made
/// with tb), used instead of input 1; its kernel ids end in ".t". `f32_in`:
/// `lt` was made so (f32 operands rounded by cuBLASLt); its ids end in ".f32in".
OpPlan lt_plan(const std::string& op, const dims_t& out, int64_t M, int64_t N, int64_t K, int half,
               std::shared_ptr<LtMatmul> lt, size_t rank,
               std::shared_ptr<const DeviceBuffer> bt = nullptr, bool f32_in = false) {
  OpPlan p;
  p.outputs = {out};
  p.kernel = gemm_kernel(op, "sgemm", half);
  p.kernel.replace(p.kernel.rfind('.') + 1, std::string::npos,
                   std::string(bt ? "cublaslt+bias.t" : "cublaslt+bias") +
                       (f32_in ? ".f32in" : "") + (rank == 0 ? "" : ".h" + std::to_string(rank)));
  const int convert = f32_in ? 0 : half;  // the half type operands are converted to, or 0
  const size_t ha = convert != 0 ? half_bytes(M * K) : 0, hb = convert != 0 ? half_bytes(K * N) : 0;
  p.workspace_bytes = ha + hb + lt->workspace;
  p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
    HONE_TRY(auto operands, product_operands(c, bind, M * K, K * N, convert));
    if (bt) operands.second = bt->ptr();
    const auto [A, B] = operands;
    return lt_enqueue(c, *lt, A, B, bind.in[2], bind.out[0], bind.workspace + ha + hb);
  };
  return p;
}

/// Under precision=bf16/fp16: cuBLASLt's bias-epilogue plans on the f32
/// operands as they are, rounded by cuBLASLt (no conversion pass before the
/// product), for the timed choice against those on converted operands.
void add_f32_in(std::vector<OpPlan>& cands, const std::string& op, const dims_t& out, int64_t M,
                int64_t N, int64_t K, int half, bool tb, const std::string& label) {
  if (auto lts = lt_matmul_bias(M, N, K, {.half = half, .tb = tb, .f32_in = true, .want = 2}))
    for (size_t r = 0; r < lts->size(); ++r)
      cands.push_back(lt_plan(op, out, M, N, K, half, (*lts)[r], r, nullptr, true));
  else
    HONE_LOG_DEBUG("cuda: {}: f32 operands: {}", label, lts.error().message());
}

class GemmOp final : public Op {
 public:
  GemmOp(const Node& n, bool has_c, BuildSettings s)
      : ta_(n.attr_int("transA", 0) != 0),
        tb_(n.attr_int("transB", 0) != 0),
        alpha_(n.attr_float("alpha", 1.0f)),
        beta_(n.attr_float("beta", 1.0f)),
        has_c_(has_c),
        s_(std::move(s)),
        label_(n.describe()) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
    HONE_TRY(OpPlan p, plan_with(in, s_.math.half));
    std::vector<OpPlan> lt = with_lt(in);
    if (!lt.empty()) {
      // C a bias over N: cuBLASLt's epilogue against the broadcast copy, timed;
      // the plain cuBLAS plan is the reference the epilogue must match.
      Check check;
      check.reference = static_cast<int>(lt.size());
      check.tolerance = check_tolerance(s_.math.half, s_.math.tf32);
      lt.push_back(std::move(p));
      if (s_.math.half != 0 && s_.gemm.by_time) {
        HONE_TRY(OpPlan full, plan_with(in, 0));
        lt.push_back(std::move(full));
      }
      return fastest(label_, in, std::move(lt), s_, check, tb_ ? "gemm tb" : "gemm");
    }
    if (s_.math.half == 0 || !s_.gemm.by_time) return p;
    HONE_TRY(OpPlan full, plan_with(in, 0));
    return pick(label_, {0, s_.math.half, ta_, tb_, has_c_, beta_ != 0.0f}, in, std::move(p),
                std::move(full), s_);
  }

 private:
  /// cuBLASLt bias-epilogue plans when C is a bias over N (alpha = beta = 1, A not transposed).
  std::vector<OpPlan> with_lt(const std::vector<dims_t>& in) const {
    std::vector<OpPlan> out;
    if (!s_.gemm.epilogue || !has_c_ || alpha_ != 1.0f || beta_ != 1.0f || ta_ ||
        in[0].size() != 2 || in[1].size() != 2)
      return out;
    const int64_t M = in[0][0], K = in[0][1], N = tb_ ? in[1][0] : in[1][1];
    if ((tb_ ? in[1][1] : in[1][0]) != K || numel_of(in[2]) != N || in[2].back() != N ||
        in[2].size() > 2 || !fits_int({M, N, K}))
      return out;
    std::vector<int> halves{s_.math.half};
    if (s_.math.half != 0 && s_.gemm.by_time) halves.push_back(0);
    for (int half : halves) {
      if (auto lts = lt_matmul_bias(M, N, K, {.half = half, .tf32 = s_.math.tf32, .tb = tb_}))
        for (size_t r = 0; r < lts->size(); ++r)
          out.push_back(lt_plan("gemm", {M, N}, M, N, K, half, (*lts)[r], r));
      else
        HONE_LOG_DEBUG("cuda: {}: {}", label_, lts.error().message());
    }
    if (s_.math.half != 0) add_f32_in(out, "gemm", {M, N}, M, N, K, s_.math.half, tb_, label_);
    return out;
  }

  Result<OpPlan> plan_with(const std::vector<dims_t>& in, int half) const {
    const dims_t &a = in[0], &b = in[1];
    if (a.size() != 2 || b.size() != 2)
      return fail(ErrorCode::kInvalidArgument, "Gemm needs 2-D A and B, got " + shape_to_string(a) +
                                                   " and " + shape_to_string(b));
    const int64_t M = ta_ ? a[1] : a[0], K = ta_ ? a[0] : a[1];
    const int64_t N = tb_ ? b[0] : b[1], Kb = tb_ ? b[1] : b[0];
    if (K != Kb)
      return fail(ErrorCode::kInvalidArgument,
                  "Gemm inner dims differ: A " + shape_to_string(a) + ", B " + shape_to_string(b));
    if (!fits_int({M, N, K})) return fail(ErrorCode::kUnsupported, "Gemm too large for cuBLAS");
    const bool use_c = has_c_ && beta_ != 0.0f;
    dims_t cst;
    if (use_c) {
      HONE_TRY(dims_t bc, broadcast(in[2], {M, N}));
      if (bc != dims_t{M, N})
        return fail(ErrorCode::kInvalidArgument,
                    "Gemm C " + shape_to_string(in[2]) + " does not broadcast to [M, N]");
      cst = broadcast_strides(in[2], {M, N});
    }
    OpPlan p;
    p.outputs = {{M, N}};
    p.kernel = gemm_kernel("gemm", "sgemm", half) + (use_c ? " +c" : "");
    const bool ta = ta_, tb = tb_;
    const int64_t na = numel_of(a), nb = numel_of(b);
    if (half != 0) p.workspace_bytes = half_bytes(na) + half_bytes(nb);
    const float alpha = alpha_, beta = use_c ? beta_ : 0.0f;
    p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
      if (use_c) HONE_CHECK_OK(strided_copy(c, bind.in[2], bind.out[0], {M, N}, cst, {N, 1}));
      HONE_TRY(const auto operands, product_operands(c, bind, na, nb, half));
      const auto [A, B] = operands;
      return gemm_rm(c, ta, tb, M, N, K, alpha, A, 0, B, 0, beta, bind.out[0], 0, 1, half);
    };
    return p;
  }

  bool ta_, tb_;
  float alpha_, beta_;
  bool has_c_;
  BuildSettings s_;
  std::string label_;
};

class MatMulOp final : public Op {
 public:
  MatMulOp(const Node& n, BuildSettings s) : s_(std::move(s)), label_(n.describe()) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
    HONE_TRY(OpPlan p, plan_with(in, s_.math.half));
    if (s_.math.half == 0 || !s_.gemm.by_time) return p;
    HONE_TRY(OpPlan full, plan_with(in, 0));
    return pick(label_, {1, s_.math.half}, in, std::move(p), std::move(full), s_);
  }

 private:
  Result<OpPlan> plan_with(const std::vector<dims_t>& in, int half) const {
    dims_t a = in[0], b = in[1];
    if (a.empty() || b.empty()) return fail(ErrorCode::kInvalidArgument, "MatMul of a scalar");
    const bool va = a.size() == 1, vb = b.size() == 1;
    if (va) a.insert(a.begin(), 1);
    if (vb) b.push_back(1);
    const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
    if (b[b.size() - 2] != K)
      return fail(
          ErrorCode::kInvalidArgument,
          "MatMul inner dims differ: " + shape_to_string(in[0]) + " and " + shape_to_string(in[1]));
    const dims_t ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    HONE_TRY(dims_t batch, broadcast(ba, bb));
    dims_t out = batch;
    if (!va) out.push_back(M);
    if (!vb) out.push_back(N);
    const int64_t nb = numel_of(batch), na = numel_of(ba), nbb = numel_of(bb);
    if (!fits_int({M * nb, N, K}))
      return fail(ErrorCode::kUnsupported, "MatMul too large for cuBLAS");
    OpPlan p;
    p.outputs = {out};
    // Batches: one tall SGEMM when B is shared and A is not broadcast; a
    // strided batch when each side is either whole or shared; else one
    // SGEMM per output batch with broadcast offsets.
    const bool tall = nbb == 1 && na == nb;
    const bool strided = (na == nb || na == 1) && (nbb == nb || nbb == 1);
    p.kernel = gemm_kernel("matmul",
                           tall      ? "sgemm"
                           : strided ? "sgemm_batched"
                                     : "sgemm_loop",
                           half);
    const int64_t ea = numel_of(a), eb = numel_of(b);
    if (half != 0) p.workspace_bytes = half_bytes(ea) + half_bytes(eb);
    const int64_t esize = half != 0 ? 2 : 4;  // operand bytes per element
    const dims_t sa = broadcast_strides(ba, batch), sb = broadcast_strides(bb, batch);
    p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
      HONE_TRY(const auto operands, product_operands(c, bind, ea, eb, half));
      const auto [A, B] = operands;
      const CUdeviceptr Y = bind.out[0];
      if (tall)
        return gemm_rm(c, false, false, M * nb, N, K, 1.0f, A, 0, B, 0, 0.0f, Y, 0, 1, half);
      if (strided)
        return gemm_rm(c, false, false, M, N, K, 1.0f, A, na == 1 ? 0 : M * K, B,
                       nbb == 1 ? 0 : K * N, 0.0f, Y, M * N, nb, half);
      for (int64_t i = 0; i < nb; ++i) {
        int64_t oa = 0, ob = 0, r = i;
        for (size_t d = batch.size(); d-- > 0;) {
          const int64_t coord = r % batch[d];
          r /= batch[d];
          oa += coord * sa[d];
          ob += coord * sb[d];
        }
        HONE_CHECK_OK(gemm_rm(c, false, false, M, N, K, 1.0f,
                              A + static_cast<CUdeviceptr>(oa * M * K * esize), 0,
                              B + static_cast<CUdeviceptr>(ob * K * N * esize), 0, 0.0f,
                              Y + static_cast<CUdeviceptr>(i * M * N) * sizeof(float), 0, 1, half));
      }
      return {};
    };
    return p;
  }

  BuildSettings s_;
  std::string label_;
};

/// MatMul by a constant [K, N] weight, then Add of a constant [N] bias: the
/// bias in cuBLASLt's epilogue, or the bias broadcast into Y and the product
/// added to it (beta = 1); timed, the faster kept.
class MatMulBiasOp final : public Op {
 public:
  MatMulBiasOp(std::string label, BuildSettings s, ValueId weight)
      : s_(std::move(s)), label_(std::move(label)), weight_(weight) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
    const dims_t &a = in[0], &b = in[1];
    if (a.size() < 2 || b.size() != 2)
      return fail(ErrorCode::kInvalidArgument,
                  "MatMul+bias needs A of rank 2 or more and a 2-D B, got " + shape_to_string(a) +
                      " and " + shape_to_string(b));
    const int64_t K = a.back(), N = b[1];
    if (b[0] != K)
      return fail(ErrorCode::kInvalidArgument,
                  "MatMul inner dims differ: " + shape_to_string(a) + " and " + shape_to_string(b));
    if (numel_of(in[2]) != N)
      return fail(ErrorCode::kInvalidArgument,
                  "bias " + shape_to_string(in[2]) + " is not [" + std::to_string(N) + "]");
    const int64_t M = numel_of(a) / K;
    if (!fits_int({M, N, K})) return fail(ErrorCode::kUnsupported, "MatMul too large for cuBLAS");
    dims_t out = a;
    out.back() = N;
    // The first candidate (cuBLAS in the build's precision) is the reference
    // the others must match on random data.
    std::vector<OpPlan> cands{with_prefill(out, M, N, K, s_.math.half)};
    std::vector<int> halves{s_.math.half};
    if (s_.math.half != 0 && s_.gemm.by_time) halves.push_back(0);
    for (int half : halves) {
      if (auto lts = lt_matmul_bias(M, N, K, {.half = half, .tf32 = s_.math.tf32})) {
        for (size_t r = 0; r < lts->size(); ++r)
          cands.push_back(lt_plan("matmul", out, M, N, K, half, (*lts)[r], r));
      } else {
        HONE_LOG_DEBUG("cuda: {}: {}", label_, lts.error().message());
      }
      if (half != s_.math.half) cands.push_back(with_prefill(out, M, N, K, half));
    }
    if (s_.math.half != 0) add_f32_in(cands, "matmul", out, M, N, K, s_.math.half, false, label_);
    // f32 operands: cuBLASLt again with the weight stored [N, K] (a copy
    // made now), as a Linear layer keeps it: for some shapes its heuristic
    // offers faster kernels for that layout than for [K, N].
    Check check;
    check.reference = 0;
    check.tolerance = check_tolerance(s_.math.half, s_.math.tf32);
    if (s_.math.half == 0)
      if (auto bt = transposed_weight(env, K, N)) {
        if (auto lts = lt_matmul_bias(M, N, K, {.tf32 = s_.math.tf32, .tb = true})) {
          for (size_t r = 0; r < lts->size(); ++r)
            cands.push_back(lt_plan("matmul", out, M, N, K, 0, (*lts)[r], r, *bt));
          // Those read the real weight's copy: the check and the timing run
          // every candidate on the real weight, not on random values.
          check.fixed = {nullptr, env.value(weight_), nullptr};
        }
      }
    return fastest(label_, in, std::move(cands), s_, check);
  }

 private:
  /// The constant weight [K, N] transposed to [N, K] on the device, or
  /// nothing when its contents are not known here.
  std::optional<std::shared_ptr<const DeviceBuffer>> transposed_weight(const PlanEnv& env,
                                                                       int64_t K, int64_t N) const {
    const Tensor* w = env.value ? env.value(weight_) : nullptr;
    if (w == nullptr || w->dtype() != DType::kF32 || w->numel() != K * N) return std::nullopt;
    // One copy for every plan of this unit that keeps it (its shape signatures).
    std::lock_guard lock(mu_);
    if (auto kept = transposed_.lock()) return kept;
    const float* src = w->data<float>();
    std::vector<float> t(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) t[static_cast<size_t>(n * K + k)] = src[k * N + n];
    auto d = Driver::get();
    if (!d) return std::nullopt;
    auto buf = DeviceBuffer::upload(**d, t.data(), t.size() * sizeof(float));
    if (!buf) return std::nullopt;
    auto made = std::make_shared<const DeviceBuffer>(std::move(*buf));
    transposed_ = made;
    return made;
  }

  static OpPlan with_prefill(const dims_t& out, int64_t M, int64_t N, int64_t K, int half) {
    OpPlan p;
    p.outputs = {out};
    p.kernel = gemm_kernel("matmul", "sgemm", half) + " +bias";
    const size_t ha = half != 0 ? half_bytes(M * K) : 0;
    if (half != 0) p.workspace_bytes = ha + half_bytes(K * N);
    p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
      HONE_CHECK_OK(strided_copy(c, bind.in[2], bind.out[0], {M, N}, {0, 1}, {N, 1}));
      HONE_TRY(const auto operands, product_operands(c, bind, M * K, K * N, half));
      const auto [A, B] = operands;
      return gemm_rm(c, false, false, M, N, K, 1.0f, A, 0, B, 0, 1.0f, bind.out[0], 0, 1, half);
    };
    return p;
  }

  BuildSettings s_;
  std::string label_;
  ValueId weight_;
  mutable std::mutex mu_;
  mutable std::weak_ptr<const DeviceBuffer> transposed_;
};

/// A constant f32 vector as bf16/f16 (`half`) on the device, or why not.
Result<std::shared_ptr<const DeviceBuffer>> half_vector(const Tensor* t, int half) {
  if (t == nullptr || t->dtype() != DType::kF32)
    return fail(ErrorCode::kUnsupported, "the bias is not a known f32 constant");
  HONE_TRY(const Driver* d, Driver::get());
  HONE_TRY(DeviceBuffer buf,
           upload_half(*d, t->data<float>(), static_cast<size_t>(t->numel()), half));
  return std::make_shared<const DeviceBuffer>(std::move(buf));
}

/// Under precision=bf16/fp16: a transformer MLP, MatMul + bias, an
/// element-wise chain (GELU), MatMul + bias, as one unit whose hidden
/// activation stays bf16/f16 in the workspace. The first product writes it
/// (cuBLASLt, bias epilogue, bf16/f16 out), the chain rewrites it in place
/// and the second product reads it as its A operand: no f32 copy of the
/// hidden activation and no conversion pass before the second product.
/// Inputs: x, W1 [K, H], b1 [H], W2 [H, N], b2 [N]; output [..., N] f32.
class MlpOp final : public Op {
 public:
  MlpOp(BuildSettings s, std::shared_ptr<ChainModule> m, std::string fn, std::string ops,
        ValueId b1)
      : s_(std::move(s)),
        module_(std::move(m)),
        fn_(std::move(fn)),
        ops_(std::move(ops)),
        b1_(b1) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv& env) const override {
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
    HONE_TRY(auto l2, lt_matmul_bias(M, N, H, {.half = half, .want = 1}));
    std::shared_ptr<LtMatmul> g1 = l1.front(), g2 = l2.front();
    std::shared_ptr<const DeviceBuffer> bias1;
    {
      std::lock_guard lock(mu_);
      bias1 = bias1_.lock();
      if (!bias1) {
        HONE_TRY(bias1, half_vector(env.value ? env.value(b1_) : nullptr, half));
        bias1_ = bias1;
      }
    }
    if (!module_->module) return fail(ErrorCode::kInternal, "chain module not compiled");
    HONE_TRY(CUfunction chain, module_->module->function(fn_));
    OpPlan p;
    dims_t out = a;
    out.back() = N;
    p.outputs = {out};
    p.kernel = std::string("mlp.") + (half == kCudaR16BF ? "bf16" : "f16") +
               ".cuda.cublaslt+bias+nvrtc[" + ops_ + "]+cublaslt+bias";
    const size_t ha = half_bytes(M * K), hy = half_bytes(M * H);
    p.workspace_bytes = ha + hy + std::max(g1->workspace, g2->workspace);
    p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
      const CUdeviceptr w1 = built_half(bind, 1), w2 = built_half(bind, 3);
      if (w1 == 0 || w2 == 0) return fail(ErrorCode::kInternal, "MLP: weights without half copies");
      HONE_TRY(const CUdeviceptr x, to_half(c, bind.in[0], M * K, bind.workspace, half));
      CUdeviceptr y = bind.workspace + ha;
      const CUdeviceptr lws = y + hy;
      HONE_CHECK_OK(lt_enqueue(c, *g1, x, w1, bias1->ptr(), y, lws));
      long long groups = M * H / 4;
      int bf16 = half == kCudaR16BF ? 1 : 0;
      HONE_CHECK_OK(launch_1d(c.d, chain, c.stream, groups, {&y, &groups, &bf16}));
      return lt_enqueue(c, *g2, y, w2, bind.in[4], bind.out[0], lws);
    };
    return p;
  }

 private:
  BuildSettings s_;
  std::shared_ptr<ChainModule> module_;
  std::string fn_, ops_;
  ValueId b1_;
  mutable std::mutex mu_;
  mutable std::weak_ptr<const DeviceBuffer> bias1_;
};

/// The Add of a constant bias over the last dim of MatMul `n`'s output, when
/// `n` multiplies by a constant 2-D weight and nothing else reads its output.
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

Result<Unit> create_dense(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  if (n.op_type == "Conv") return create_conv(b, n, absorbed);
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
      u.op = std::make_unique<MlpOp>(b.settings, b.chains, *fn, ops, b1);
      return u;
    } else {
      HONE_LOG_DEBUG("cuda: {}: no MLP unit: {}", u.label, fn.error().message());
    }
  }
  if (const NodeId add = b.settings.gemm.epilogue ? bias_add_of(b, n) : -1; add >= 0) {
    const Node& a = b.g.node(add);
    b.used[static_cast<size_t>(add)] = true;
    absorbed->push_back(add);
    u.label += "+Add";
    u.inputs = {n.inputs[0], n.inputs[1], a.inputs[0] == n.outputs[0] ? a.inputs[1] : a.inputs[0]};
    u.outputs = {a.outputs[0]};
    u.op = std::make_unique<MatMulBiasOp>(u.label, b.settings, n.inputs[1]);
    return u;
  }
  const bool third = n.inputs.size() > 2 && n.inputs[2] >= 0;
  u.inputs = {n.inputs[0], n.inputs[1]};
  if (third) u.inputs.push_back(n.inputs[2]);
  u.outputs = {n.outputs[0]};
  if (n.op_type == "Gemm")
    u.op = std::make_unique<GemmOp>(n, third, b.settings);
  else
    u.op = std::make_unique<MatMulOp>(n, b.settings);
  return u;
}

}  // namespace hone::cuda
