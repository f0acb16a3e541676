// Private to the cuda backend: the pieces of its Conv unit (ops_conv.cpp,
// where the module comment says how the candidates are chosen): a conv's
// geometry, the im2col + cuBLAS and depthwise path (conv_gemm.cpp), and
// cuDNN's descriptors with the algorithm searched or replayed at build
// (cudnn_conv.cpp).
//
//   HONE_TRY(ConvGeometry g, conv_geometry(node, has_bias, in));
//   HONE_TRY(auto dc, plan_dnn(*s.conv.dnn, g, tf32, relu, s, label, in, 0));   // cuDNN
//   HONE_TRY(OpPlan p, plan_conv_on_blas(g, in[0].size(), false, ...));       // else
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cudnn_api.h"
#include "backends/cuda/op.h"

namespace hone::cuda {

struct ConvGeometry {
  int64_t N, C, H, W, M, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, group;
  bool symmetric;  // pad_end == pad_begin: what cuDNN's legacy descriptors express
  // A 3-D conv's depth (input rank 5, NCDHW): input, window, stride, begin
  // pad, dilation, output. A 1-D or 2-D conv keeps these at 1 (pad 0) and
  // three_d false; only cuDNN runs a 3-D one (plan_dnn, half 0).
  int64_t D = 1, KD = 1, SD = 1, PD = 0, DD = 1, OD = 1;
  bool three_d = false;
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

/// The geometry of Conv `n` on inputs of `in` dims (1-D convs as 2-D ones
/// of height 1; 3-D ones with their depth), or why it cannot run here.
[[nodiscard]] Result<ConvGeometry> conv_geometry(const Node& n, bool has_bias,
                                                 const std::vector<dims_t>& in);
/// The output dims of a conv of input rank `rank` (3, 4 or 5).
inline dims_t conv_out_dims(const ConvGeometry& g, size_t rank) {
  if (rank == 5) return dims_t{g.N, g.M, g.OD, g.OH, g.OW};
  return rank == 3 ? dims_t{g.N, g.M, g.OW} : dims_t{g.N, g.M, g.OH, g.OW};
}

/// Descriptors for `g`, with the algorithm recorded for unit `label` and
/// inputs `in` in s.choices (entry LABEL + " cudnn-find"), else the fastest
/// one cuDNN finds for it within kMaxDnnWorkspace, remembered per geometry
/// for the process (ResNets repeat a few geometries many times, and
/// re-timing them would only add noise) and recorded.
/// `half` 0: x, w and y f32 NCHW (KCRS). kCudaR16BF / kCudaR16F: bf16 / f16
/// NHWC (KRSC), f32 sums, tensor-op math, the entry LABEL + " cudnn-find-nhwc"
/// and a cache of its own; `relu` must then be false (no fused call).
Result<std::shared_ptr<DnnConv>> plan_dnn(const Cudnn& lib, const ConvGeometry& g, bool tf32,
                                          bool relu, const BuildSettings& s,
                                          const std::string& label, const std::vector<dims_t>& in,
                                          int half);

/// y = relu?(y + bias[channel] + z): one pass, each part optional.
[[nodiscard]] Result<void> conv_epilogue(const ExecCtx& c, CUdeviceptr y, CUdeviceptr bias,
                                         CUdeviceptr z, int64_t N, int64_t M, int64_t P, bool relu);
/// The conv on im2col + cuBLAS (bf16/f16 operands under a `precision_half`),
/// or hone's direct kernel when `depthwise`, with the bias, the residual
/// input (the unit's last) and Relu it fuses. `suffix`: the kernel id's end.
[[nodiscard]] Result<OpPlan> plan_conv_on_blas(const ConvGeometry& g, size_t rank, bool depthwise,
                                               bool has_bias, bool has_z, bool relu,
                                               int precision_half, const std::string& suffix);

}  // namespace hone::cuda
