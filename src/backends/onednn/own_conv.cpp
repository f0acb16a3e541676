// A depthwise Conv over three spatial dims as hone's own step (own_conv.h):
// per output position, the taps inside the input summed over 16 channels at
// a time, channels-last, in f32 as oneDNN's convs compute.
#include "backends/onednn/own_conv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "ops/attrs.h"

namespace hone::onednn {
namespace {

using dnnl::memory;

/// One depthwise 3-D conv: batch, channels, and per spatial dim (D, H, W)
/// the input and output sizes, kernel, stride, dilation and leading pad.
struct Dw3d {
  int64_t n = 0, c = 0;
  std::array<int64_t, 3> in{}, out{}, k{}, s{}, d{}, pad{};
};

// 16 lanes: one AVX-512 register, two AVX2 ones, four SSE ones (loaded and
// stored by memcpy, unaligned; no function takes or returns one, whose ABI
// would differ between the clones).
using V16 = float __attribute__((vector_size(64)));

/// [lo, hi) of kernel taps along a dim for output position o: those whose
/// input position o*s + t*d - pad lies in [0, in).
inline void tap_range(int64_t o, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad,
                      int64_t* lo, int64_t* hi) {
  const int64_t first = o * s - pad;  // input position of tap 0
  *lo = first >= 0 ? 0 : (-first + d - 1) / d;
  *hi = first > in - 1 ? 0 : std::min(k, (in - 1 - first) / d + 1);
  *hi = std::max(*hi, *lo);
}

/// y[n, od, oh, ow, c] = bias[c] + sum over the taps inside the input of
/// w[kd, kh, kw, c] * x[n, id, ih, iw, c] (channels-last; `bias` may be null).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void depthwise_3d(
    const Dw3d& p, const float* __restrict x, const float* __restrict w,
    const float* __restrict bias, float* __restrict y) {
  const int64_t c = p.c, vec_end = c / 16 * 16;
  std::vector<int64_t> xo, wo;  // per tap inside the input: its offsets into x and w
  xo.reserve(static_cast<size_t>(p.k[0] * p.k[1] * p.k[2]));
  wo.reserve(xo.capacity());
  std::array<int64_t, 3> lo{}, hi{};
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t od = 0; od < p.out[0]; ++od)
      for (int64_t oh = 0; oh < p.out[1]; ++oh)
        for (int64_t ow = 0; ow < p.out[2]; ++ow) {
          const std::array<int64_t, 3> o{od, oh, ow};
          for (size_t a = 0; a < 3; ++a)
            tap_range(o[a], p.in[a], p.k[a], p.s[a], p.d[a], p.pad[a], &lo[a], &hi[a]);
          xo.clear();
          wo.clear();
          for (int64_t kd = lo[0]; kd < hi[0]; ++kd)
            for (int64_t kh = lo[1]; kh < hi[1]; ++kh)
              for (int64_t kw = lo[2]; kw < hi[2]; ++kw) {
                const int64_t id = od * p.s[0] - p.pad[0] + kd * p.d[0];
                const int64_t ih = oh * p.s[1] - p.pad[1] + kh * p.d[1];
                const int64_t iw = ow * p.s[2] - p.pad[2] + kw * p.d[2];
                xo.push_back((((n * p.in[0] + id) * p.in[1] + ih) * p.in[2] + iw) * c);
                wo.push_back(((kd * p.k[1] + kh) * p.k[2] + kw) * c);
              }
          float* yp = y + (((n * p.out[0] + od) * p.out[1] + oh) * p.out[2] + ow) * c;
          const size_t taps = xo.size();
          for (int64_t ch = 0; ch < vec_end; ch += 16) {
            V16 acc{}, wv, xv;
            if (bias != nullptr) std::memcpy(&acc, bias + ch, sizeof acc);
            for (size_t t = 0; t < taps; ++t) {
              std::memcpy(&wv, w + wo[t] + ch, sizeof wv);
              std::memcpy(&xv, x + xo[t] + ch, sizeof xv);
              acc += wv * xv;
            }
            std::memcpy(yp + ch, &acc, sizeof acc);
          }
          for (int64_t ch = vec_end; ch < c; ++ch) {
            float acc = bias != nullptr ? bias[ch] : 0.0f;
            for (size_t t = 0; t < taps; ++t) acc += w[wo[t] + ch] * x[xo[t] + ch];
            yp[ch] = acc;
          }
        }
}

}  // namespace

