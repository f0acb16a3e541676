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
// MatMul + bias) is one unit whose hidden activation stays bf16/f16 (MlpOp,
// ops_mlp.cpp). Under fp8, the products by a constant weight run in FP8
// (fp8.h). The products themselves are in gemm.cpp, Conv in ops_conv.cpp.
#include <array>
#include <memory>
#include <mutex>
#include <optional>

#include "backends/cuda/dense.h"
#include "backends/cuda/fp8.h"
#include "backends/cuda/storage.h"
#include "core/log.h"
#include "ops/attrs.h"

namespace hone::cuda {
namespace {

class GemmOp final : public Op {
 public:
  GemmOp(const Node& n, const ops::GemmAttrs& a, bool has_c, BuildSettings s)
      : ta_(a.trans_a),
        tb_(a.trans_b),
        alpha_(a.alpha),
        beta_(a.beta),
        has_c_(has_c),
        half_bias_(has_c ? n.inputs[2] : -1),
        fp8_weight_(n.inputs[1], a.trans_b),
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

  /// Half-precision activations (storage.h): A read as it is stored, half
  /// (a Flatten of a global pool, a transformer's attention output), B as
  /// its copy made at build. With C a constant bias over N (a Linear layer),
  /// Y is written half by cuBLASLt with the bias's half copy in its
  /// epilogue; otherwise into an f32 Y (C broadcast into it first).
  /// Under precision=fp8, a Linear Gemm (C a bias over N, B constant) runs
  /// in FP8 on A as it is stored (f32 or bf16, fp8.h) where its shapes
  /// allow; otherwise as under bf16, its kernel naming why not FP8.
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>& have,
                           const PlanEnv& env) const override {
    if (in[0].size() != 2 || (have[0] != Storage::kHalf && !s_.math.fp8))
      return fail(ErrorCode::kUnsupported, "A is not a half matrix");
    std::string not8;
    if (s_.math.fp8) {
      auto p = plan_fp8(in, have[0], env);
      if (p) return p;
      not8 = not_fp8(p.error().message());
    }
    if (auto out = plan_half_out(in, env)) {
      out->kernel += not8;
      return std::move(*out);
    }
    if (have[0] != Storage::kHalf) return fail(ErrorCode::kUnsupported, "A is not a half matrix");
    HONE_TRY(OpPlan p, plan_with(in, s_.math.half, true));
    p.reads.assign(in.size(), Storage::kF32);
    p.reads[0] = Storage::kHalf;
    p.kernel += not8;
    return p;
  }

 private:
  /// plan_half()'s FP8 plan, or why none.
  Result<OpPlan> plan_fp8(const std::vector<dims_t>& in, Storage a, const PlanEnv& env) const {
    const auto mnk = bias_product(in);
    if (!mnk) return fail(ErrorCode::kUnsupported, "C is no bias over N that an epilogue adds");
    const auto [M, N, K] = *mnk;
    return plan_fp8_product("gemm", {M, N}, M, N, K, a, fp8_weight_, &half_bias_, env, in, s_);
  }

  /// plan_half()'s half-output plan: Y = A · B + bias[N], A and Y bf16/f16;
  /// nothing when C is no constant bias over N or cuBLASLt cannot.
  std::optional<OpPlan> plan_half_out(const std::vector<dims_t>& in, const PlanEnv& env) const {
    const int half = s_.math.half;
    const auto mnk = bias_product(in);
    if (!mnk) return std::nullopt;
    const auto [M, N, K] = *mnk;
    auto lts = lt_matmul_bias(M, N, K, {.half = half, .tb = tb_, .want = 1, .y_type = half});
    auto bias = half_bias_.get(env, half);
    if (!lts || !bias) return std::nullopt;
    return lt_half_io_plan("gemm", {M, N}, N, K, half, lts->front(), *bias);
  }

  /// {M, N, K} when the Gemm is a product plus a bias over N that cuBLASLt's
  /// epilogue can add (alpha = beta = 1, A not transposed, 2-D A and B whose
  /// dims agree, C of N elements along its last dim, sizes within int).
  std::optional<std::array<int64_t, 3>> bias_product(const std::vector<dims_t>& in) const {
    if (!has_c_ || alpha_ != 1.0f || beta_ != 1.0f || ta_ || in[0].size() != 2 || in[1].size() != 2)
      return std::nullopt;
    const int64_t M = in[0][0], K = in[0][1], N = tb_ ? in[1][0] : in[1][1];
    if ((tb_ ? in[1][1] : in[1][0]) != K || numel_of(in[2]) != N || in[2].back() != N ||
        in[2].size() > 2 || !fits_int({M, N, K}))
      return std::nullopt;
    return std::array<int64_t, 3>{M, N, K};
  }

