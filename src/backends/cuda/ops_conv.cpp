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
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "backends/cuda/cudnn_api.h"
#include "backends/cuda/op.h"
#include "backends/cuda/op_timer.h"
#include "core/log.h"
#include "ops/window.h"

namespace hone::cuda {
namespace {

struct Geometry {
  int64_t N, C, H, W, M, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, group;
  bool symmetric;  // pad_end == pad_begin: what cuDNN's legacy descriptors express
};

/// The descriptors of one planned cuDNN conv, and its chosen algorithm.
struct DnnConv {
  const Cudnn* lib = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  DnnAlgoPerf algo{};
  std::shared_ptr<DeviceBuffer> zero_bias;  // a Conv without bias whose Relu cuDNN fuses
  DnnConv() = default;
  DnnConv(const DnnConv&) = delete;
  DnnConv& operator=(const DnnConv&) = delete;
  ~DnnConv() {
    if (lib == nullptr) return;
    const CudnnApi& a = lib->api();
    if (x) a.cudnnDestroyTensorDescriptor(x);
    if (y) a.cudnnDestroyTensorDescriptor(y);
    if (bias) a.cudnnDestroyTensorDescriptor(bias);
    if (w) a.cudnnDestroyFilterDescriptor(w);
    if (conv) a.cudnnDestroyConvolutionDescriptor(conv);
    if (act) a.cudnnDestroyActivationDescriptor(act);
  }
};

constexpr size_t kMaxDnnWorkspace = size_t{256} << 20;

/// The id a cuDNN algorithm choice is recorded under: "cudnn[algo 1, math 3]"
/// for the f32 NCHW conv, "cudnn_nhwc[algo 1, math 1]" for the bf16/f16 NHWC one
/// (`half` != 0), so that neither replays the other's record.
std::string algo_id(const DnnAlgoPerf& p, int half) {
  return std::string(half != 0 ? "cudnn_nhwc" : "cudnn") + "[algo " + std::to_string(p.algo) +
         ", math " + std::to_string(p.math_type) + "]";
}

/// The recorded algorithm `id` (algo_id()) set up on `dc` without timing:
/// its math mode on the descriptor (where tensor ops are allowed) and its
/// workspace queried; or why it cannot be (a malformed id, a tensor-op
/// algorithm under strict fp32, a status or a workspace over
/// kMaxDnnWorkspace here). `search_math`: the descriptor's math mode before.
Result<DnnAlgoPerf> recorded_algo(const Cudnn& lib, DnnConv& dc, const std::string& id,
                                  bool tensor_ops, int half, int search_math) {
  const char* form = half != 0 ? "cudnn_nhwc[algo %d, math %d%c" : "cudnn[algo %d, math %d%c";
  const std::string expected =
      std::string("not ") + (half != 0 ? "cudnn_nhwc" : "cudnn") + "[algo A, math M]";
  int algo = -1, math = -1;
  char tail = 0;
  if (std::sscanf(id.c_str(), form, &algo, &math, &tail) != 3 || tail != ']' || algo < 0 ||
      math < 0)
    return fail(ErrorCode::kInvalidArgument, expected);
  DnnAlgoPerf p{};
  p.algo = algo;
  p.math_type = math;
  if (algo_id(p, half) != id) return fail(ErrorCode::kInvalidArgument, expected);
  if (!tensor_ops && math != kDnnFmaMath && math != kDnnDefaultMath)
    return fail(ErrorCode::kInvalidArgument, "a tensor-op math mode under strict fp32");
  const CudnnApi& a = lib.api();
  if (tensor_ops)
    HONE_CHECK_OK(
        lib.check(a.cudnnSetConvolutionMathType(dc.conv, math), "cudnnSetConvolutionMathType"));
  size_t bytes = 0;
  auto sized = lib.check(a.cudnnGetConvolutionForwardWorkspaceSize(
                             lib.planning_handle(), dc.x, dc.w, dc.conv, dc.y, algo, &bytes),
                         "cudnnGetConvolutionForwardWorkspaceSize");
  if (sized && bytes > kMaxDnnWorkspace)
    sized = fail(ErrorCode::kUnsupported,
                 "needs " + std::to_string(bytes >> 20) + " MiB of workspace here");
  if (!sized) {
    if (tensor_ops)  // back to what cudnnFindConvolutionForwardAlgorithm searches under
      HONE_CHECK_OK(lib.check(a.cudnnSetConvolutionMathType(dc.conv, search_math),
                              "cudnnSetConvolutionMathType"));
    return fail(std::move(sized).error());
  }
  p.memory = bytes;
  return p;
}

/// Descriptors for `g`, with the algorithm recorded for unit `label` and
/// inputs `in` in s.choices (entry LABEL + " cudnn-find"), else the fastest
/// one cuDNN finds for it within kMaxDnnWorkspace, remembered per geometry
/// for the process (ResNets repeat a few geometries many times, and
/// re-timing them would only add noise) and recorded.
/// `half` 0: x, w and y f32 NCHW (KCRS). kCudaR16BF / kCudaR16F: bf16 / f16
/// NHWC (KRSC), f32 sums, tensor-op math, the entry LABEL + " cudnn-find-nhwc"
/// and a cache of its own; `relu` must then be false (no fused call).
Result<std::shared_ptr<DnnConv>> plan_dnn(const Cudnn& lib, const Geometry& g, bool tf32, bool relu,
                                          const BuildSettings& s, const std::string& label,
                                          const std::vector<dims_t>& in, int half) {
  auto dc = std::make_shared<DnnConv>();
  dc->lib = &lib;
  const CudnnApi& a = lib.api();
  auto i = [](int64_t v) { return static_cast<int>(v); };
  const int layout = half != 0 ? kDnnNhwc : kDnnNchw;
  const int type = half == kCudaR16BF ? kDnnBfloat16 : half != 0 ? kDnnHalf : kDnnFloat;
  const bool tensor_ops = tf32 || half != 0;
  HONE_CHECK_OK(lib.check(a.cudnnCreateTensorDescriptor(&dc->x), "cudnnCreateTensorDescriptor"));
  HONE_CHECK_OK(lib.check(a.cudnnCreateTensorDescriptor(&dc->y), "cudnnCreateTensorDescriptor"));
  HONE_CHECK_OK(lib.check(a.cudnnCreateTensorDescriptor(&dc->bias), "cudnnCreateTensorDescriptor"));
  HONE_CHECK_OK(lib.check(a.cudnnCreateFilterDescriptor(&dc->w), "cudnnCreateFilterDescriptor"));
  HONE_CHECK_OK(
      lib.check(a.cudnnCreateConvolutionDescriptor(&dc->conv), "cudnnCreateConvolutionDescriptor"));
  // The dims are given as N, C, H, W whatever the layout.
  HONE_CHECK_OK(
      lib.check(a.cudnnSetTensor4dDescriptor(dc->x, layout, type, i(g.N), i(g.C), i(g.H), i(g.W)),
                "cudnnSetTensor4dDescriptor(x)"));
  HONE_CHECK_OK(
      lib.check(a.cudnnSetTensor4dDescriptor(dc->y, layout, type, i(g.N), i(g.M), i(g.OH), i(g.OW)),
                "cudnnSetTensor4dDescriptor(y)"));
  HONE_CHECK_OK(
      lib.check(a.cudnnSetTensor4dDescriptor(dc->bias, kDnnNchw, kDnnFloat, 1, i(g.M), 1, 1),
                "cudnnSetTensor4dDescriptor(bias)"));
  HONE_CHECK_OK(lib.check(
      a.cudnnSetFilter4dDescriptor(dc->w, type, layout, i(g.M), i(g.C / g.group), i(g.KH), i(g.KW)),
      "cudnnSetFilter4dDescriptor"));
  HONE_CHECK_OK(lib.check(
      a.cudnnSetConvolution2dDescriptor(dc->conv, i(g.PH), i(g.PW), i(g.SH), i(g.SW), i(g.DH),
                                        i(g.DW), kDnnCrossCorrelation, kDnnFloat),
      "cudnnSetConvolution2dDescriptor"));
  HONE_CHECK_OK(lib.check(a.cudnnSetConvolutionGroupCount(dc->conv, i(g.group)),
                          "cudnnSetConvolutionGroupCount"));
  const int math = half != 0 ? kDnnTensorOpMath : tf32 ? kDnnDefaultMath : kDnnFmaMath;
  HONE_CHECK_OK(
      lib.check(a.cudnnSetConvolutionMathType(dc->conv, math), "cudnnSetConvolutionMathType"));
  if (relu) {
    HONE_CHECK_OK(
        lib.check(a.cudnnCreateActivationDescriptor(&dc->act), "cudnnCreateActivationDescriptor"));
    HONE_CHECK_OK(
        lib.check(a.cudnnSetActivationDescriptor(dc->act, kDnnActRelu, kDnnNotPropagateNan, 0.0),
                  "cudnnSetActivationDescriptor"));
  }
  const std::vector<int64_t> key = {g.N,  g.C,  g.H,  g.W,  g.M,  g.KH,    g.KW, g.SH,
                                    g.SW, g.PH, g.PW, g.DH, g.DW, g.group, math, type};
  static std::map<std::vector<int64_t>, DnnAlgoPerf> chosen;
  std::lock_guard lock(lib.planning_mutex());
  const std::string what = label + (half != 0 ? " cudnn-find-nhwc" : " cudnn-find");
  bool have = false;
  if (s.choices) {
    if (auto id = s.choices->find(KernelChoices::key(what, in, s.math.mode))) {
      if (auto p = recorded_algo(lib, *dc, *id, tensor_ops, half, math)) {
        dc->algo = *p;
        have = true;
        s.choices->count_replayed();
        HONE_LOG_DEBUG("cuda: {} {}: {} from kernel_choices, not searched", label, shapes_text(in),
                       *id);
      } else {
        HONE_LOG_WARN(
            "cuda: {} {}: the recorded cuDNN algorithm {} (kernel_choices) cannot run "
            "here ({}); searching instead",
            label, shapes_text(in), *id, p.error().message());
      }
    }
  }
  if (!have) {
    auto how = KernelChoices::How::kReused;
    if (auto it = chosen.find(key); it != chosen.end()) {
      dc->algo = it->second;
    } else {
      DnnAlgoPerf perf[16] = {};
      int n = 0;
      HONE_CHECK_OK(
          lib.check(a.cudnnFindConvolutionForwardAlgorithm(lib.planning_handle(), dc->x, dc->w,
                                                           dc->conv, dc->y, 16, &n, perf),
                    "cudnnFindConvolutionForwardAlgorithm"));
      // Sorted fastest first. Strict fp32 takes no tensor-op result.
      const DnnAlgoPerf* best = nullptr;
      for (int k = 0; k < n && best == nullptr; ++k)
        if (perf[k].status == 0 && perf[k].memory <= kMaxDnnWorkspace &&
            (tensor_ops || perf[k].math_type == kDnnFmaMath ||
             perf[k].math_type == kDnnDefaultMath))
          best = &perf[k];
      if (best == nullptr)
        return fail(ErrorCode::kUnsupported,
                    std::string("cuDNN found no algorithm for this ") +
                        (half != 0 ? "bf16/f16 NHWC " : "") + "conv within " +
                        std::to_string(kMaxDnnWorkspace >> 20) + " MiB of workspace");
      dc->algo = *best;
      chosen.emplace(key, *best);
      how = KernelChoices::How::kTimed;
      HONE_LOG_DEBUG("cuda: {} {}: cuDNN found {}", label, shapes_text(in), algo_id(*best, half));
    }
    if (s.choices) s.choices->record(what, in, s.math.mode, algo_id(dc->algo, half), how);
  }
  if (tensor_ops)  // run the algorithm in the math mode it was timed with
    HONE_CHECK_OK(lib.check(a.cudnnSetConvolutionMathType(dc->conv, dc->algo.math_type),
                            "cudnnSetConvolutionMathType"));
  return dc;
}

/// Channel counts below this convert element by element (the *_rows kernels),
/// not in 32x32 tiles, most of which they would leave idle.
constexpr int64_t kMinTiledChannels = 16;

/// Launches a 32x32-tile kernel of kernels/fixed.cu (block 32 x 8, grid-stride over
/// `tiles` tiles on gridDim.x alone).
Result<void> launch_tiles(const ExecCtx& c, CUfunction f, int64_t tiles, std::vector<void*> args) {
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 20));
  return launch_grid(c.d, f, c.stream, blocks, 1, 1, 32, 8, std::move(args));
}

