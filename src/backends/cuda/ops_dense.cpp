// Dense ops on cuBLAS SGEMM. cuBLAS is column-major and hone row-major: a
// row-major [r, c] matrix is the column-major [c, r] one, so Y = A·B is
// computed as Yᵀ = Bᵀ·Aᵀ by swapping the operands (no data moves).
// Conv: im2col of a chunk of images (a kernel; skipped for 1x1 stride-1
// unpadded convs) then, per group, one strided-batched SGEMM over the chunk;
// the bias is broadcast into the output first and the SGEMM accumulates onto
// it (beta = 1). Depthwise convs (one channel per group) use a direct kernel:
// as GEMMs they would be one launch per channel of 1-row products.
#include <algorithm>

#include "backends/cuda/op.h"
#include "ops/window.h"

namespace hone::cuda {
namespace {

/// Row-major Y[M, N] = alpha * A[M, K] · B[K, N] + beta * Y, `batch` times
/// with the given element strides (0 repeats an operand).
Result<void> gemm_rm(const ExecCtx& c, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                     float alpha, CUdeviceptr a, int64_t sa, CUdeviceptr b, int64_t sb, float beta,
                     CUdeviceptr y, int64_t sy, int64_t batch) {
  const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n);
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

bool fits_int(std::initializer_list<int64_t> xs) {
  for (int64_t x : xs)
    if (x > (1LL << 31) - 1) return false;
  return true;
}

class ConvOp final : public Op {
 public:
  ConvOp(Node n, bool has_bias) : node_(std::move(n)), has_bias_(has_bias) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
    const dims_t &x = in[0], &w = in[1];
    if (x.size() != 3 && x.size() != 4)
      return fail(ErrorCode::kUnsupported, "Conv input rank " + std::to_string(x.size()));
    if (w.size() != x.size())
      return fail(ErrorCode::kInvalidArgument, "Conv weights " + shape_to_string(w) +
                                                   " do not match input " + shape_to_string(x));
    const int64_t group = node_.attr_int("group", 1);
    const int64_t N = x[0], C = x[1], M = w[0];
    if (group <= 0 || C % group != 0 || M % group != 0 || w[1] != C / group)
      return fail(ErrorCode::kInvalidArgument, "Conv: input " + shape_to_string(x) + ", weights " +
                                                   shape_to_string(w) + " and group " +
                                                   std::to_string(group) + " disagree");
    const dims_t spatial(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
    HONE_TRY(ops::Window win,
             ops::make_window(node_, spatial, kernel, false, "Conv"));
    // 1-D convs run as 2-D ones of height 1.
    const bool one_d = x.size() == 3;
    auto at = [&](const dims_t& v, int d, int64_t one) {
      return one_d ? (d == 0 ? one : v[0]) : v[d];
    };
    const int64_t H = at(spatial, 0, 1), W = at(spatial, 1, 1), KH = at(kernel, 0, 1),
                  KW = at(kernel, 1, 1);
    const int64_t SH = at(win.strides, 0, 1), SW = at(win.strides, 1, 1);
    const int64_t DH = at(win.dilations, 0, 1), DW = at(win.dilations, 1, 1);
    const int64_t PH = at(win.pad_begin, 0, 0), PW = at(win.pad_begin, 1, 0);
    const int64_t OH = at(win.out, 0, 1), OW = at(win.out, 1, 1);
    if (has_bias_ && numel_of(in[2]) != M)
      return fail(ErrorCode::kInvalidArgument, "Conv bias " + shape_to_string(in[2]) + " for " +
                                                   std::to_string(M) + " output channels");
    const int64_t P = OH * OW, Kg = (C / group) * KH * KW, Mg = M / group;
    if (!fits_int({C * KH * KW * P, N * M * P, C * H * W}))
      return fail(ErrorCode::kUnsupported, "Conv too large for 32-bit cuBLAS sizes");
    const bool direct = KH == 1 && KW == 1 && SH == 1 && SW == 1 && PH == 0 && PW == 0 &&
                        win.pad_end == dims_t(win.pad_end.size(), 0);
    const bool depthwise = group > 1 && group == C && M == C;
    // Columns of several images at once, so one strided-batched SGEMM per
    // group covers them; capped so the workspace stays modest.
    constexpr int64_t kMaxWorkspace = int64_t{256} << 20;
    const int64_t per_image = C * KH * KW * P * int64_t{sizeof(float)};
    const int64_t chunk =
        direct || depthwise ? N : std::clamp<int64_t>(kMaxWorkspace / per_image, 1, N);
    OpPlan p;
    dims_t out = {N, M};
    out.insert(out.end(), win.out.begin(), win.out.end());
    p.outputs = {out};
    p.workspace_bytes = direct || depthwise ? 0 : static_cast<size_t>(chunk * per_image);
    p.kernel = depthwise ? "conv2d.f32.cuda.depthwise"
               : direct  ? "conv2d.f32.cuda.sgemm"
                         : "conv2d.f32.cuda.im2col+sgemm";
    const bool bias = has_bias_;
    int geo[] = {int(H),  int(W),  int(KH), int(KW), int(SH), int(SW),
                 int(PH), int(PW), int(DH), int(DW), int(OH), int(OW)};
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      const CUdeviceptr y = b.out[0];
      int g[12];
      std::copy(std::begin(geo), std::end(geo), g);
      if (depthwise) {
        HONE_TRY(CUfunction dw, c.fixed.function("hone_conv_dw"));
        CUdeviceptr xi = b.in[0], wi = b.in[1], bi = bias ? b.in[2] : 0, yo = y;
        long long nc = N * C;
        int ch = int(C);
        std::vector<void*> ptrs = {&xi, &wi, &bi, &yo, &nc, &ch};
        for (int& v : g) ptrs.push_back(&v);
        return launch_1d(c.d, dw, c.stream, N * C * P, ptrs);
      }
      if (bias) HONE_CHECK_OK(strided_copy(c, b.in[2], y, {N, M, P}, {0, 1, 0}, {M * P, P, 1}));
      HONE_TRY(CUfunction im2col, c.fixed.function("hone_im2col"));
      auto f32 = [](int64_t n) { return static_cast<CUdeviceptr>(n) * sizeof(float); };
      for (int64_t i0 = 0; i0 < N; i0 += chunk) {
        long long imgs = std::min(chunk, N - i0);
        CUdeviceptr img = b.in[0] + f32(i0 * C * H * W);
        CUdeviceptr col = direct ? img : b.workspace;
        if (!direct) {
          int ch = int(C);
          std::vector<void*> ptrs = {&img, &col, &imgs, &ch};
          for (int& v : g) ptrs.push_back(&v);
          HONE_CHECK_OK(launch_1d(c.d, im2col, c.stream, imgs * C * KH * KW * P, ptrs));
        }
        for (int64_t gi = 0; gi < group; ++gi)
          HONE_CHECK_OK(gemm_rm(c, false, false, Mg, P, Kg, 1.0f, b.in[1] + f32(gi * Mg * Kg), 0,
                                col + f32(gi * Kg * P), C * KH * KW * P, bias ? 1.0f : 0.0f,
                                y + f32((i0 * M + gi * Mg) * P), M * P, imgs));
      }
      return {};
    };
    return p;
  }

