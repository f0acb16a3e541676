// Private to the cuda backend: a conv's bf16/f16 NHWC plans, beside ConvOp
// (ops_conv.cpp), which owns one and asks it for them. It keeps the weights
// converted to half KRSC, and the bias to half, once per op.
//
//   HalfConv half(node, has_bias, has_z, relu, settings, label, weights, bias_values);
//   HONE_TRY(OpPlan p, half.plan_io(in));  // activations=half: NHWC in and out
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/conv.h"
#include "backends/cuda/op.h"

namespace hone::cuda {

class HalfConv {
 public:
  /// As ConvOp's: the node, its bias / residual Add / Relu, the block's
  /// settings, the unit's label (kernel_choices' entries), and the weights
  /// and bias when they are f32 initializers of the block graph (else null).
  HalfConv(Node n, bool has_bias, bool has_z, bool relu, BuildSettings s, std::string label,
           const Tensor* weights, const Tensor* bias_values);

  /// activations=half: bf16/f16 NHWC in and out (f32 sums, tensor-op math,
  /// its algorithm searched or replayed under the entry LABEL + " cudnn-find-
  /// nhwc"), the bias, residual (NHWC too) and Relu in cuDNN's fused call or
  /// one in-place pass after; a 1x1 stride-1 conv of constant weights as one
  /// cuBLAS GEMM. Grouped and depthwise convs too, where cuDNN finds an
  /// algorithm; 1-D convs and asymmetric pads are refused (ConvOp::plan runs them).
  /// A patch conv of constant weights (window == stride) as a gather of its
  /// patches and one GEMM.
  [[nodiscard]] Result<OpPlan> plan_io(const std::vector<dims_t>& in) const;

  /// f32 activations' bf16/f16 NHWC cuDNN candidate: constant weights
  /// converted once, others on every run into the workspace. Workspace: x as
  /// half NHWC, y as half NHWC, [the weights as half KRSC], cuDNN's
  /// workspace, each region from a 256-byte boundary.
  [[nodiscard]] Result<OpPlan> plan_on_dnn_half(const ConvGeometry& g,
                                                const std::vector<dims_t>& in) const;

 private:
  /// plan_io()'s convs as one GEMM: a 1x1 stride-1 conv, Y[N*H*W, M] =
  /// X[N*H*W, C] · Wᵀ, or a patch conv (window == stride, unpadded: a ViT's or
  /// Swin's patch embedding), its patches first gathered by one strided copy
  /// into the workspace as X[N*OH*OW, KH*KW*C] (each patch row's KW*C run is
  /// contiguous in NHWC; cuDNN's NHWC kernels took ViT-B/16's 3-channel 16x16
  /// conv at batch 32 in 0.38 ms on an H100); then the bias, residual and Relu
  /// in one pass.
  Result<OpPlan> plan_half_gemm(const ConvGeometry& g, const std::vector<dims_t>& in) const;
  /// Reads and writes of a plan_io() plan: the activations (input 0 and the
  /// residual) half, the weights and bias as they are stored (f32).
  void set_half_io(OpPlan& p, size_t inputs) const;
  std::string suffix() const;
  /// The bias (zeros without one) as bf16/f16 on the device, for cuDNN's
  /// fused call under half activations; made on first use, kept for the op.
  Result<std::shared_ptr<const DeviceBuffer>> half_bias(int64_t M) const;
  /// `w` (f32 [M, C, KH, KW]) as bf16/f16 [M, KH, KW, C] (KRSC) on the device,
  /// converted on the host the first time the op is planned and kept for it.
  Result<std::shared_ptr<const DeviceBuffer>> krsc_weights(const Tensor& w, int64_t M, int64_t C,
                                                           int64_t R) const;

  Node node_;
  const Tensor* weights_;
  const Tensor* bias_values_;
  bool has_bias_, has_z_, relu_;
  BuildSettings s_;
  std::string label_;
  mutable std::mutex krsc_mu_;
  mutable std::shared_ptr<const DeviceBuffer> krsc_;       // krsc_weights()
  mutable std::shared_ptr<const DeviceBuffer> half_bias_;  // half_bias()
};

}  // namespace hone::cuda
