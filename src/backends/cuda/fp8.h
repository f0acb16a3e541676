// Private to the cuda backend: precision=fp8. The model runs as under bf16
// with bf16 activations (storage.h), except the matrix products by a
// constant weight (MatMul with or without a bias, a Linear Gemm, the MLP
// unit's two products), which run on cuBLASLt in FP8: the weight converted once to e4m3
// with a per-tensor scale (amax / 448, an f32 on the device), the activation
// quantized before each product by two kernels (kernels/fp8_ops.cu) with a
// scale computed on the device from its current amax, both scales passed by
// pointer (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER), so a step captures into a
// CUDA graph; Y written bf16 with the bf16 bias in the epilogue, summed in
// f32 (CUBLAS_COMPUTE_32F). A product whose shapes break cuBLASLt's FP8 rules
// (fp8_shape_why_not) stays bf16, and its kernel says why.
//
//   if (std::string why = fp8_why_not(*d); !why.empty()) ...   // no fp8 on this device
//   HONE_TRY(auto w, weight.get(env, K, N));                    // e4m3 copy, made once
//   HONE_TRY(auto lt, lt_fp8_matmul_bias(M, N, K, *w));
//   OpPlan p = fp8_plan("matmul", out, M, N, K, have[0], lt, w, bias);
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/dense.h"

namespace hone::cuda {

/// e4m3's largest finite value: a tensor's amax maps to it.
inline constexpr float kE4m3Max = 448.0f;

/// f32 to e4m3 bits (CUDA_R_8F_E4M3: bias 7, no infinities, NaN 0x7f/0xff),
/// round to nearest even, |f| >= 448 and infinities saturated to +-448, NaN
/// to NaN: the host twin of kernels/fp8_ops.cu's hone_e4m3_bits.
uint8_t e4m3_bits(float f);
/// The value of e4m3 bits (exact).
float e4m3_value(uint8_t bits);

/// Why this device and cuBLASLt cannot run FP8 products (compute capability
/// below 8.9, no cuBLASLt, one older than 12.1), naming what it has; ""
/// when they can.
std::string fp8_why_not(const Driver& d);

/// Why Y[M, N] = X[M, K] · W[K, N] + bias cannot run on cuBLASLt in FP8, or
/// "": FP8 takes A transposed and B not ("TN", which the weight's stored
/// layout gives) with 16-byte-aligned leading dimensions and pointers, and
/// its dims multiples of 16, so K (both operands' leading dim, in one-byte
/// elements) and N (the weight's rows, the bf16 output's leading dim) must
/// be multiples of 16; M (the rows of X and Y) may be any size.
std::string fp8_shape_why_not(int64_t N, int64_t K);

/// A weight quantized on the host: W [K, N] (row-major; [N, K] when
/// `stored_nk`) as e4m3 bits stored [N, K], each w * 448 / amax, and
/// scale = amax / 448 (1 for a zero, tiny or non-finite amax).
struct Fp8HostWeight {
  std::vector<uint8_t> bits;
  float scale = 1.0f;
};
Fp8HostWeight quantize_weight(const float* w, int64_t K, int64_t N, bool stored_nk);

/// A constant weight's e4m3 copy on the device: `data` [N, K] (cuBLASLt's A,
/// read transposed) and `scale`, one f32.
struct Fp8Weight {
  DeviceBuffer data, scale;
};

/// The e4m3 copy of constant weight `w` (a MatMul's [K, N], or a Gemm's B
/// [N, K] when `stored_nk`), made on first use from the value's contents
/// (PlanEnv) and shared by the plans of one unit, as HalfBias does.
class Fp8WeightCache {
 public:
  Fp8WeightCache(ValueId w, bool stored_nk) : w_(w), stored_nk_(stored_nk) {}
  /// The copy, or why not (no known f32 constant of K x N elements; no device).
  [[nodiscard]] Result<std::shared_ptr<const Fp8Weight>> get(const PlanEnv& env, int64_t K,
                                                             int64_t N) const;

