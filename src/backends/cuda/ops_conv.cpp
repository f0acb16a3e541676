// Conv, and the residual Add and Relu after it, on the GPU.
//
// cuDNN (cudnn_api.h) when it is found and the conv fits its legacy API
// (symmetric pads): the algorithm is chosen once per geometry by
// cudnnFindConvolutionForwardAlgorithm (it times each on the device), and a
// Conv followed by Relu, with or without a residual Add between, is one
// cudnnConvolutionBiasActivationForward: y = relu(conv(x, w) + z + bias)
// (cudnn_fused=false: cudnnConvolutionForward, then one epilogue pass).
// Strict fp32 pins cuDNN to FMA math (no TF32 tensor cores); tf32, bf16 and
// fp16 let it choose. Layout is NCHW f32, hone's own, so no transposes are added.
//
// Under bf16/fp16 a third candidate, cuDNN on bf16/f16 NHWC copies (the
// layout and type of cuDNN's sm90 tensor-core kernels; its NCHW f32 kernels
// there are older TF32 ones): one kernel converts the input f32 NCHW to half
// NHWC in the workspace, cudnnConvolutionForward (f32 sums, math
// CUDNN_TENSOR_OP_MATH, its own algorithm search under the entry LABEL +
// " cudnn-find-nhwc") writes half NHWC into the workspace, and one epilogue
// kernel turns that into the f32 NCHW output with the bias, residual and Relu.
// Constant weights are converted to half KRSC once per op when it is first
// planned; others on every run, in the workspace. Only for group == 1:
// grouped and depthwise convs keep the candidates above.
//
// Under activations=half (storage.h) the conv reads and writes bf16/f16
// NHWC itself (plan_half): cuDNN NHWC in and out, its bias and Relu (and the
// residual) in cudnnConvolutionBiasActivationForward where cuDNN takes it,
// else one pass after; 1x1 stride-1 convs as one cuBLAS GEMM instead, whose
// legacy-API cuDNN algorithms were about ten times slower on an H100.
//
// conv_select=time (the default) times the candidates once per geometry
// (op_timer.h) and keeps the fastest: cuDNN's FMA kernels lose to cuBLAS on
// small batches. With the NHWC candidate there, each candidate is first
// checked against the f32 cuDNN result on random inputs (the op's real
// weights) within the bf16/f16 tolerance; one that strays is dropped with a
// warning. conv_select=cudnn_nhwc takes the NHWC candidate untimed wherever it
// plans. The choices, cuDNN's algorithms and the candidate, are recorded in the
// backend's kernel_choices and replayed from it untimed. Otherwise, or without
// cuDNN, im2col + cuBLAS: im2col of a chunk of
// images (a kernel; skipped for 1x1 stride-1 unpadded convs) then, per group,
// one strided-batched SGEMM over the chunk; the bias is broadcast into the
// output first and the SGEMM accumulates onto it (beta = 1). Depthwise convs
// use a direct kernel (as GEMMs they would be one launch per channel). A
// fused Add/Relu is then one extra element-wise pass (hone_conv_epilogue).
// cuDNN's search lives in cudnn_conv.cpp, the im2col path in conv_gemm.cpp.
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "backends/cuda/conv.h"
#include "backends/cuda/op_timer.h"
#include "backends/cuda/storage.h"
#include "core/log.h"

