// The matrix products of the cuda backend's dense units and its convs:
// cuBLAS (SGEMM, or cublasGemmStridedBatchedEx on bf16/f16 operands into an
// f32 result) and cuBLASLt with the bias in its epilogue (dense.h). cuBLAS is
// column-major and hone row-major: a row-major [r, c] matrix is the
// column-major [c, r] one, so Y = A·B is computed as Yᵀ = Bᵀ·Aᵀ by swapping
// the operands (no data moves).
#include "backends/cuda/dense.h"

#include <algorithm>

#include "backends/cuda/kernels.h"
#include "core/log.h"

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
    const uint32_t epilogue = !o.bias  ? kLtEpilogueDefault
                              : o.gelu ? kLtEpilogueGeluBias
                                       : kLtEpilogueBias;
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
    return fail(ErrorCode::kUnsupported, std::string("cuBLASLt has no ") +
                                             (o.bias ? "bias-epilogue " : "") +
                                             "algorithm for this shape");
  return out;
}

Result<void> lt_enqueue(const ExecCtx& c, LtMatmul& lt, CUdeviceptr A, CUdeviceptr B,
                        CUdeviceptr bias, CUdeviceptr Y, CUdeviceptr ws) {
  const float one = 1.0f, zero = 0.0f;
  const Api& a = c.d.api();
  std::lock_guard lock(lt.mu);
  if (bias != 0) {
    const void* bp = reinterpret_cast<const void*>(bias);
    HONE_CHECK_OK(c.d.check_blas(
        a.cublasLtMatmulDescSetAttribute(lt.desc, kLtDescBiasPointer, &bp, sizeof(bp)),
        "cublasLtMatmulDescSetAttribute"));
  }
  void* y = reinterpret_cast<void*>(Y);
  return c.d.check_blas(
      a.cublasLtMatmul(c.d.lt(), lt.desc, &one, reinterpret_cast<const void*>(B), lt.la,
                       reinterpret_cast<const void*>(A), lt.lb, &zero, y, lt.lc, y, lt.lc, &lt.algo,
                       reinterpret_cast<void*>(ws), lt.workspace, c.stream),
      "cublasLtMatmul");
}

OpPlan lt_plan(const std::string& op, const dims_t& out, int64_t M, int64_t N, int64_t K, int half,
               std::shared_ptr<LtMatmul> lt, size_t rank, std::shared_ptr<const DeviceBuffer> bt,
               bool f32_in) {
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

Result<std::shared_ptr<const DeviceBuffer>> HalfBias::get(const PlanEnv& env, int half) const {
  std::lock_guard lock(mu_);
  if (auto kept = kept_.lock()) return kept;
  const Tensor* t = env.value ? env.value(bias_) : nullptr;
  if (t == nullptr || t->dtype() != DType::kF32)
    return fail(ErrorCode::kUnsupported, "the bias is not a known f32 constant");
  HONE_TRY(const Driver* d, Driver::get());
  HONE_TRY(DeviceBuffer buf,
           upload_half(*d, t->data<float>(), static_cast<size_t>(t->numel()), half));
  auto made = std::make_shared<const DeviceBuffer>(std::move(buf));
  kept_ = made;
  return made;
}

OpPlan lt_half_io_plan(const std::string& op, const dims_t& out, int64_t N, int64_t K, int half,
                       std::shared_ptr<LtMatmul> lt, std::shared_ptr<const DeviceBuffer> bias) {
  OpPlan p;
  p.outputs = {out};
  p.kernel = op + (half == kCudaR16BF ? ".bf16" : ".f16") +
             (bias ? ".cuda.cublaslt+bias half_io" : ".cuda.cublaslt half_io");
  p.reads = {Storage::kHalf, Storage::kF32};
  if (bias) p.reads.push_back(Storage::kF32);
  p.writes = {Storage::kHalf};
  const size_t hb = half_bytes(K * N);
  p.workspace_bytes = hb + lt->workspace;
  p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
    CUdeviceptr w = built_half(bind, 1);
    if (w == 0) {
      HONE_TRY(w, to_half(c, bind.in[1], K * N, bind.workspace, half));
    }
    return lt_enqueue(c, *lt, bind.in[0], w, bias ? bias->ptr() : 0, bind.out[0],
                      bind.workspace + hb);
  };
  return p;
}

void add_f32_in(std::vector<OpPlan>& cands, const std::string& op, const dims_t& out, int64_t M,
                int64_t N, int64_t K, int half, bool tb, const std::string& label) {
  if (auto lts = lt_matmul_bias(M, N, K, {.half = half, .tb = tb, .f32_in = true, .want = 2}))
    for (size_t r = 0; r < lts->size(); ++r)
      cands.push_back(lt_plan(op, out, M, N, K, half, (*lts)[r], r, nullptr, true));
  else
    HONE_LOG_DEBUG("cuda: {}: f32 operands: {}", label, lts.error().message());
}

}  // namespace hone::cuda