bool lowers_depthwise_3d(const PlanBuilder& b, const Node& n) {
  if (n.op_type != "Conv" || n.inputs.size() < 2 || b.dtype(n.inputs[0]) != DType::kF32)
    return false;
  const dims_t& x = b.value(n.inputs[0]).dims;
  const Tensor* w = b.constant(n.inputs[1]);
  const auto ca = ops::conv_attrs(n);
  if (x.size() != 5 || w == nullptr || w->dtype() != DType::kF32 || !ca || ca->group != x[1] ||
      w->shape().size() != 5 || w->shape()[0] != x[1] || w->shape()[1] != 1)
    return false;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
    const Tensor* bias = b.constant(n.inputs[2]);
    if (bias == nullptr || bias->dtype() != DType::kF32 || bias->shape() != dims_t{x[1]})
      return false;
  }
  return true;
}

Result<void> lower_depthwise_3d(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  const Tensor& w = *b.constant(n.inputs[1]);
  const Tensor* bias = n.inputs.size() > 2 && n.inputs[2] >= 0 ? b.constant(n.inputs[2]) : nullptr;
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(n));
  const dims_t kernel(w.shape().begin() + 2, w.shape().end());
  HONE_TRY(const Window win,
           sliding_window(n, dims_t(x.dims.begin() + 2, x.dims.end()), kernel, false));
  Dw3d p;
  p.n = x.dims[0];
  p.c = x.dims[1];
  for (size_t a = 0; a < 3; ++a) {
    p.in[a] = x.dims[a + 2];
    p.out[a] = win.out[a];
    p.k[a] = kernel[a];
    p.s[a] = ca.strides.empty() ? 1 : ca.strides[a];
    p.d[a] = ca.dilations.empty() ? 1 : ca.dilations[a];
    p.pad[a] = win.pad_l[a];
  }
  dims_t dst{p.n, p.c, p.out[0], p.out[1], p.out[2]};
  if (shape_numel(dst) == 0)
    return fail(ErrorCode::kUnsupported, "depthwise Conv3d with an empty result");
  // Weights [C, 1, kd, kh, kw] as [kd, kh, kw, C]: each tap's channels in a row.
  const int64_t taps = shape_numel(kernel);
  Tensor packed = Tensor::zeros(DType::kF32, {taps, p.c});
  for (int64_t ch = 0; ch < p.c; ++ch)
    for (int64_t t = 0; t < taps; ++t)
      packed.data<float>()[t * p.c + ch] = w.data<float>()[ch * taps + t];
  const BufferRef wref{b.new_constant(std::move(packed)), plain_md({taps, p.c})};
  const md_t cl_in(x.dims, memory::data_type::f32, memory::format_tag::acdeb);
  const md_t cl_out(dst, memory::data_type::f32, memory::format_tag::acdeb);
  const BufferRef src = b.ensure(n.inputs[0], cl_in);
  const BufferRef out{b.new_temp(cl_out), cl_out};
  std::vector<std::pair<int, BufferRef>> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wref}};
  if (bias != nullptr)
    args.push_back({DNNL_ARG_BIAS, BufferRef{b.new_constant(bias->clone()), plain_md({p.c})}});
  args.push_back({DNNL_ARG_DST, out});
  const bool has_bias = bias != nullptr;
  b.add_own_step(
      "depthwise_conv3d",
      [p, has_bias](void* const* ptrs) -> Result<void> {
        depthwise_3d(p, static_cast<const float*>(ptrs[0]), static_cast<const float*>(ptrs[1]),
                     has_bias ? static_cast<const float*>(ptrs[2]) : nullptr,
                     static_cast<float*>(ptrs[has_bias ? 3 : 2]));
        return {};
      },
      std::move(args));
  b.set(n.outputs[0], PValue{dst, out});
  return {};
}

}  // namespace hone::onednn