int64_t tiles_of(int64_t n, int64_t channels, int64_t positions) {
  return n * ((channels + 31) / 32) * ((positions + 31) / 32);
}

/// Enqueues y bf16/f16 [N, P, C] = x f32 [N, C, P] (`half` as gemm_rm's).
Result<void> to_nhwc_half(const ExecCtx& c, CUdeviceptr x, CUdeviceptr y, int64_t N, int64_t C,
                          int64_t P, int half) {
  long long n = N, p = P;
  int ch = static_cast<int>(C), bf16 = half == kCudaR16BF ? 1 : 0;
  if (C < kMinTiledChannels) {
    HONE_TRY(CUfunction f, c.fixed.function("hone_to_nhwc_half_rows"));
    long long count = N * C * P;
    return launch_1d(c.d, f, c.stream, count, {&x, &y, &count, &ch, &p, &bf16});
  }
  HONE_TRY(CUfunction f, c.fixed.function("hone_to_nhwc_half"));
  return launch_tiles(c, f, tiles_of(N, C, P), {&x, &y, &n, &ch, &p, &bf16});
}

/// Enqueues out f32 [N, M, P] = relu?(yh bf16/f16 [N, P, M] + bias[m] + z),
/// bias and z optional (0).
Result<void> nhwc_half_epilogue(const ExecCtx& c, CUdeviceptr yh, CUdeviceptr out, CUdeviceptr bias,
                                CUdeviceptr z, int64_t N, int64_t M, int64_t P, bool relu,
                                int half) {
  long long n = N, p = P;
  int m = static_cast<int>(M), r = relu ? 1 : 0, bf16 = half == kCudaR16BF ? 1 : 0;
  if (M < kMinTiledChannels) {
    HONE_TRY(CUfunction f, c.fixed.function("hone_nhwc_half_epilogue_rows"));
    long long count = N * M * P;
    return launch_1d(c.d, f, c.stream, count, {&yh, &out, &bias, &z, &count, &m, &p, &r, &bf16});
  }
  HONE_TRY(CUfunction f, c.fixed.function("hone_nhwc_half_epilogue"));
  return launch_tiles(c, f, tiles_of(N, M, P), {&yh, &out, &bias, &z, &n, &m, &p, &r, &bf16});
}