  /// cuBLASLt bias-epilogue plans when C is a bias over N (bias_product()).
  std::vector<OpPlan> with_lt(const std::vector<dims_t>& in) const {
    std::vector<OpPlan> out;
    const auto mnk = s_.gemm.epilogue ? bias_product(in) : std::nullopt;
    if (!mnk) return out;
    const auto [M, N, K] = *mnk;
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

  /// `a_half`: A is already bf16/f16 (plan_half), not converted.
  Result<OpPlan> plan_with(const std::vector<dims_t>& in, int half, bool a_half = false) const {
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
    p.kernel =
        gemm_kernel("gemm", "sgemm", half) + (use_c ? " +c" : "") + (a_half ? " +half_a" : "");
    const bool ta = ta_, tb = tb_;
    const int64_t na = numel_of(a), nb = numel_of(b);
    if (half != 0) p.workspace_bytes = half_bytes(na) + half_bytes(nb);
    const float alpha = alpha_, beta = use_c ? beta_ : 0.0f;
    p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
      if (use_c) HONE_CHECK_OK(strided_copy(c, bind.in[2], bind.out[0], {M, N}, cst, {N, 1}));
      std::pair<CUdeviceptr, CUdeviceptr> operands{bind.in[0], built_half(bind, 1)};
      if (!a_half) {
        HONE_TRY(operands, product_operands(c, bind, na, nb, half));
      } else if (operands.second == 0) {
        HONE_TRY(operands.second,
                 to_half(c, bind.in[1], nb, bind.workspace + half_bytes(na), half));
      }
      const auto [A, B] = operands;
      return gemm_rm(c, ta, tb, M, N, K, alpha, A, 0, B, 0, beta, bind.out[0], 0, 1, half);
    };
    return p;
  }

  bool ta_, tb_;
  float alpha_, beta_;
  bool has_c_;
  HalfBias half_bias_;         // C's half copy, when C is a bias
  Fp8WeightCache fp8_weight_;  // B's e4m3 copy (precision=fp8)
  BuildSettings s_;
  std::string label_;
};

class MatMulOp final : public Op {
 public:
  MatMulOp(const Node& n, BuildSettings s)
      : s_(std::move(s)), label_(n.describe()), weight_(n.inputs[1]), fp8_weight_(weight_, false) {}

  /// A product by a constant 2-D weight with no bias after it (a Llama's or
  /// T5's bias-free Linear): under precision=fp8 it runs in FP8 (fp8.h) on A
  /// as it is stored, writing bf16, where its shapes allow. Otherwise, A
  /// half (row-major) is read as it is and Y written bf16/f16 by cuBLASLt
  /// with the weight's half copy made at build, no conversion on either
  /// side; an f32 A takes plan()'s (read in f32), its kernel naming why not
  /// FP8. Other products: no half plan.
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>& have,
                           const PlanEnv& env) const override {
    const Tensor* w = env.value ? env.value(weight_) : nullptr;
    const dims_t &a = in[0], &b = in[1];
    const bool a_half = have[0] == Storage::kHalf;
    if ((!s_.math.fp8 && !a_half) || s_.math.half == 0 || w == nullptr ||
        w->dtype() != DType::kF32 || b.size() != 2 || a.size() < 2 || a.back() != b[0] ||
        (a_half && !channels_last_is_row_major(a)))
      return Op::plan_half(in, have, env);
    const int64_t K = a.back(), N = b[1], M = numel_of(a) / K;
    if (!fits_int({M, N, K})) return fail(ErrorCode::kUnsupported, "MatMul too large for cuBLAS");
    dims_t out = a;
    out.back() = N;
    std::string not8;
    if (s_.math.fp8) {
      auto p = plan_fp8_product("matmul", out, M, N, K, have[0], fp8_weight_, nullptr, env, in, s_);
      if (p) return p;
      not8 = not_fp8(p.error().message());
    }
    if (a_half) {
      const int half = s_.math.half;
      HONE_TRY(auto lts,
               lt_matmul_bias(M, N, K, {.half = half, .want = 1, .y_type = half, .bias = false}));
      OpPlan p = lt_half_io_plan("matmul", out, N, K, half, lts.front(), nullptr);
      p.kernel += not8;
      return p;
    }
    HONE_TRY(OpPlan full, plan(in, env));
    full.kernel += not8;
    return full;
  }

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
  ValueId weight_;
  Fp8WeightCache fp8_weight_;  // precision=fp8, when input 1 is a constant
};