namespace hone::cuda {
namespace {

class ConvOp final : public Op {
 public:
  ConvOp(Node n, bool has_bias, bool has_z, bool relu, BuildSettings s, std::string label,
         const Tensor* weights, const Tensor* bias_values)
      : node_(std::move(n)),
        weights_(weights),
        bias_values_(bias_values),
        has_bias_(has_bias),
        has_z_(has_z),
        relu_(relu),
        s_(std::move(s)),
        label_(std::move(label)) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
    HONE_TRY(ConvGeometry g, conv_geometry(node_, has_bias_, in));
    // hone's depthwise kernel keeps a channel's taps in 256 floats of shared memory.
    const bool depthwise = g.group > 1 && g.group == g.C && g.M == g.C && g.KH * g.KW <= 256;
    if (has_z_) {
      const dims_t want = in[0].size() == 3 ? dims_t{g.N, g.M, g.OW} : dims_t{g.N, g.M, g.OH, g.OW};
      if (in.back() != want)
        return fail(ErrorCode::kInvalidArgument,
                    "Conv's residual Add operand " + shape_to_string(in.back()) +
                        " differs from its output " + shape_to_string(want));
    }
    if (s_.conv.dnn != nullptr && g.symmetric && (!depthwise || s_.conv.depthwise_on_dnn)) {
      auto dc = plan_dnn(*s_.conv.dnn, g, s_.math.tf32, relu_, s_, label_, in, 0);
      if (dc) {
        HONE_TRY(OpPlan on_dnn, plan_on_dnn(g, in[0].size(), std::move(*dc)));
        // bf16/fp16: cuDNN on half NHWC copies, group 1 only (module comment).
        std::optional<OpPlan> on_half;
        if (s_.math.half != 0 && g.group == 1 && s_.conv.select != ConvSelect::kCudnn) {
          auto half = plan_on_dnn_half(g, in);
          if (half)
            on_half = std::move(*half);
          else
            HONE_LOG_DEBUG("cuda: {}: no bf16/f16 NHWC cuDNN candidate: {}", node_.describe(),
                           half.error().to_string());
        }
        if (s_.conv.select == ConvSelect::kCudnnNhwc && on_half) return std::move(*on_half);
        if (s_.conv.select != ConvSelect::kTime) return on_dnn;
        HONE_TRY(OpPlan on_blas, plan_conv_on_blas(g, in[0].size(), depthwise, has_bias_, has_z_,
                                                   relu_, s_.math.half, suffix()));
        // Timed once per geometry and epilogue for the process (same shapes,
        // same answer), recorded and replayed per backend.
        const std::vector<int64_t> problem = {g.N,
                                              g.C,
                                              g.H,
                                              g.W,
                                              g.M,
                                              g.KH,
                                              g.KW,
                                              g.SH,
                                              g.SW,
                                              g.PH,
                                              g.PW,
                                              g.DH,
                                              g.DW,
                                              g.group,
                                              s_.math.tf32,
                                              relu_,
                                              has_z_,
                                              has_bias_,
                                              s_.conv.fused_relu,
                                              s_.conv.depthwise_on_dnn,
                                              s_.math.half};
        std::string flags = "conv";
        for (int64_t x : problem) flags += " " + std::to_string(x);
        std::vector<OpPlan> cands;
        cands.push_back(std::move(on_dnn));
        cands.push_back(std::move(on_blas));
        // With the NHWC candidate, every other candidate must match the f32
        // cuDNN one (cands[0]) on random inputs within the bf16/f16 tolerance;
        // the NHWC one reads the op's constant weights, converted when it was
        // planned, so the comparison runs on them too (fixed[1]).
        Check check;
        if (on_half) {
          cands.push_back(std::move(*on_half));
          check.reference = 0;
          check.tolerance = check_tolerance(s_.math.half, s_.math.tf32);
          check.fixed = {nullptr, weights_};
        }
        return fastest(label_, in, std::move(cands), s_, check, flags);
      }
      // The im2col path below still runs it; the log says why.
      HONE_LOG_DEBUG("cuda: {} runs on im2col+cuBLAS: {}", node_.describe(),
                     dc.error().to_string());
    }
    return plan_conv_on_blas(g, in[0].size(), depthwise, has_bias_, has_z_, relu_, s_.math.half,
                             suffix());
  }

