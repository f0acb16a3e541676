// precision=fp8 (fp8.h): e4m3 on the host, the device check, the weights'
// e4m3 copies, and cuBLASLt's FP8 product with its per-call quantization.
// NOT yet run on a GPU when written: every cuBLASLt attribute and enum value
// here is from NVIDIA's documentation (cuda_api.h names each).
#include "backends/cuda/fp8.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cuda/op_timer.h"
#include "core/log.h"

namespace hone::cuda {
namespace {

/// cuBLASLt releases (CUBLASLT_VERSION) that multiply in FP8: on Hopper
/// since cuBLAS 11.11 (CUDA 11.8), on Ada (8.9) since 12.1.
constexpr size_t kLtFp8Hopper = 111100, kLtFp8Ada = 120100;
/// CUBLASLT_EPILOGUE_DEFAULT: no bias (a MatMul without one).
constexpr uint32_t kLtEpilogueNone = 1;

std::string version_text(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

/// amax / 448 and its inverse for a tensor whose largest magnitude is
/// `amax`, as hone_fp8_quantize computes them on the device.
std::pair<float, float> scales_of(float amax) {
  const bool scaled = amax >= 1.0e-30f && amax <= 3.0e38f;
  return {scaled ? amax / kE4m3Max : 1.0f, scaled ? kE4m3Max / amax : 1.0f};
}

}  // namespace

uint8_t e4m3_bits(float f) {
  // Line for line kernels/fp8_ops.cu's hone_e4m3_bits.
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof(u));
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);
  if (a >= 0x43e00000u) return static_cast<uint8_t>(sign | 0x7eu);
  if (a >= 0x3c800000u) {
    const uint32_t r = (a + 0x7ffffu + ((a >> 20) & 1u)) >> 20;
    return static_cast<uint8_t>(sign | (r - (120u << 3)));
  }
  const uint32_t e = a >> 23;
  if (e < 117u) return static_cast<uint8_t>(sign);
  const uint32_t shift = 141u - e;
  const uint32_t full = (a & 0x7fffffu) | 0x800000u;
  uint32_t m = full >> shift;
  const uint32_t rest = full & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (m & 1u) != 0)) ++m;
  return static_cast<uint8_t>(sign | m);
}

float e4m3_value(uint8_t bits) {
  const float sign = (bits & 0x80u) != 0 ? -1.0f : 1.0f;
  const int e = (bits >> 3) & 0xf, m = bits & 7;
  if (e == 15 && m == 7) return std::nanf("");
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
}

std::string fp8_why_not(const Driver& d) {
  const int cc = d.cc_major() * 10 + d.cc_minor();
  const std::string has =
      "compute capability " + std::to_string(d.cc_major()) + "." + std::to_string(d.cc_minor());
  if (cc < 89)
    return "FP8 matrix products need compute capability 8.9 or newer (Ada, Hopper); this "
           "device, " +
           d.description() + ", has " + has;
  if (d.lt() == nullptr) return "FP8 matrix products run on cuBLASLt, not found: " + d.lt_why_not();
  const size_t need = cc == 89 ? kLtFp8Ada : kLtFp8Hopper;
  if (d.lt_version() == 0)
    return "the loaded cuBLASLt does not report its version (cublasLtGetVersion); FP8 on " + has +
           " needs " + version_text(need) + " or newer";
  if (d.lt_version() < need)
    return "cuBLASLt " + version_text(d.lt_version()) + " has no FP8 matrix products on " + has +
           " (" + version_text(need) + " or newer has)";
  return "";
}

std::string fp8_shape_why_not(int64_t N, int64_t K) {
  if (K % 16 != 0)
    return "K = " + std::to_string(K) + " is no multiple of 16 (cuBLASLt's FP8 layout rule)";
  if (N % 16 != 0)
    return "N = " + std::to_string(N) + " is no multiple of 16 (cuBLASLt's FP8 layout rule)";
  return "";
}