 private:
  ValueId w_;
  bool stored_nk_;
  mutable std::mutex mu_;
  mutable std::weak_ptr<const Fp8Weight> kept_;
};

/// cuBLASLt's FP8 product Y[M, N] (bf16) = X[M, K] (e4m3) · W (e4m3, stored
/// [N, K]) + bias[N] (bf16; none unless `bias`), each operand dequantized by
/// its scale, summed in f32; its best-guess algorithm, or why cuBLASLt has
/// none. `w` supplies a scale pointer for the heuristic (the enqueue sets
/// both anew).
[[nodiscard]] Result<std::shared_ptr<LtMatmul>> lt_fp8_matmul_bias(int64_t M, int64_t N, int64_t K,
                                                                   const Fp8Weight& w,
                                                                   bool bias = true);

/// Bytes of workspace quantize_fp8() needs for `n` elements (e4m3 copy,
/// amax and scale), 256-aligned.
size_t fp8_bytes(int64_t n);
/// Enqueues the quantization of `n` elements of x (storage `s`: f32, or
/// bf16 under fp8) into the workspace at `at`: e4m3 copy first, then the
/// amax word and the f32 scale. Returns {copy, scale}.
[[nodiscard]] Result<std::pair<CUdeviceptr, CUdeviceptr>> quantize_fp8(const ExecCtx& c,
                                                                       CUdeviceptr x, Storage s,
                                                                       int64_t n, CUdeviceptr at);
/// Enqueues Y = X · W + bias on `lt` (lt_fp8_matmul_bias), its workspace at
/// `ws`; `bias` 0 for a product made without one.
[[nodiscard]] Result<void> lt_fp8_enqueue(const ExecCtx& c, LtMatmul& lt, const Fp8Weight& w,
                                          CUdeviceptr xq, CUdeviceptr x_scale, CUdeviceptr bias,
                                          CUdeviceptr Y, CUdeviceptr ws);

/// A plan running `lt`'s FP8 product on input 0 as stored (`x`: f32, or
/// bf16 row-major), writing a bf16 Y viewed as `out` with `bias` (the bias's
/// bf16 copy, input 2) in the epilogue, or none when null (a unit of two
/// inputs). Kernel id OP.fp8.cuda.quantize+cublaslt+bias (or +cublaslt).
OpPlan fp8_plan(const std::string& op, const dims_t& out, int64_t M, int64_t N, int64_t K,
                Storage x, std::shared_ptr<LtMatmul> lt, std::shared_ptr<const Fp8Weight> w,
                std::shared_ptr<const DeviceBuffer> bias);

/// The FP8 plan of a unit Y = X · W + bias (inputs x, W, bias; fp8_plan;
/// `bias` null: Y = X · W, inputs x, W), or why none: the shapes break
/// cuBLASLt's FP8 rules, W or the bias is no known constant, cuBLASLt has no
/// algorithm, or it refuses the product when tried (probe_fp8). `in`: the
/// unit's input dims; `s`: its block's settings.
[[nodiscard]] Result<OpPlan> plan_fp8_product(const std::string& op, const dims_t& out, int64_t M,
                                              int64_t N, int64_t K, Storage x,
                                              const Fp8WeightCache& w, const HalfBias* bias,
                                              const PlanEnv& env, const std::vector<dims_t>& in,
                                              const BuildSettings& s);
/// `p` (an FP8 plan of a unit with inputs of `in` dims) once it has run on
/// scratch buffers on the device (op_timer.h's run_op_once); kUnsupported naming
/// cuBLASLt's answer when it refuses, so that the product stays bf16 and says
/// why instead of failing every call.
[[nodiscard]] Result<OpPlan> probe_fp8(OpPlan p, const std::vector<dims_t>& in,
                                       const BuildSettings& s);

/// The text a bf16 product's kernel id gets under fp8 when it cannot be FP8.
inline std::string not_fp8(const std::string& why) {
  return " (not fp8: " + why + ")";
}

}  // namespace hone::cuda
