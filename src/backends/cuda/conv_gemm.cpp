// The cuda backend's Conv on im2col + cuBLAS, and depthwise convs on hone's
// direct kernel (conv.h): im2col of a chunk of images (skipped for 1x1
// stride-1 unpadded convs), then per group one strided-batched SGEMM over the
// chunk onto the bias broadcast into the output; a fused Add/Relu is one
// extra element-wise pass (hone_conv_epilogue). Also a conv's geometry.
#include <algorithm>
#include <iterator>

#include "backends/cuda/conv.h"
#include "ops/attrs.h"
#include "ops/window.h"

namespace hone::cuda {

Result<ConvGeometry> conv_geometry(const Node& n, bool has_bias, const std::vector<dims_t>& in) {
  const dims_t &x = in[0], &w = in[1];
  if (x.size() != 3 && x.size() != 4 && x.size() != 5)
    return fail(ErrorCode::kUnsupported, "Conv input rank " + std::to_string(x.size()));
  if (w.size() != x.size())
    return fail(ErrorCode::kInvalidArgument,
                "Conv weights " + shape_to_string(w) + " do not match input " + shape_to_string(x));
  const int64_t group = ops::conv_group(n);
  const int64_t N = x[0], C = x[1], M = w[0];
  if (group <= 0 || C % group != 0 || M % group != 0 || w[1] != C / group)
    return fail(ErrorCode::kInvalidArgument, "Conv: input " + shape_to_string(x) + ", weights " +
                                                 shape_to_string(w) + " and group " +
                                                 std::to_string(group) + " disagree");
  const dims_t spatial(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  HONE_TRY(ops::Window win, ops::make_window(n, spatial, kernel, false, "Conv"));
  if (has_bias && numel_of(in[2]) != M)
    return fail(ErrorCode::kInvalidArgument, "Conv bias " + shape_to_string(in[2]) + " for " +
                                                 std::to_string(M) + " output channels");
  // 1-D convs run as 2-D ones of height 1; a 3-D conv's depth is its first
  // spatial dim, set apart below.
  const bool one_d = x.size() == 3;
  const int lead = x.size() == 5 ? 1 : 0;
  auto at = [&](const dims_t& v, int d, int64_t one) {
    return one_d ? (d == 0 ? one : v[0]) : v[static_cast<size_t>(d + lead)];
  };
  ConvGeometry g{N,
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
  if (lead == 1) {
    g.three_d = true;
    g.D = spatial[0];
    g.KD = kernel[0];
    g.SD = win.strides[0];
    g.PD = win.pad_begin[0];
    g.DD = win.dilations[0];
    g.OD = win.out[0];
  }
  if (!fits_int({C * g.KD * g.KH * g.KW * g.OD * g.OH * g.OW, N * M * g.OD * g.OH * g.OW,
                 C * g.D * g.H * g.W}))
    return fail(ErrorCode::kUnsupported, "Conv too large for 32-bit cuBLAS sizes");
  return g;
}

Result<void> conv_epilogue(const ExecCtx& c, CUdeviceptr y, CUdeviceptr bias, CUdeviceptr z,
                           int64_t N, int64_t M, int64_t P, bool relu) {
  HONE_TRY(CUfunction f, c.fixed.function("hone_conv_epilogue"));
  long long n = N * M * P, p = P;
  int m = static_cast<int>(M), r = relu ? 1 : 0;
  return launch_1d(c.d, f, c.stream, n, {&y, &bias, &z, &n, &p, &m, &r});
}

Result<OpPlan> plan_conv_on_blas(const ConvGeometry& g, size_t rank, bool depthwise, bool has_bias,
                                 bool has_z, bool relu, int precision_half,
                                 const std::string& suffix) {
  if (g.three_d) return fail(ErrorCode::kUnsupported, "a 3-D conv runs on cuDNN only");
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
  p.outputs = {conv_out_dims(g, rank)};
  p.workspace_bytes = direct || depthwise ? 0 : static_cast<size_t>(chunk * per_image);
  // bf16/f16: the chunk's columns and (unless converted at build) the
  // weights are converted into the workspace after the f32 columns.
  const int half = depthwise ? 0 : precision_half;
  const size_t half_cols = (p.workspace_bytes + 255) / 256 * 256;
  const size_t half_w = half_cols + half_bytes(chunk * C * KH * KW * P);
  if (half != 0) p.workspace_bytes = half_w + half_bytes(M * Kg);
  p.kernel = (depthwise ? std::string("conv2d.f32.cuda.depthwise")
                        : gemm_kernel("conv2d", direct ? "sgemm" : "im2col+sgemm", half)) +
             suffix;
  const bool bias = has_bias, z = has_z;
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
      if (z) return conv_epilogue(c, y, 0, b.in.back(), N, M, P, relu);
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
    if (z || relu) return conv_epilogue(c, y, 0, z ? b.in.back() : 0, N, M, P, relu);
    return {};
  };
  return p;
}

}  // namespace hone::cuda