class ConvOp final : public Op {
 public:
  ConvOp(Node n, bool has_bias, bool has_z, bool relu, BuildSettings s, std::string label,
         const Tensor* weights)
      : node_(std::move(n)),
        weights_(weights),
        has_bias_(has_bias),
        has_z_(has_z),
        relu_(relu),
        s_(std::move(s)),
        label_(std::move(label)) {}

  Result<OpPlan> plan(const std::vector<dims_t>& in, const PlanEnv&) const override {
    HONE_TRY(Geometry g, geometry(in));
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
        HONE_TRY(OpPlan on_blas, plan_on_blas(g, in[0].size(), depthwise));
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
    return plan_on_blas(g, in[0].size(), depthwise);
  }

 private:
  Result<Geometry> geometry(const std::vector<dims_t>& in) const {
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
    HONE_TRY(ops::Window win, ops::make_window(node_, spatial, kernel, false, "Conv"));
    if (has_bias_ && numel_of(in[2]) != M)
      return fail(ErrorCode::kInvalidArgument, "Conv bias " + shape_to_string(in[2]) + " for " +
                                                   std::to_string(M) + " output channels");
    // 1-D convs run as 2-D ones of height 1.
    const bool one_d = x.size() == 3;
    auto at = [&](const dims_t& v, int d, int64_t one) {
      return one_d ? (d == 0 ? one : v[0]) : v[d];
    };
    Geometry g{N,
               C,
               at(spatial, 0, 1),
               at(spatial, 1, 1),
               M,
               at(kernel, 0, 1),
               at(kernel, 1, 1),
               at(win.strides, 0, 1),
               at(win.strides, 1, 1),
               at(win.pad_begin, 0, 0),
               at(win.pad_begin, 1, 0),
               at(win.dilations, 0, 1),
               at(win.dilations, 1, 1),
               at(win.out, 0, 1),
               at(win.out, 1, 1),
               group,
               win.pad_begin == win.pad_end};
    if (!fits_int({C * g.KH * g.KW * g.OH * g.OW, N * M * g.OH * g.OW, C * g.H * g.W}))
      return fail(ErrorCode::kUnsupported, "Conv too large for 32-bit cuBLAS sizes");
    return g;
  }