  /// Half-precision activations (storage.h): cuDNN reads x and writes y in
  /// bf16/f16 NHWC (f32 sums, tensor-op math, its algorithm searched or
  /// replayed under the entry LABEL + " cudnn-find-nhwc", as the NHWC
  /// candidate's), then one in-place pass over y adds the bias and the
  /// residual (NHWC too) and applies Relu. Grouped and depthwise convs too,
  /// where cuDNN finds an algorithm; 1-D convs and asymmetric pads run plan().
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>&,
                           const PlanEnv&) const override {
    if (in[0].size() != 4) return fail(ErrorCode::kUnsupported, "a 1-D conv");
    HONE_TRY(ConvGeometry g, conv_geometry(node_, has_bias_, in));
    // A 1x1 stride-1 unpadded conv of constant weights is one GEMM over the
    // channels-last input (cuBLAS, bf16/f16 out), then the epilogue pass.
    if (g.KH == 1 && g.KW == 1 && g.SH == 1 && g.SW == 1 && g.PH == 0 && g.PW == 0 &&
        g.group == 1 && weights_ != nullptr && fits_int({g.N * g.H * g.W, g.M, g.C}) &&
        (!has_z_ || in.back() == conv_out_dims(g, 4)))
      return plan_half_gemm(g, in);
    if (s_.conv.dnn == nullptr) return fail(ErrorCode::kUnsupported, "no cuDNN");
    if (!g.symmetric) return fail(ErrorCode::kUnsupported, "asymmetric pads");
    if (has_z_ && in.back() != conv_out_dims(g, 4))
      return fail(
          ErrorCode::kInvalidArgument,
          "Conv's residual Add operand " + shape_to_string(in.back()) + " differs from its output");
    const int half = s_.math.half;
    // Relu: cuDNN's fused call, y = relu(conv + z + bias) in one
    // (cudnn_fused), its bias a bf16/f16 copy; should cuDNN refuse it at run
    // time, the op switches to the separate pass for good (logged).
    const bool fuse = relu_ && s_.conv.fused_relu && (!has_bias_ || bias_values_ != nullptr);
    HONE_TRY(std::shared_ptr<DnnConv> dc,
             plan_dnn(*s_.conv.dnn, g, true, fuse, s_, label_, in, half));
    const int64_t M = g.M, Cg = g.C / g.group, R = g.KH * g.KW;
    std::shared_ptr<const DeviceBuffer> hbias;
    if (fuse) {
      HONE_TRY(hbias, half_bias(M));
      const int type = half == kCudaR16BF ? kDnnBfloat16 : kDnnHalf;
      HONE_CHECK_OK(dc->lib->check(dc->lib->api().cudnnSetTensor4dDescriptor(
                                       dc->bias, kDnnNchw, type, 1, static_cast<int>(M), 1, 1),
                                   "cudnnSetTensor4dDescriptor(bias)"));
    }
    auto unfused = std::make_shared<std::atomic<bool>>(false);
    const std::string label = label_;
    const int64_t count = g.N * g.M * g.OH * g.OW;
    std::shared_ptr<const DeviceBuffer> krsc;
    if (weights_ != nullptr) {
      HONE_TRY(krsc, krsc_weights(*weights_, M, Cg, R));
    }
    const size_t dnn_at = krsc ? 0 : half_bytes(M * Cg * R);
    OpPlan p;
    p.outputs = {conv_out_dims(g, 4)};
    p.workspace_bytes = dnn_at + dc->algo.memory;
    p.kernel = std::string("conv2d.") + (half == kCudaR16BF ? "bf16" : "f16") +
               ".cuda.cudnn_nhwc_io[algo " + std::to_string(dc->algo.algo) +
               (fuse ? ", fused" : "") + "]" + suffix();
    // Weights and bias as they are stored (f32), the activations half.
    p.reads.assign(in.size(), Storage::kF32);
    p.reads[0] = Storage::kHalf;
    if (has_z_) p.reads.back() = Storage::kHalf;
    p.writes = {Storage::kHalf};
    const bool bias = has_bias_, z = has_z_, relu = relu_;
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      if (c.dnn == nullptr)
        return fail(ErrorCode::kInternal, "a cuDNN conv plan ran on a stream without cuDNN");
      const CUdeviceptr w = krsc ? krsc->ptr() : b.workspace;
      if (!krsc) HONE_CHECK_OK(to_nhwc_half(c, b.in[1], w, M, Cg, R, half));
      auto vp = [](CUdeviceptr q) { return reinterpret_cast<void*>(q); };
      const float one = 1.0f, zero = 0.0f;  // f32 scaling factors: the compute type is f32
      if (fuse && !unfused->load(std::memory_order_relaxed)) {
        // alpha2 = 0 with z = y: cuDNN reads no side input.
        const CUdeviceptr zp = z ? b.in.back() : b.out[0];
        const int st = dc->lib->api().cudnnConvolutionBiasActivationForward(
            c.dnn, &one, dc->x, vp(b.in[0]), dc->w, vp(w), dc->conv, dc->algo.algo,
            vp(b.workspace + dnn_at), dc->algo.memory, z ? &one : &zero, dc->y, vp(zp), dc->bias,
            vp(hbias->ptr()), dc->act, dc->y, vp(b.out[0]));
        if (st == 0) return {};
        if (!unfused->exchange(true))
          HONE_LOG_WARN(
              "cuda: {}: cuDNN's fused conv, bias and Relu refused bf16/f16 NHWC (status {}); "
              "the bias and Relu run as a separate pass",
              label, st);
      }
      HONE_CHECK_OK(dc->lib->check(
          dc->lib->api().cudnnConvolutionForward(c.dnn, &one, dc->x, vp(b.in[0]), dc->w, vp(w),
                                                 dc->conv, dc->algo.algo, vp(b.workspace + dnn_at),
                                                 dc->algo.memory, &zero, dc->y, vp(b.out[0])),
          "cudnnConvolutionForward"));
      if (!bias && !z && !relu) return {};
      return half_bias_act(c, b.out[0], bias ? b.in[2] : 0, z ? b.in.back() : 0, count, M, relu,
                           half);
    };
    return p;
  }

  /// plan_half()'s 1x1 conv: Y[N*H*W, M] = X[N*H*W, C] · Wᵀ, then the bias,
  /// residual and Relu in one pass.
  Result<OpPlan> plan_half_gemm(const ConvGeometry& g, const std::vector<dims_t>& in) const {
    const int half = s_.math.half;
    HONE_TRY(std::shared_ptr<const DeviceBuffer> w, krsc_weights(*weights_, g.M, g.C, 1));
    const int64_t rows = g.N * g.H * g.W, M = g.M, C = g.C, count = rows * g.M;
    OpPlan p;
    p.outputs = {conv_out_dims(g, 4)};
    p.kernel = std::string("conv2d.") + (half == kCudaR16BF ? "bf16" : "f16") +
               ".cuda.gemm_ex_nhwc" + suffix();
    p.reads.assign(in.size(), Storage::kF32);
    p.reads[0] = Storage::kHalf;
    if (has_z_) p.reads.back() = Storage::kHalf;
    p.writes = {Storage::kHalf};
    const bool bias = has_bias_, z = has_z_, relu = relu_;
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      HONE_CHECK_OK(gemm_half_out(c, rows, M, C, b.in[0], w->ptr(), b.out[0], half));
      if (!bias && !z && !relu) return {};
      return half_bias_act(c, b.out[0], bias ? b.in[2] : 0, z ? b.in.back() : 0, count, M, relu,
                           half);
    };
    return p;
  }

 private:
  std::string suffix() const { return std::string(has_z_ ? "+add" : "") + (relu_ ? "+relu" : ""); }

  /// The bias (zeros without one) as bf16/f16 on the device, for cuDNN's
  /// fused call under half activations; made on first use, kept for the op.
  Result<std::shared_ptr<const DeviceBuffer>> half_bias(int64_t M) const {
    std::lock_guard lock(krsc_mu_);
    if (half_bias_) return half_bias_;
    std::vector<float> f(static_cast<size_t>(M), 0.0f);
    if (bias_values_ != nullptr) {
      if (bias_values_->numel() != M)
        return fail(ErrorCode::kInvalidArgument, "Conv bias " +
                                                     shape_to_string(bias_values_->shape()) +
                                                     " is not [" + std::to_string(M) + "]");
      std::copy(bias_values_->data<float>(), bias_values_->data<float>() + M, f.begin());
    }
    HONE_TRY(const Driver* d, Driver::get());
    HONE_TRY(DeviceBuffer buf, upload_half(*d, f.data(), f.size(), s_.math.half));
    half_bias_ = std::make_shared<const DeviceBuffer>(std::move(buf));
    return half_bias_;
  }

  /// `w` (f32 [M, C, KH, KW]) as bf16/f16 [M, KH, KW, C] (KRSC) on the device,
  /// converted on the host the first time the op is planned and kept for it
  /// (the weights are a constant of the block graph, the same for every plan).
  Result<std::shared_ptr<const DeviceBuffer>> krsc_weights(const Tensor& w, int64_t M, int64_t C,
                                                           int64_t R) const {
    std::lock_guard lock(krsc_mu_);
    if (krsc_) return krsc_;
    if (w.numel() != M * C * R)
      return fail(ErrorCode::kInternal, "Conv weights " + shape_to_string(w.shape()) +
                                            " planned as [" + std::to_string(M) + ", " +
                                            std::to_string(C) + ", " + std::to_string(R) + "]");
    const float* f = w.data<float>();
    std::vector<uint16_t> h(static_cast<size_t>(M * C * R));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t r = 0; r < R; ++r)
          h[static_cast<size_t>((m * R + r) * C + c)] =
              half_bits(f[(m * C + c) * R + r], s_.math.half);
    HONE_TRY(const Driver* d, Driver::get());
    HONE_TRY(DeviceBuffer buf, DeviceBuffer::upload(*d, h.data(), h.size() * sizeof(uint16_t)));
    krsc_ = std::make_shared<const DeviceBuffer>(std::move(buf));
    return krsc_;
  }

  /// The bf16/f16 NHWC cuDNN candidate (module comment): constant weights
  /// (weights_) converted once, others on every run into the workspace.
  /// Workspace: x as half NHWC, y as half NHWC, [the weights as half KRSC],
  /// cuDNN's workspace, each region from a 256-byte boundary.
  Result<OpPlan> plan_on_dnn_half(const ConvGeometry& g, const std::vector<dims_t>& in) const {
    const int half = s_.math.half;
    HONE_TRY(std::shared_ptr<DnnConv> dc,
             plan_dnn(*s_.conv.dnn, g, true, false, s_, label_, in, half));
    const int64_t N = g.N, C = g.C, M = g.M, HW = g.H * g.W, P = g.OH * g.OW, R = g.KH * g.KW;
    std::shared_ptr<const DeviceBuffer> krsc;
    if (weights_ != nullptr) {
      HONE_TRY(krsc, krsc_weights(*weights_, M, C, R));
    }
    const size_t y_at = half_bytes(N * HW * C);
    const size_t w_at = y_at + half_bytes(N * P * M);
    const size_t dnn_at = w_at + (krsc ? 0 : half_bytes(M * C * R));
    OpPlan p;
    p.outputs = {conv_out_dims(g, in[0].size())};
    p.workspace_bytes = dnn_at + dc->algo.memory;
    p.kernel = std::string("conv2d.") + (half == kCudaR16BF ? "bf16" : "f16") +
               ".cuda.cudnn_nhwc[algo " + std::to_string(dc->algo.algo) + "]" + suffix();
    const bool bias = has_bias_, z = has_z_, relu = relu_;
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      if (c.dnn == nullptr)
        return fail(ErrorCode::kInternal, "a cuDNN conv plan ran on a stream without cuDNN");
      const CUdeviceptr xh = b.workspace, yh = b.workspace + y_at;
      HONE_CHECK_OK(to_nhwc_half(c, b.in[0], xh, N, C, HW, half));
      CUdeviceptr w = krsc ? krsc->ptr() : b.workspace + w_at;
      if (!krsc) HONE_CHECK_OK(to_nhwc_half(c, b.in[1], w, M, C, R, half));
      auto vp = [](CUdeviceptr q) { return reinterpret_cast<void*>(q); };
      const float one = 1.0f, zero = 0.0f;  // f32 scaling factors: the compute type is f32
      HONE_CHECK_OK(dc->lib->check(
          dc->lib->api().cudnnConvolutionForward(c.dnn, &one, dc->x, vp(xh), dc->w, vp(w), dc->conv,
                                                 dc->algo.algo, vp(b.workspace + dnn_at),
                                                 dc->algo.memory, &zero, dc->y, vp(yh)),
          "cudnnConvolutionForward"));
      return nhwc_half_epilogue(c, yh, b.out[0], bias ? b.in[2] : 0, z ? b.in.back() : 0, N, M, P,
                                relu, half);
    };
    return p;
  }

  Result<OpPlan> plan_on_dnn(const ConvGeometry& g, size_t rank,
                             std::shared_ptr<DnnConv> dc) const {
    OpPlan p;
    p.outputs = {conv_out_dims(g, rank)};
    p.workspace_bytes = dc->algo.memory;
    p.kernel = "conv2d.f32.cuda.cudnn[algo " + std::to_string(dc->algo.algo) +
               (dc->algo.math_type == kDnnFmaMath || !s_.math.tf32 ? "" : ", tf32") + "]" +
               suffix();
    if (relu_ && !has_bias_ && s_.conv.fused_relu) {
      HONE_TRY(const Driver* d, Driver::get());
      const std::vector<float> host(static_cast<size_t>(g.M), 0.0f);
      HONE_TRY(DeviceBuffer zeros,
               DeviceBuffer::upload(*d, host.data(), host.size() * sizeof(float)));
      dc->zero_bias = std::make_shared<DeviceBuffer>(std::move(zeros));
    }
    const bool bias = has_bias_, z = has_z_, relu = relu_, fused = s_.conv.fused_relu;
    const int64_t N = g.N, M = g.M, P = g.OH * g.OW;
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      if (c.dnn == nullptr)
        return fail(ErrorCode::kInternal, "a cuDNN conv plan ran on a stream without cuDNN");
      const CudnnApi& a = dc->lib->api();
      auto vp = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
      const CUdeviceptr y = b.out[0];
      const float one = 1.0f, zero = 0.0f;
      const size_t ws = dc->algo.memory;
      if (relu && fused) {
        // alpha2 = 0 with z = y: cuDNN reads no side input.
        const CUdeviceptr zp = z ? b.in.back() : y;
        const CUdeviceptr bp = bias ? b.in[2] : dc->zero_bias->ptr();
        return dc->lib->check(a.cudnnConvolutionBiasActivationForward(
                                  c.dnn, &one, dc->x, vp(b.in[0]), dc->w, vp(b.in[1]), dc->conv,
                                  dc->algo.algo, vp(b.workspace), ws, z ? &one : &zero, dc->y,
                                  vp(zp), dc->bias, vp(bp), dc->act, dc->y, vp(y)),
                              "cudnnConvolutionBiasActivationForward");
      }
      HONE_CHECK_OK(dc->lib->check(
          a.cudnnConvolutionForward(c.dnn, &one, dc->x, vp(b.in[0]), dc->w, vp(b.in[1]), dc->conv,
                                    dc->algo.algo, vp(b.workspace), ws, &zero, dc->y, vp(y)),
          "cudnnConvolutionForward"));
      if (bias || z || relu)
        return conv_epilogue(c, y, bias ? b.in[2] : 0, z ? b.in.back() : 0, N, M, P, relu);
      return {};
    };
    return p;
  }

  /// y = relu?(y + bias[channel] + z): one pass, each part optional.

  Node node_;
  /// The weights when they are an f32 initializer of the block graph (which
  /// outlives its units and so this op), else null: known before any plan.
  const Tensor* weights_;
  const Tensor* bias_values_;  // the bias when an f32 initializer, else null
  bool has_bias_, has_z_, relu_;
  BuildSettings s_;
  std::string label_;  // the unit's, as recorded in kernel_choices
  mutable std::mutex krsc_mu_;
  mutable std::shared_ptr<const DeviceBuffer> krsc_;       // krsc_weights()
  mutable std::shared_ptr<const DeviceBuffer> half_bias_;  // half_bias()
};