 private:
  Node node_;
  bool has_bias_;
};

class GemmOp final : public Op {
 public:
  GemmOp(const Node& n, bool has_c)
      : ta_(n.attr_int("transA", 0) != 0),
        tb_(n.attr_int("transB", 0) != 0),
        alpha_(n.attr_float("alpha", 1.0f)),
        beta_(n.attr_float("beta", 1.0f)),
        has_c_(has_c) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
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
    p.kernel = use_c ? "gemm.f32.cuda.sgemm +c" : "gemm.f32.cuda.sgemm";
    const bool ta = ta_, tb = tb_;
    const float alpha = alpha_, beta = use_c ? beta_ : 0.0f;
    p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
      if (use_c) HONE_CHECK_OK(strided_copy(c, bind.in[2], bind.out[0], {M, N}, cst, {N, 1}));
      return gemm_rm(c, ta, tb, M, N, K, alpha, bind.in[0], 0, bind.in[1], 0, beta, bind.out[0], 0,
                     1);
    };
    return p;
  }

 private:
  bool ta_, tb_;
  float alpha_, beta_;
  bool has_c_;
};

class MatMulOp final : public Op {
 public:
  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
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
    p.kernel = tall      ? "matmul.f32.cuda.sgemm"
               : strided ? "matmul.f32.cuda.sgemm_batched"
                         : "matmul.f32.cuda.sgemm_loop";
    const dims_t sa = broadcast_strides(ba, batch), sb = broadcast_strides(bb, batch);
    p.run = [=](const ExecCtx& c, const Bind& bind) -> Result<void> {
      const CUdeviceptr A = bind.in[0], B = bind.in[1], Y = bind.out[0];
      if (tall) return gemm_rm(c, false, false, M * nb, N, K, 1.0f, A, 0, B, 0, 0.0f, Y, 0, 1);
      if (strided)
        return gemm_rm(c, false, false, M, N, K, 1.0f, A, na == 1 ? 0 : M * K, B,
                       nbb == 1 ? 0 : K * N, 0.0f, Y, M * N, nb);
      for (int64_t i = 0; i < nb; ++i) {
        int64_t oa = 0, ob = 0, r = i;
        for (size_t d = batch.size(); d-- > 0;) {
          const int64_t coord = r % batch[d];
          r /= batch[d];
          oa += coord * sa[d];
          ob += coord * sb[d];
        }
        HONE_CHECK_OK(gemm_rm(c, false, false, M, N, K, 1.0f,
                              A + static_cast<CUdeviceptr>(oa * M * K) * sizeof(float), 0,
                              B + static_cast<CUdeviceptr>(ob * K * N) * sizeof(float), 0, 0.0f,
                              Y + static_cast<CUdeviceptr>(i * M * N) * sizeof(float), 0, 1));
      }
      return {};
    };
    return p;
  }
};

}  // namespace

Result<Unit> create_dense(const BlockInfo& b, const Node& n) {
  Unit u;
  u.label = n.describe();
  const bool third = n.inputs.size() > 2 && n.inputs[2] >= 0;
  u.inputs = {n.inputs[0], n.inputs[1]};
  if (third) u.inputs.push_back(n.inputs[2]);
  u.outputs = {n.outputs[0]};
  if (n.op_type == "Conv")
    u.op = std::make_unique<ConvOp>(n, third);
  else if (n.op_type == "Gemm")
    u.op = std::make_unique<GemmOp>(n, third);
  else
    u.op = std::make_unique<MatMulOp>();
  return u;
}

}  // namespace hone::cuda
