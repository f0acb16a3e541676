// cuDNN for the cuda backend's Conv unit (conv.h): descriptors for a
// geometry, and its algorithm replayed from kernel_choices or searched by
// cudnnFindConvolutionForwardAlgorithm once per geometry for the process.
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "backends/cuda/conv.h"
#include "core/log.h"

namespace hone::cuda {
namespace {

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

/// `dc`'s descriptors for the 3-D conv `g`: f32 NCDHW x and y (packed
/// strides), KCDRS weights, the bias as [1, M, 1, 1, 1], and the conv's
/// pads, strides and dilations per spatial dim (cross-correlation, f32 sums).
Result<void> set_three_d(const Cudnn& lib, DnnConv& dc, const ConvGeometry& g) {
  const CudnnApi& a = lib.api();
  auto i = [](int64_t v) { return static_cast<int>(v); };
  auto tensor = [&](cudnnTensorDescriptor_t t, std::array<int, 5> d, const char* what) {
    std::array<int, 5> st{};
    st[4] = 1;
    for (int k = 3; k >= 0; --k) st[k] = st[k + 1] * d[k + 1];
    return lib.check(a.cudnnSetTensorNdDescriptor(t, kDnnFloat, 5, d.data(), st.data()), what);
  };
  HONE_CHECK_OK(
      tensor(dc.x, {i(g.N), i(g.C), i(g.D), i(g.H), i(g.W)}, "cudnnSetTensorNdDescriptor(x)"));
  HONE_CHECK_OK(
      tensor(dc.y, {i(g.N), i(g.M), i(g.OD), i(g.OH), i(g.OW)}, "cudnnSetTensorNdDescriptor(y)"));
  HONE_CHECK_OK(tensor(dc.bias, {1, i(g.M), 1, 1, 1}, "cudnnSetTensorNdDescriptor(bias)"));
  const std::array<int, 5> w = {i(g.M), i(g.C / g.group), i(g.KD), i(g.KH), i(g.KW)};
  HONE_CHECK_OK(lib.check(a.cudnnSetFilterNdDescriptor(dc.w, kDnnFloat, kDnnNchw, 5, w.data()),
                          "cudnnSetFilterNdDescriptor"));
  const std::array<int, 3> pads = {i(g.PD), i(g.PH), i(g.PW)};
  const std::array<int, 3> strides = {i(g.SD), i(g.SH), i(g.SW)};
  const std::array<int, 3> dilations = {i(g.DD), i(g.DH), i(g.DW)};
  return lib.check(
      a.cudnnSetConvolutionNdDescriptor(dc.conv, 3, pads.data(), strides.data(), dilations.data(),
                                        kDnnCrossCorrelation, kDnnFloat),
      "cudnnSetConvolutionNdDescriptor");
}

}  // namespace

Result<std::shared_ptr<DnnConv>> plan_dnn(const Cudnn& lib, const ConvGeometry& g, bool tf32,
                                          bool relu, const BuildSettings& s,
                                          const std::string& label, const std::vector<dims_t>& in,
                                          int half) {
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
  if (g.three_d) {
    if (half != 0) return fail(ErrorCode::kUnsupported, "a bf16/f16 NHWC 3-D conv");
    HONE_CHECK_OK(set_three_d(lib, *dc, g));
  } else {
    // The dims are given as N, C, H, W whatever the layout.
    HONE_CHECK_OK(
        lib.check(a.cudnnSetTensor4dDescriptor(dc->x, layout, type, i(g.N), i(g.C), i(g.H), i(g.W)),
                  "cudnnSetTensor4dDescriptor(x)"));
    HONE_CHECK_OK(lib.check(
        a.cudnnSetTensor4dDescriptor(dc->y, layout, type, i(g.N), i(g.M), i(g.OH), i(g.OW)),
        "cudnnSetTensor4dDescriptor(y)"));
    HONE_CHECK_OK(
        lib.check(a.cudnnSetTensor4dDescriptor(dc->bias, kDnnNchw, kDnnFloat, 1, i(g.M), 1, 1),
                  "cudnnSetTensor4dDescriptor(bias)"));
    HONE_CHECK_OK(lib.check(a.cudnnSetFilter4dDescriptor(dc->w, type, layout, i(g.M),
                                                         i(g.C / g.group), i(g.KH), i(g.KW)),
                            "cudnnSetFilter4dDescriptor"));
    HONE_CHECK_OK(lib.check(
        a.cudnnSetConvolution2dDescriptor(dc->conv, i(g.PH), i(g.PW), i(g.SH), i(g.SW), i(g.DH),
                                          i(g.DW), kDnnCrossCorrelation, kDnnFloat),
        "cudnnSetConvolution2dDescriptor"));
  }
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
  const std::vector<int64_t> key = {g.N,  g.C,  g.H,  g.W,  g.M,  g.KH, g.KW,
                                    g.SH, g.SW, g.PH, g.PW, g.DH, g.DW, g.group,
                                    math, type, g.D,  g.KD, g.SD, g.PD, g.DD};
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

}  // namespace hone::cuda