  dims_t out_dims(const Geometry& g, size_t rank) const {
    return rank == 3 ? dims_t{g.N, g.M, g.OW} : dims_t{g.N, g.M, g.OH, g.OW};
  }

  std::string suffix() const { return std::string(has_z_ ? "+add" : "") + (relu_ ? "+relu" : ""); }

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
  Result<OpPlan> plan_on_dnn_half(const Geometry& g, const std::vector<dims_t>& in) const {
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
    p.outputs = {out_dims(g, in[0].size())};
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

  Result<OpPlan> plan_on_dnn(const Geometry& g, size_t rank, std::shared_ptr<DnnConv> dc) const {
    OpPlan p;
    p.outputs = {out_dims(g, rank)};
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
        return epilogue(c, y, bias ? b.in[2] : 0, z ? b.in.back() : 0, N, M, P, relu);
      return {};
    };
    return p;
  }

  /// y = relu?(y + bias[channel] + z): one pass, each part optional.
  static Result<void> epilogue(const ExecCtx& c, CUdeviceptr y, CUdeviceptr bias, CUdeviceptr z,
                               int64_t N, int64_t M, int64_t P, bool relu) {
    HONE_TRY(CUfunction f, c.fixed.function("hone_conv_epilogue"));
    long long n = N * M * P, p = P;
    int m = static_cast<int>(M), r = relu ? 1 : 0;
    return launch_1d(c.d, f, c.stream, n, {&y, &bias, &z, &n, &p, &m, &r});
  }

