// A conv's bf16/f16 NHWC plans (conv_half.h): under activations=half the
// conv reads and writes half NHWC itself; under f32 activations, the NHWC
// candidate that converts around cuDNN's half kernels (ops_conv.cpp's module
// comment says when each is chosen).
#include <algorithm>
#include <atomic>

#include "backends/cuda/conv_half.h"
#include "backends/cuda/storage.h"
#include "core/log.h"

namespace hone::cuda {

HalfConv::HalfConv(Node n, bool has_bias, bool has_z, bool relu, BuildSettings s, std::string label,
                   const Tensor* weights, const Tensor* bias_values)
    : node_(std::move(n)),
      weights_(weights),
      bias_values_(bias_values),
      has_bias_(has_bias),
      has_z_(has_z),
      relu_(relu),
      s_(std::move(s)),
      label_(std::move(label)) {}

std::string HalfConv::suffix() const {
  return std::string(has_z_ ? "+add" : "") + (relu_ ? "+relu" : "");
}

Result<OpPlan> HalfConv::plan_io(const std::vector<dims_t>& in) const {
  if (in[0].size() != 4)
    return fail(ErrorCode::kUnsupported, in[0].size() == 3 ? "a 1-D conv" : "a 3-D conv");
  HONE_TRY(ConvGeometry g, conv_geometry(node_, has_bias_, in));
  // A conv of constant weights whose window equals its stride, unpadded at
  // both ends (a 1x1 stride-1 conv, a patch embedding), is one GEMM over the
  // channels-last input (cuBLAS, bf16/f16 out), then the epilogue pass.
  const bool undilated = (g.KH == 1 || g.DH == 1) && (g.KW == 1 || g.DW == 1);
  if (g.KH == g.SH && g.KW == g.SW && g.PH == 0 && g.PW == 0 && g.symmetric && undilated &&
      g.group == 1 && weights_ != nullptr &&
      fits_int({g.N * g.OH * g.OW, g.M, g.KH * g.KW * g.C}) &&
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
             ".cuda.cudnn_nhwc_io[algo " + std::to_string(dc->algo.algo) + (fuse ? ", fused" : "") +
             "]" + suffix();
  set_half_io(p, in.size());
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

void HalfConv::set_half_io(OpPlan& p, size_t inputs) const {
  p.reads.assign(inputs, Storage::kF32);
  p.reads[0] = Storage::kHalf;
  if (has_z_) p.reads.back() = Storage::kHalf;
  p.writes = {Storage::kHalf};
}

Result<OpPlan> HalfConv::plan_half_gemm(const ConvGeometry& g,
                                        const std::vector<dims_t>& in) const {
  const int half = s_.math.half;
  // A patch conv's X is gathered into the workspace; a 1x1 conv's is its input.
  const bool patches = g.KH * g.KW > 1;
  const int64_t R = g.KH * g.KW, K = R * g.C;
  HONE_TRY(std::shared_ptr<const DeviceBuffer> w, krsc_weights(*weights_, g.M, g.C, R));
  const int64_t rows = g.N * g.OH * g.OW, M = g.M, count = rows * g.M;
  // X[n, oh, ow, i, (j, c)] = x[n, oh*KH + i, ow*KW + j, c] over NHWC x.
  const dims_t dims = {g.N, g.OH, g.OW, g.KH, g.KW * g.C};
  const dims_t src = {g.H * g.W * g.C, g.KH * g.W * g.C, g.KW * g.C, g.W * g.C, 1};
  const dims_t dst = strides_of(dims);
  OpPlan p;
  p.outputs = {conv_out_dims(g, 4)};
  p.workspace_bytes = patches ? half_bytes(rows * K) : 0;
  p.kernel = std::string("conv2d.") + (half == kCudaR16BF ? "bf16" : "f16") + ".cuda." +
             (patches ? "patches+" : "") + "gemm_ex_nhwc" + suffix();
  set_half_io(p, in.size());
  const bool bias = has_bias_, z = has_z_, relu = relu_;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    CUdeviceptr x = b.in[0];
    if (patches) {
      HONE_CHECK_OK(strided_copy_half(c, b.in[0], b.workspace, dims, src, dst));
      x = b.workspace;
    }
    HONE_CHECK_OK(gemm_half_out(c, rows, M, K, x, w->ptr(), b.out[0], half));
    if (!bias && !z && !relu) return {};
    return half_bias_act(c, b.out[0], bias ? b.in[2] : 0, z ? b.in.back() : 0, count, M, relu,
                         half);
  };
  return p;
}

Result<std::shared_ptr<const DeviceBuffer>> HalfConv::half_bias(int64_t M) const {
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

Result<std::shared_ptr<const DeviceBuffer>> HalfConv::krsc_weights(const Tensor& w, int64_t M,
                                                                   int64_t C, int64_t R) const {
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

Result<OpPlan> HalfConv::plan_on_dnn_half(const ConvGeometry& g,
                                          const std::vector<dims_t>& in) const {
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

}  // namespace hone::cuda
