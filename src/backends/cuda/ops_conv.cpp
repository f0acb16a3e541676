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
//
// A 3-D conv (input rank 5, NCDHW: video nets) runs on cuDNN alone, through
// its N-d descriptors, f32 in and out (tensor-op math where the precision
// allows), its algorithm found or replayed like a 2-D one's; the bias,
// residual and Relu as above. Without cuDNN it is not claimed (support.cpp).
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "backends/cuda/conv.h"
#include "backends/cuda/conv_half.h"
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
        s_(s),
        label_(label),
        half_(node_, has_bias, has_z, relu, std::move(s), std::move(label), weights, bias_values) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
    HONE_TRY(ConvGeometry g, conv_geometry(node_, has_bias_, in));
    if (has_z_) {
      const dims_t want = conv_out_dims(g, in[0].size());
      if (in.back() != want)
        return fail(ErrorCode::kInvalidArgument,
                    "Conv's residual Add operand " + shape_to_string(in.back()) +
                        " differs from its output " + shape_to_string(want));
    }
    if (g.three_d) return plan_three_d(g, in);
    // hone's depthwise kernel keeps a channel's taps in 256 floats of shared memory.
    const bool depthwise = g.group > 1 && g.group == g.C && g.M == g.C && g.KH * g.KW <= 256;
    if (s_.conv.dnn != nullptr && g.symmetric && (!depthwise || s_.conv.depthwise_on_dnn)) {
      auto dc = plan_dnn(*s_.conv.dnn, g, s_.math.tf32, relu_, s_, label_, in, 0);
      if (dc) {
        HONE_TRY(OpPlan on_dnn, plan_on_dnn(g, in[0].size(), std::move(*dc)));
        // bf16/fp16: cuDNN on half NHWC copies, group 1 only (module comment).
        std::optional<OpPlan> on_half;
        if (s_.math.half != 0 && g.group == 1 && s_.conv.select != ConvSelect::kCudnn) {
          auto half = half_.plan_on_dnn_half(g, in);
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
  /// Under activations=half: reads and writes bf16/f16 NHWC (HalfConv::plan_io).
  Result<OpPlan> plan_half(const std::vector<dims_t>& in, const std::vector<Storage>&,
                           const PlanEnv&) const override {
    return half_.plan_io(in);
  }

 private:
  std::string suffix() const { return std::string(has_z_ ? "+add" : "") + (relu_ ? "+relu" : ""); }

  /// A 3-D conv (NCDHW f32; its residual operand checked by plan()): cuDNN's
  /// N-d descriptors only, its algorithm found or replayed as a 2-D one's; no
  /// other candidate to time.
  Result<OpPlan> plan_three_d(const ConvGeometry& g, const std::vector<dims_t>& in) const {
    if (s_.conv.dnn == nullptr)
      return fail(ErrorCode::kUnsupported, "a 3-D conv needs cuDNN, which is not loaded");
    if (!g.symmetric)
      return fail(ErrorCode::kUnsupported,
                  "a 3-D conv with asymmetric pads (cuDNN's descriptors "
                  "take one pad per dim)");
    HONE_TRY(std::shared_ptr<DnnConv> dc,
             plan_dnn(*s_.conv.dnn, g, s_.math.tf32, relu_, s_, label_, in, 0));
    return plan_on_dnn(g, 5, std::move(dc));
  }

  Result<OpPlan> plan_on_dnn(const ConvGeometry& g, size_t rank,
                             std::shared_ptr<DnnConv> dc) const {
    OpPlan p;
    p.outputs = {conv_out_dims(g, rank)};
    p.workspace_bytes = dc->algo.memory;
    p.kernel = std::string(g.three_d ? "conv3d" : "conv2d") + ".f32.cuda.cudnn[algo " +
               std::to_string(dc->algo.algo) +
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
    const int64_t N = g.N, M = g.M, P = g.OD * g.OH * g.OW;
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
  HalfConv half_;      // the bf16/f16 NHWC plans
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