Fp8HostWeight quantize_weight(const float* w, int64_t K, int64_t N, bool stored_nk) {
  float amax = 0.0f;
  const int64_t n = K * N;
  for (int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(w[i]);
    if (std::isnan(a)) {  // a NaN wins, as on the device
      amax = a;
      break;
    }
    amax = std::max(amax, a);
  }
  const auto [scale, inv] = scales_of(amax);
  Fp8HostWeight out;
  out.scale = scale;
  out.bits.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) {
      const float v = stored_nk ? w[j * K + k] : w[k * N + j];
      out.bits[static_cast<size_t>(j * K + k)] = e4m3_bits(v * inv);
    }
  return out;
}

Result<std::shared_ptr<const Fp8Weight>> Fp8WeightCache::get(const PlanEnv& env, int64_t K,
                                                             int64_t N) const {
  std::lock_guard lock(mu_);
  if (auto kept = kept_.lock()) return kept;
  const Tensor* t = env.value ? env.value(w_) : nullptr;
  if (t == nullptr || t->dtype() != DType::kF32 || t->numel() != K * N)
    return fail(ErrorCode::kUnsupported, "the weight is no known f32 constant");
  const Fp8HostWeight q = quantize_weight(t->data<float>(), K, N, stored_nk_);
  HONE_TRY(const Driver* d, Driver::get());
  HONE_TRY(DeviceBuffer data, DeviceBuffer::upload(*d, q.bits.data(), q.bits.size()));
  HONE_TRY(DeviceBuffer scale, DeviceBuffer::upload(*d, &q.scale, sizeof(q.scale)));
  auto made = std::make_shared<const Fp8Weight>(Fp8Weight{std::move(data), std::move(scale)});
  kept_ = made;
  return made;
}