/// MatMul by a constant [K, N] weight, then Add of a constant [N] bias: the
/// bias in cuBLASLt's epilogue, or the bias broadcast into Y and the product
/// added to it (beta = 1); timed, the faster kept.
class MatMulBiasOp final : public Op {
 public:
  MatMulBiasOp(std::string label, BuildSettings s, ValueId weight, ValueId bias)
      : s_(std::move(s)),
        label_(std::move(label)),
        weight_(weight),
        half_bias_(bias),
        fp8_weight_(weight, false) {}

  /// Half-precision activations (storage.h): A read as it is stored (half,
  /// row-major), the weight's bf16/f16 copy made at build, Y written
  /// bf16/f16 by cuBLASLt with the bias (its half copy) in the epilogue:
  /// no conversion pass on either side. cuBLASLt's best-guess algorithm.
  /// Under precision=fp8 the product is FP8 (fp8.h) on A as it is stored
  /// (f32 too) where its shapes allow; otherwise as under bf16, A converted
  /// to bf16 if need be, its kernel naming why not FP8.
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>& have,
                           const PlanEnv& env) const override {
    const int half = s_.math.half;
    const bool a_ok = have[0] == Storage::kHalf ? channels_last_is_row_major(in[0]) : s_.math.fp8;
    if (half == 0 || !a_ok)
      return fail(ErrorCode::kUnsupported, "A is not a row-major half tensor");
    const dims_t &a = in[0], &b = in[1];
    if (a.size() < 2 || b.size() != 2 || b[0] != a.back() || numel_of(in[2]) != b[1])
      return plan(in, env);  // its error names the shapes
    const int64_t K = a.back(), N = b[1], M = numel_of(a) / K;
    if (!fits_int({M, N, K})) return fail(ErrorCode::kUnsupported, "MatMul too large for cuBLAS");
    dims_t out = a;
    out.back() = N;
    std::string not8;
    if (s_.math.fp8) {
      auto p =
          plan_fp8_product("matmul", out, M, N, K, have[0], fp8_weight_, &half_bias_, env, in, s_);
      if (p) return p;
      not8 = not_fp8(p.error().message());
    }
    HONE_TRY(auto lts, lt_matmul_bias(M, N, K, {.half = half, .want = 1, .y_type = half}));
    HONE_TRY(auto bias, half_bias_.get(env, half));
    OpPlan p = lt_half_io_plan("matmul", out, N, K, half, lts.front(), std::move(bias));
    p.kernel += not8;
    return p;
  }

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
  HalfBias half_bias_;
  Fp8WeightCache fp8_weight_;  // precision=fp8
  mutable std::mutex mu_;
  mutable std::weak_ptr<const DeviceBuffer> transposed_;
};

}  // namespace

Result<Unit> create_dense(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  if (n.op_type == "Conv") return create_conv(b, n, absorbed);
  if (std::optional<Unit> mlp = create_mlp(b, n, absorbed)) return std::move(*mlp);
  Unit u;
  u.label = n.describe();
  if (const NodeId add = b.settings.gemm.epilogue ? bias_add_of(b, n) : -1; add >= 0) {
    const Node& a = b.g.node(add);
    b.used[static_cast<size_t>(add)] = true;
    absorbed->push_back(add);
    u.label += "+Add";
    u.inputs = {n.inputs[0], n.inputs[1], a.inputs[0] == n.outputs[0] ? a.inputs[1] : a.inputs[0]};
    u.outputs = {a.outputs[0]};
    u.op = std::make_unique<MatMulBiasOp>(u.label, b.settings, n.inputs[1], u.inputs[2]);
    return u;
  }
  const bool third = n.inputs.size() > 2 && n.inputs[2] >= 0;
  u.inputs = {n.inputs[0], n.inputs[1]};
  if (third) u.inputs.push_back(n.inputs[2]);
  u.outputs = {n.outputs[0]};
  if (n.op_type == "Gemm") {
    HONE_TRY(const ops::GemmAttrs a, ops::gemm_attrs(n));
    u.op = std::make_unique<GemmOp>(n, a, third, b.settings);
  } else {
    u.op = std::make_unique<MatMulOp>(n, b.settings);
  }
  return u;
}

}  // namespace hone::cuda