  Result<OpPlan> plan_on_blas(const Geometry& g, size_t rank, bool depthwise) const {
    const int64_t N = g.N, C = g.C, H = g.H, W = g.W, M = g.M, KH = g.KH, KW = g.KW;
    const int64_t P = g.OH * g.OW, Kg = (C / g.group) * KH * KW, Mg = M / g.group;
    const int64_t group = g.group;
    const bool direct =
        KH == 1 && KW == 1 && g.SH == 1 && g.SW == 1 && g.PH == 0 && g.PW == 0 && g.symmetric;
    // Columns of several images at once, so one strided-batched SGEMM per
    // group covers them; capped so the workspace stays modest.
    constexpr int64_t kMaxWorkspace = int64_t{256} << 20;
    const int64_t per_image = C * KH * KW * P * int64_t{sizeof(float)};
    const int64_t chunk =
        direct || depthwise ? N : std::clamp<int64_t>(kMaxWorkspace / per_image, 1, N);
    OpPlan p;
    p.outputs = {out_dims(g, rank)};
    p.workspace_bytes = direct || depthwise ? 0 : static_cast<size_t>(chunk * per_image);
    // bf16/f16: the chunk's columns and (unless converted at build) the
    // weights are converted into the workspace after the f32 columns.
    const int half = depthwise ? 0 : s_.math.half;
    const size_t half_cols = (p.workspace_bytes + 255) / 256 * 256;
    const size_t half_w = half_cols + half_bytes(chunk * C * KH * KW * P);
    if (half != 0) p.workspace_bytes = half_w + half_bytes(M * Kg);
    p.kernel = (depthwise ? std::string("conv2d.f32.cuda.depthwise")
                          : gemm_kernel("conv2d", direct ? "sgemm" : "im2col+sgemm", half)) +
               suffix();
    const bool bias = has_bias_, z = has_z_, relu = relu_;
    int geo[] = {int(H),    int(W),    int(KH),   int(KW),   int(g.SH), int(g.SW),
                 int(g.PH), int(g.PW), int(g.DH), int(g.DW), int(g.OH), int(g.OW)};
    const bool rows4 = depthwise && KH == KW && (KH == 3 || KH == 5 || KH == 7) && g.SH == g.SW &&
                       (g.SH == 1 || g.SH == 2) && g.DH == 1 && g.DW == 1;
    const std::string dw_name =
        rows4 ? "hone_conv_dw_" + std::to_string(KH) + "_" + std::to_string(g.SH) : "hone_conv_dw";
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      const CUdeviceptr y = b.out[0];
      int gg[12];
      std::copy(std::begin(geo), std::end(geo), gg);
      if (depthwise) {
        CUdeviceptr xi = b.in[0], wi = b.in[1], bi = bias ? b.in[2] : 0, yo = y;
        long long nc = N * C;
        int ch = int(C), fused_relu = relu && !z ? 1 : 0;
        std::vector<void*> ptrs = {&xi, &wi, &bi, &yo, &nc, &ch};
        // Square 3/5/7 taps at stride 1 or 2 without dilation: four outputs a
        // thread (hone_conv_dw_K_S); any other geometry: one (hone_conv_dw).
        int64_t per_plane = P;
        if (rows4) {
          for (int k : {0, 1, 6, 7, 10, 11}) ptrs.push_back(&gg[k]);  // H W PH PW OH OW
          per_plane = g.OH * ((g.OW + 3) / 4);
        } else {
          for (int& v : gg) ptrs.push_back(&v);
        }
        ptrs.push_back(&fused_relu);
        HONE_TRY(CUfunction dw, c.fixed.function(dw_name));
        // A grid row per plane, a block per 256 of its threads (fewer for a
        // small plane: 7x7 one output a thread takes 64).
        const auto threads =
            static_cast<unsigned>(std::min<int64_t>((per_plane + 31) / 32 * 32, 256));
        const auto gx = static_cast<unsigned>(std::min<int64_t>((per_plane + 255) / 256, 64));
        const auto gy = static_cast<unsigned>(std::min<int64_t>(N * C, 65535));
        HONE_CHECK_OK(launch_grid(c.d, dw, c.stream, gx, gy, 1, threads, 1, ptrs));
        if (z) return epilogue(c, y, 0, b.in.back(), N, M, P, relu);
        return {};
      } else {
        if (bias) HONE_CHECK_OK(strided_copy(c, b.in[2], y, {N, M, P}, {0, 1, 0}, {M * P, P, 1}));
        HONE_TRY(CUfunction im2col, c.fixed.function("hone_im2col"));
        auto f32 = [](int64_t n) { return static_cast<CUdeviceptr>(n) * sizeof(float); };
        // GEMM operands: f32, or bf16/f16 copies (2 bytes an element).
        auto op_at = [&](CUdeviceptr base, int64_t n) {
          return base + static_cast<CUdeviceptr>(n) * (half != 0 ? 2 : 4);
        };
        CUdeviceptr w = b.in[1];
        if (half != 0) {
          w = built_half(b, 1);
          if (w == 0) {
            HONE_TRY(w, to_half(c, b.in[1], M * Kg, b.workspace + half_w, half));
          }
        }
        for (int64_t i0 = 0; i0 < N; i0 += chunk) {
          long long imgs = std::min(chunk, N - i0);
          CUdeviceptr img = b.in[0] + f32(i0 * C * H * W);
          CUdeviceptr col = direct ? img : b.workspace;
          if (!direct) {
            int ch = int(C);
            std::vector<void*> ptrs = {&img, &col, &imgs, &ch};
            for (int& v : gg) ptrs.push_back(&v);
            HONE_CHECK_OK(launch_1d(c.d, im2col, c.stream, imgs * C * KH * KW * P, ptrs));
          }
          if (half != 0) {
            HONE_TRY(col, to_half(c, col, imgs * C * KH * KW * P, b.workspace + half_cols, half));
          }
          for (int64_t gi = 0; gi < group; ++gi)
            HONE_CHECK_OK(gemm_rm(c, false, false, Mg, P, Kg, 1.0f, op_at(w, gi * Mg * Kg), 0,
                                  op_at(col, gi * Kg * P), C * KH * KW * P, bias ? 1.0f : 0.0f,
                                  y + f32((i0 * M + gi * Mg) * P), M * P, imgs, half));
        }
      }
      if (z || relu) return epilogue(c, y, 0, z ? b.in.back() : 0, N, M, P, relu);
      return {};
    };
    return p;
  }

  Node node_;
  /// The weights when they are an f32 initializer of the block graph (which
  /// outlives its units and so this op), else null: known before any plan.
  const Tensor* weights_;
  bool has_bias_, has_z_, relu_;
  BuildSettings s_;
  std::string label_;  // the unit's, as recorded in kernel_choices
  mutable std::mutex krsc_mu_;
  mutable std::shared_ptr<const DeviceBuffer> krsc_;  // krsc_weights()
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
  u.op = std::make_unique<ConvOp>(n, bias, z, relu, b.settings, u.label, weights);
  return u;
}

}  // namespace hone::cuda