Result<std::shared_ptr<LtMatmul>> lt_fp8_matmul_bias(int64_t M, int64_t N, int64_t K,
                                                     const Fp8Weight& w, bool bias) {
  HONE_TRY(const Driver* d, Driver::get());
  if (const std::string why = fp8_why_not(*d); !why.empty())
    return fail(ErrorCode::kUnsupportedHardware, why);
  HONE_CHECK_OK(d->make_current());
  const Api& a = d->api();
  auto lt = std::make_shared<LtMatmul>();
  lt->a = &a;
  auto set = [&](int attr, const void* v, size_t n) {
    return d->check_blas(a.cublasLtMatmulDescSetAttribute(lt->desc, attr, v, n),
                         "cublasLtMatmulDescSetAttribute");
  };
  // Column-major, as cuBLAS: Yᵀ[N, M] = W'[N, K] · Xᵀ[K, M]. FP8 wants A
  // transposed and B not: A is the weight stored [N, K] row-major, which is
  // column-major [K, N] (ld K) read transposed; B is X [M, K] row-major,
  // column-major [K, M] (ld K) as it is; D is Y [M, N] row-major (ld N).
  HONE_CHECK_OK(d->check_blas(a.cublasLtMatmulDescCreate(&lt->desc, kCublasCompute32F, kCudaR32F),
                              "cublasLtMatmulDescCreate"));
  const int32_t ta = kCublasOpT, tb = kCublasOpN;
  const uint32_t epilogue = bias ? static_cast<uint32_t>(kLtEpilogueBias) : kLtEpilogueNone;
  const CUdeviceptr ws = w.scale.ptr();
  const void* sp = reinterpret_cast<const void*>(ws);
  HONE_CHECK_OK(set(kLtDescTransA, &ta, sizeof(ta)));
  HONE_CHECK_OK(set(kLtDescTransB, &tb, sizeof(tb)));
  HONE_CHECK_OK(set(kLtDescEpilogue, &epilogue, sizeof(epilogue)));
  if (bias) {  // the bias's bf16 copy, said rather than left to the default
    const int32_t bias_type = kCudaR16BF;
    HONE_CHECK_OK(set(kLtDescBiasDataType, &bias_type, sizeof(bias_type)));
  }
  // Real pointers for the heuristic; the enqueue sets X's scale and the bias.
  HONE_CHECK_OK(set(kLtDescAScalePointer, &sp, sizeof(sp)));
  HONE_CHECK_OK(set(kLtDescBScalePointer, &sp, sizeof(sp)));
  HONE_CHECK_OK(d->check_blas(a.cublasLtMatrixLayoutCreate(&lt->la, kCudaR8FE4M3, K, N, K),
                              "cublasLtMatrixLayoutCreate"));
  HONE_CHECK_OK(d->check_blas(a.cublasLtMatrixLayoutCreate(&lt->lb, kCudaR8FE4M3, K, M, K),
                              "cublasLtMatrixLayoutCreate"));
  HONE_CHECK_OK(d->check_blas(a.cublasLtMatrixLayoutCreate(&lt->lc, kCudaR16BF, N, M, N),
                              "cublasLtMatrixLayoutCreate"));
  LtHandle pref = nullptr;
  HONE_CHECK_OK(
      d->check_blas(a.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate"));
  const uint64_t max_ws = 16u << 20;
  LtHeuristic h{};
  int count = 0;
  auto found = [&]() -> Result<void> {
    HONE_CHECK_OK(d->check_blas(
        a.cublasLtMatmulPreferenceSetAttribute(pref, kLtPrefMaxWorkspace, &max_ws, sizeof(max_ws)),
        "cublasLtMatmulPreferenceSetAttribute"));
    return d->check_blas(a.cublasLtMatmulAlgoGetHeuristic(d->lt(), lt->desc, lt->la, lt->lb, lt->lc,
                                                          lt->lc, pref, 1, &h, &count),
                         "cublasLtMatmulAlgoGetHeuristic");
  }();
  a.cublasLtMatmulPreferenceDestroy(pref);
  if (!found) return fail(std::move(found).error().add_context("an FP8 product"));
  if (count < 1 || h.state != 0)
    return fail(ErrorCode::kUnsupported, "cuBLASLt has no FP8 algorithm for M " +
                                             std::to_string(M) + ", N " + std::to_string(N) +
                                             ", K " + std::to_string(K));
  lt->algo = h.algo;
  lt->workspace = round256(h.workspace_size);
  return lt;
}

size_t fp8_bytes(int64_t n) {
  return round256(static_cast<size_t>(n)) + 512;
}

Result<std::pair<CUdeviceptr, CUdeviceptr>> quantize_fp8(const ExecCtx& c, CUdeviceptr x, Storage s,
                                                         int64_t n, CUdeviceptr at) {
  // amax and the scale each at a 256-byte boundary: cuBLASLt assumes its
  // pointers that aligned unless told otherwise (an H100 refused the FP8
  // product, status 15, with the scale 4 bytes after amax).
  CUdeviceptr q = at, amax = at + round256(static_cast<size_t>(n)), scale = amax + 256;
  long long count = n;
  int src = s == Storage::kF32 ? 0 : 1;  // under fp8 half activations are bf16
  HONE_CHECK_OK(c.d.check(c.d.api().cuMemsetD32Async(amax, 0u, 1, c.stream), "cuMemsetD32Async"));
  HONE_TRY(CUfunction f_amax, c.fixed.function("hone_fp8_amax"));
  HONE_CHECK_OK(launch_1d(c.d, f_amax, c.stream, count, {&x, &count, &src, &amax}));
  HONE_TRY(CUfunction f_q, c.fixed.function("hone_fp8_quantize"));
  HONE_CHECK_OK(launch_1d(c.d, f_q, c.stream, count, {&x, &q, &count, &src, &amax, &scale}));
  return std::pair{q, scale};
}

Result<void> lt_fp8_enqueue(const ExecCtx& c, LtMatmul& lt, const Fp8Weight& w, CUdeviceptr xq,
                            CUdeviceptr x_scale, CUdeviceptr bias, CUdeviceptr Y, CUdeviceptr ws) {
  const float one = 1.0f, zero = 0.0f;
  const Api& a = c.d.api();
  std::lock_guard lock(lt.mu);
  auto set = [&](int attr, CUdeviceptr p) {
    const void* v = reinterpret_cast<const void*>(p);
    return c.d.check_blas(a.cublasLtMatmulDescSetAttribute(lt.desc, attr, &v, sizeof(v)),
                          "cublasLtMatmulDescSetAttribute");
  };
  HONE_CHECK_OK(set(kLtDescAScalePointer, w.scale.ptr()));
  HONE_CHECK_OK(set(kLtDescBScalePointer, x_scale));
  if (bias != 0) HONE_CHECK_OK(set(kLtDescBiasPointer, bias));
  void* y = reinterpret_cast<void*>(Y);
  return c.d.check_blas(
      a.cublasLtMatmul(c.d.lt(), lt.desc, &one, reinterpret_cast<const void*>(w.data.ptr()), lt.la,
                       reinterpret_cast<const void*>(xq), lt.lb, &zero, y, lt.lc, y, lt.lc,
                       &lt.algo, reinterpret_cast<void*>(ws), lt.workspace, c.stream),
      "cublasLtMatmul (FP8)");
}

OpPlan fp8_plan(const std::string& op, const dims_t& out, int64_t M, int64_t N, int64_t K,
                Storage x, std::shared_ptr<LtMatmul> lt, std::shared_ptr<const Fp8Weight> w,
                std::shared_ptr<const DeviceBuffer> bias) {
  OpPlan p;
  p.outputs = {out};
  p.kernel = op + ".fp8.cuda.quantize+cublaslt" + (bias ? "+bias" : "");
  p.reads = {x, Storage::kF32};
  if (bias) p.reads.push_back(Storage::kF32);
  p.writes = {Storage::kHalf};
  const size_t q = fp8_bytes(M * K);
  p.workspace_bytes = q + lt->workspace;
  p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
    HONE_TRY(const auto xq, quantize_fp8(c, bind.in[0], x, M * K, bind.workspace));
    return lt_fp8_enqueue(c, *lt, *w, xq.first, xq.second, bias ? bias->ptr() : 0, bind.out[0],
                          bind.workspace + q);
  };
  return p;
}

Result<OpPlan> probe_fp8(OpPlan p, const std::vector<dims_t>& in, const BuildSettings& s) {
  const int math_mode = s.math.tf32 ? kCublasTf32Math : kCublasDefaultMath;
  if (auto ran = run_op_once(p, in, math_mode, s.conv.dnn); !ran)
    return fail(ErrorCode::kUnsupported,
                "cuBLASLt refused the FP8 product on this device when tried at plan time (" +
                    ran.error().message() + ")");
  return p;
}

Result<OpPlan> plan_fp8_product(const std::string& op, const dims_t& out, int64_t M, int64_t N,
                                int64_t K, Storage x, const Fp8WeightCache& w, const HalfBias* bias,
                                const PlanEnv& env, const std::vector<dims_t>& in,
                                const BuildSettings& s) {
  if (const std::string why = fp8_shape_why_not(N, K); !why.empty())
    return fail(ErrorCode::kUnsupported, why);
  HONE_TRY(std::shared_ptr<const Fp8Weight> weight, w.get(env, K, N));
  std::shared_ptr<const DeviceBuffer> b;
  if (bias != nullptr) {
    HONE_TRY(b, bias->get(env, kCudaR16BF));
  }
  HONE_TRY(std::shared_ptr<LtMatmul> lt, lt_fp8_matmul_bias(M, N, K, *weight, bias != nullptr));
  return probe_fp8(fp8_plan(op, out, M, N, K, x, std::move(lt), std::move(weight), std::move(b)),
                   in, s);
}

}  // namespace hone::cuda