/// The one node reading `v`, if it is `op` and in no unit yet; else -1.
NodeId sole(const BlockInfo& b, ValueId v, const char* op) {
  const NodeId c = b.sole_consumer(v);
  return c >= 0 && b.g.node(c).op_type == op && b.g.node(c).domain.empty() ? c : -1;
}

}  // namespace

Result<Unit> create_conv(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  const Graph& g = b.g;
  Unit u;
  u.label = n.describe();
  const bool bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  u.inputs = {n.inputs[0], n.inputs[1]};
  if (bias) u.inputs.push_back(n.inputs[2]);
  ValueId cur = n.outputs[0];
  // A residual Add: the other operand has the conv output's static shape (no
  // broadcast). The unit runs where its last node is (place_units), after
  // whatever makes that operand.
  bool z = false, relu = false;
  if (NodeId add = sole(b, cur, "Add"); add >= 0 && g.node(add).inputs.size() == 2) {
    const Node& a = g.node(add);
    const ValueId other = a.inputs[0] == cur ? a.inputs[1] : a.inputs[0];
    const Value &ov = g.value(other), &cv = g.value(cur);
    if (other != cur && !ov.initializer && ov.dtype == DType::kF32 && ov.shape && cv.shape &&
        *ov.shape == *cv.shape && ov.shape->rank() >= 3) {
      z = true;
      u.inputs.push_back(other);
      b.used[static_cast<size_t>(add)] = true;
      absorbed->push_back(add);
      u.label += "+Add";
      cur = a.outputs[0];
    }
  }
  if (NodeId r = sole(b, cur, "Relu"); r >= 0) {
    relu = true;
    b.used[static_cast<size_t>(r)] = true;
    absorbed->push_back(r);
    u.label += "+Relu";
    cur = g.node(r).outputs[0];
  }
  u.outputs = {cur};
  const Value& wv = g.value(n.inputs[1]);
  const Tensor* weights =
      wv.initializer && wv.initializer->dtype() == DType::kF32 ? &*wv.initializer : nullptr;
  const Tensor* bias_values = nullptr;
  if (bias) {
    const Value& bv = g.value(n.inputs[2]);
    if (bv.initializer && bv.initializer->dtype() == DType::kF32) bias_values = &*bv.initializer;
  }
  u.op = std::make_unique<ConvOp>(n, bias, z, relu, b.settings, u.label, weights, bias_values);
  return u;
}

}  // namespace hone::cuda
