// Convolutions: Conv, ConvTranspose, ConvInteger, QLinearConv (1-D, 2-D, 3-D
// and beyond, groups, dilations, strides, pads, auto_pad).
//
// Both directions run one core over "rows": every spatial dim but the last is
// resolved through a small table of row offsets per kernel position (or -1
// where the row falls in the padding), and the last dim is a contiguous,
// branch-free inner loop over the output (or input) positions that land
// inside the tensor. Float math is done in double, integer math in int64.
#include <algorithm>
#include <cmath>

#include "eval/kernel_util.h"
#include "eval/openblas.h"
#include "eval/ops_nn_internal.h"
#include "ops/attrs.h"

namespace hone::eval::nn {
namespace {

struct ConvShape {
  int64_t n = 0;  // batch
  int64_t c = 0;  // input channels
  int64_t m = 0;  // output channels
  int64_t group = 1;
  Window win;  // in = input spatial dims, out = output spatial dims
};

int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}

/// Row offsets into `dst` for every (outer kernel position, `src` row): the
/// destination coordinate along outer dim d is src*stride + k*dilation - pad.
/// (Conv: src = output, dst = input; ConvTranspose: src = input, dst = output.)
std::vector<int64_t> row_table(const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                               const Window& w) {
  const size_t r = w.rank();
  const size_t outer = r - 1;
  const int64_t src_rows = product(std::vector<int64_t>(src.begin(), src.end() - 1));
  const int64_t k_outer = product(std::vector<int64_t>(w.kernel.begin(), w.kernel.end() - 1));
  std::vector<int64_t> dst_stride(r, 1);
  for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d)
    dst_stride[d] = dst_stride[d + 1] * dst[d + 1];
  std::vector<int64_t> table(static_cast<size_t>(k_outer * src_rows), -1);
  std::vector<int64_t> kidx(outer, 0), sidx(outer, 0);
  for (int64_t ko = 0; ko < k_outer; ++ko) {
    int64_t rem = ko;
    for (int64_t d = static_cast<int64_t>(outer) - 1; d >= 0; --d) {
      kidx[d] = rem % w.kernel[d];
      rem /= w.kernel[d];
    }
    for (int64_t row = 0; row < src_rows; ++row) {
      int64_t rr = row;
      for (int64_t d = static_cast<int64_t>(outer) - 1; d >= 0; --d) {
        sidx[d] = rr % src[d];
        rr /= src[d];
      }
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d < outer && inside; ++d) {
        const int64_t p = sidx[d] * w.strides[d] + kidx[d] * w.dilations[d] - w.pad_begin[d];
        if (p < 0 || p >= dst[d]) inside = false;
        off += p * dst_stride[d];
      }
      if (inside) table[static_cast<size_t>(ko * src_rows + row)] = off;
    }
  }
  return table;
}

/// For each tap k of the last axis (`kl` of them), the positions j in
/// [lo[k], hi[k]) of the strided side (`stepped` long) whose partner
/// j*s + k*dil - pad on the other side (`other` long) is inside it: the
/// output for a conv, the input for its transpose.
inline void tap_ranges(int64_t kl, int64_t dil, int64_t pad, int64_t s, int64_t stepped,
                       int64_t other, std::vector<int64_t>* lo, std::vector<int64_t>* hi) {
  lo->assign(static_cast<size_t>(kl), 0);
  hi->assign(static_cast<size_t>(kl), 0);
  for (size_t k = 0; k < lo->size(); ++k) {
    const int64_t off = static_cast<int64_t>(k) * dil - pad;
    (*lo)[k] = std::max<int64_t>(0, ceil_div(-off, s));
    (*hi)[k] = std::max((*lo)[k], std::min<int64_t>(stepped, floor_div(other - 1 - off, s) + 1));
  }
}

/// Adds one (kernel position, source row) contribution along the last dim:
/// dst[j*s + off] += wv * src[j] (transposed) or dst[j] += wv * src[j*s + off].
template <class A>
inline void axpy_gather(A* dst, const A* src, A wv, int64_t lo, int64_t hi, int64_t s,
                        int64_t off) {
  if (s == 1) {
    const A* sp = src + off;
    for (int64_t j = lo; j < hi; ++j) dst[j] += wv * sp[j];
  } else {
    for (int64_t j = lo; j < hi; ++j) dst[j] += wv * src[j * s + off];
  }
}

template <class A>
inline void axpy_scatter(A* dst, const A* src, A wv, int64_t lo, int64_t hi, int64_t s,
                         int64_t off) {
  for (int64_t j = lo; j < hi; ++j) dst[j * s + off] += wv * src[j];
}

/// y[n, m] = sum over the group's input channels c and kernel positions k of
/// w[m, c, k] * x[n, c, out*stride + k*dilation - pad]. `y` is zeroed.
template <class A>
void conv_forward(const A* x, const A* w, A* y, const ConvShape& p, ThreadPool& pool) {
  const Window& win = p.win;
  const size_t r = win.rank();
  const int64_t in_n = product(win.in), out_n = product(win.out), k_n = product(win.kernel);
  const int64_t ow = win.out[r - 1], iw = win.in[r - 1], kl = win.kernel[r - 1];
  const int64_t s = win.strides[r - 1], dil = win.dilations[r - 1], pb = win.pad_begin[r - 1];
  const int64_t out_rows = out_n / std::max<int64_t>(ow, 1);
  const int64_t k_outer = k_n / kl;
  const std::vector<int64_t> rows = row_table(win.out, win.in, win);
  std::vector<int64_t> lo, hi;
  tap_ranges(kl, dil, pb, s, ow, iw, &lo, &hi);
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  if (out_n == 0) return;
  pool.parallel_for(p.n * p.m, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / p.m, m = task % p.m, g = m / mg;
      A* yp = y + task * out_n;
      for (int64_t c = 0; c < cg; ++c) {
        const A* xc = x + (n * p.c + g * cg + c) * in_n;
        const A* wk = w + (m * cg + c) * k_n;
        for (int64_t ko = 0; ko < k_outer; ++ko) {
          const int64_t* rt = rows.data() + ko * out_rows;
          for (int64_t k = 0; k < kl; ++k) {
            const A wv = wk[ko * kl + k];
            if (lo[k] == hi[k]) continue;
            const int64_t off = k * dil - pb;
            for (int64_t row = 0; row < out_rows; ++row) {
              if (rt[row] < 0) continue;
              axpy_gather(yp + row * ow, xc + rt[row], wv, lo[k], hi[k], s, off);
            }
          }
        }
      }
    }
  });
}

/// For every (output position, kernel position): the input element's flat
/// offset within one channel, or -1 where it falls in the padding.
std::vector<int64_t> tap_table(const Window& win) {
  const size_t r = win.rank();
  const int64_t out_n = product(win.out), k_n = product(win.kernel);
  std::vector<int64_t> table(static_cast<size_t>(out_n * k_n), -1);
  std::vector<int64_t> o(r, 0), k(r, 0), in_stride(r, 1);
  for (size_t d = r - 1; d-- > 0;) in_stride[d] = in_stride[d + 1] * win.in[d + 1];
  for (int64_t oi = 0; oi < out_n; ++oi) {
    int64_t rem = oi;
    for (size_t d = r; d-- > 0;) {
      o[d] = rem % win.out[d];
      rem /= win.out[d];
    }
    for (int64_t ki = 0; ki < k_n; ++ki) {
      int64_t kr = ki, off = 0;
      bool inside = true;
      for (size_t d = r; d-- > 0;) {
        k[d] = kr % win.kernel[d];
        kr /= win.kernel[d];
        const int64_t pos = o[d] * win.strides[d] + k[d] * win.dilations[d] - win.pad_begin[d];
        inside = inside && pos >= 0 && pos < win.in[d];
        off += pos * in_stride[d];
      }
      if (inside) table[static_cast<size_t>(oi * k_n + ki)] = off;
    }
  }
  return table;
}

/// conv_forward as DGEMMs (OpenBLAS, eval/openblas.h): per group, the
/// patches of a chunk of images as rows [images·positions, channels·taps]
/// times the group's weights transposed, [channels·taps, out channels]; the
/// product's rows are scattered back to NCHW. Ten and more times the loops'
/// speed on the convs of a ResNet; chunks keep the patch matrix near 256 MB.
void conv_forward_gemm(const double* x, const double* w, double* y, const ConvShape& p,
                       ThreadPool& pool) {
  const Window& win = p.win;
  const int64_t in_n = product(win.in), out_n = product(win.out), k_n = product(win.kernel);
  const int64_t cg = p.c / p.group, mg = p.m / p.group, K = cg * k_n;
  if (out_n == 0) return;
  const std::vector<int64_t> taps = tap_table(win);
  const int64_t per_image = out_n * K;
  const int64_t chunk =
      std::clamp<int64_t>((int64_t{32} << 20) / std::max<int64_t>(per_image, 1), 1, p.n);
  HostVector<double> wt(static_cast<size_t>(K * mg));
  HostVector<double> col(static_cast<size_t>(chunk * per_image));
  HostVector<double> prod(static_cast<size_t>(chunk * out_n * mg));
  for (int64_t g = 0; g < p.group; ++g) {
    for (int64_t m = 0; m < mg; ++m)  // w[g*mg + m, K] -> wt[K, m]
      for (int64_t kk = 0; kk < K; ++kk)
        wt[static_cast<size_t>(kk * mg + m)] = w[(g * mg + m) * K + kk];
    for (int64_t n0 = 0; n0 < p.n; n0 += chunk) {
      const int64_t nc = std::min(chunk, p.n - n0), rows = nc * out_n;
      pool.parallel_for(
          rows,
          [&](int64_t r0, int64_t r1) {
            for (int64_t row = r0; row < r1; ++row) {
              const int64_t n = n0 + row / out_n, oi = row % out_n;
              const int64_t* t = taps.data() + oi * k_n;
              double* dst = col.data() + row * K;
              for (int64_t c = 0; c < cg; ++c) {
                const double* xc = x + (n * p.c + g * cg + c) * in_n;
                for (int64_t ki = 0; ki < k_n; ++ki)
                  dst[c * k_n + ki] = t[ki] < 0 ? 0.0 : xc[t[ki]];
              }
            }
          },
          std::max<int64_t>(1, 4096 / std::max<int64_t>(K, 1)));
      dgemm_batched(pool, 1, rows, K, mg, {0}, {0}, col.data(), wt.data(), prod.data());
      pool.parallel_for(nc * mg, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t nl = t / mg, m = t % mg;
          double* dst = y + ((n0 + nl) * p.m + g * mg + m) * out_n;
          const double* src = prod.data() + nl * out_n * mg + m;
          for (int64_t oi = 0; oi < out_n; ++oi) dst[oi] = src[oi * mg];
        }
      });
    }
  }
}

/// The adjoint of conv_forward: y[n, m, in*stride + k*dilation - pad] +=
/// x[n, c, in] * w[c, m_in_group, k]. `y` is zeroed.
template <class A>
void conv_transpose(const A* x, const A* w, A* y, const ConvShape& p, ThreadPool& pool) {
  const Window& win = p.win;
  const size_t r = win.rank();
  const int64_t in_n = product(win.in), out_n = product(win.out), k_n = product(win.kernel);
  const int64_t ow = win.out[r - 1], iw = win.in[r - 1], kl = win.kernel[r - 1];
  const int64_t s = win.strides[r - 1], dil = win.dilations[r - 1], pb = win.pad_begin[r - 1];
  const int64_t in_rows = in_n / std::max<int64_t>(iw, 1);
  const int64_t k_outer = k_n / kl;
  const std::vector<int64_t> rows = row_table(win.in, win.out, win);
  std::vector<int64_t> lo, hi;
  tap_ranges(kl, dil, pb, s, iw, ow, &lo, &hi);
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  if (out_n == 0 || in_n == 0) return;
  pool.parallel_for(p.n * p.m, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / p.m, m = task % p.m, g = m / mg, ml = m % mg;
      A* yp = y + task * out_n;
      for (int64_t c = 0; c < cg; ++c) {
        const A* xc = x + (n * p.c + g * cg + c) * in_n;
        const A* wk = w + ((g * cg + c) * mg + ml) * k_n;
        for (int64_t ko = 0; ko < k_outer; ++ko) {
          const int64_t* rt = rows.data() + ko * in_rows;
          for (int64_t k = 0; k < kl; ++k) {
            const A wv = wk[ko * kl + k];
            if (lo[k] == hi[k]) continue;
            const int64_t off = k * dil - pb;
            for (int64_t row = 0; row < in_rows; ++row) {
              if (rt[row] < 0) continue;
              axpy_scatter(yp + rt[row], xc + row * iw, wv, lo[k], hi[k], s, off);
            }
          }
        }
      }
    }
  });
}

/// Validates X and W of a forward convolution and computes its geometry.
Result<ConvShape> conv_shape(const KernelContext& ctx, const Tensor& x, const Tensor& w,
                             const std::string& op) {
  HONE_CHECK_OK(check_nc_input(x, 3, op));
  if (w.rank() != x.rank())
    return fail(ErrorCode::kInvalidArgument,
                op + " weight W " + w.describe() + " must have the rank of X " + x.describe());
  ConvShape p;
  p.n = x.dim(0);
  p.c = x.dim(1);
  p.m = w.dim(0);
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(ctx.node()));
  p.group = ca.group;
  if (p.c % p.group != 0 || p.m % p.group != 0)
    return fail(ErrorCode::kInvalidArgument,
                op + " group " + std::to_string(p.group) + " must divide the input channels (" +
                    std::to_string(p.c) + ") and output channels (" + std::to_string(p.m) + ")");
  if (w.dim(1) * p.group != p.c)
    return fail(ErrorCode::kInvalidArgument,
                op + " weight W " + w.describe() + " has " + std::to_string(w.dim(1)) +
                    " input channels per group, but X " + x.describe() + " with group " +
                    std::to_string(p.group) + " needs " + std::to_string(p.c / p.group));
  std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  const std::vector<int64_t>& ks = ca.kernel_shape;
  if (!ks.empty() && ks != kernel)
    return fail(ErrorCode::kInvalidArgument, op + " kernel_shape " + list_to_string(ks) +
                                                 " does not match weight W " + w.describe());
  HONE_TRY(p.win, make_window(ctx.node(), spatial, kernel, false, op));
  return p;
}

std::vector<int64_t> output_shape(const ConvShape& p) {
  std::vector<int64_t> shape{p.n, p.m};
  shape.insert(shape.end(), p.win.out.begin(), p.win.out.end());
  return shape;
}

Result<HostVector<double>> read_bias(const KernelContext& ctx, size_t index, int64_t m,
                                     const std::string& op) {
  HostVector<double> bias(static_cast<size_t>(m), 0.0);
  if (!ctx.has_input(index)) return bias;
  HONE_TRY(const Tensor* b, ctx.tensor(index));
  if (b->rank() != 1 || b->dim(0) != m)
    return fail(ErrorCode::kInvalidArgument,
                op + " bias B " + b->describe() + " must have shape [" + std::to_string(m) + "]");
  return to_doubles(*b);
}

Result<void> check_float_pair(const Tensor& x, const Tensor& w, const std::string& op) {
  if (!is_floating(x.dtype()))
    return fail(unsupported_dtype(x.dtype(), "a floating-point X").add_context(op));
  if (w.dtype() != x.dtype())
    return fail(ErrorCode::kInvalidArgument,
                op + " weight W " + w.describe() + " must have the dtype of X " + x.describe());
  return {};
}

Result<void> conv(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* w, ctx.tensor(1));
  HONE_CHECK_OK(check_float_pair(*x, *w, "Conv"));
  HONE_TRY(ConvShape p, conv_shape(ctx, *x, *w, "Conv"));
  HONE_TRY(HostVector<double> bias, read_bias(ctx, 2, p.m, "Conv"));
  const HostVector<double> xs = to_doubles(*x), ws = to_doubles(*w);
  const int64_t out_n = product(p.win.out);
  HostVector<double> y(static_cast<size_t>(p.n * p.m * out_n), 0.0);
  // Products as DGEMMs where a group has several output channels and a
  // patch several elements (depthwise convs stay on the loops).
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  if (mg >= 4 && cg * product(p.win.kernel) >= 4)
    conv_forward_gemm(xs.data(), ws.data(), y.data(), p, ctx.pool());
  else
    conv_forward<double>(xs.data(), ws.data(), y.data(), p, ctx.pool());
  ctx.pool().parallel_for(p.n * p.m, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t i = 0; i < out_n; ++i) y[static_cast<size_t>(t * out_n + i)] += bias[t % p.m];
  });
  ctx.set_output(0, from_doubles(x->dtype(), output_shape(p), y));
  return {};
}

Result<void> conv_transpose_kernel(KernelContext& ctx) {
  const std::string op = "ConvTranspose";
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* w, ctx.tensor(1));
  HONE_CHECK_OK(check_float_pair(*x, *w, op));
  HONE_CHECK_OK(check_nc_input(*x, 3, op));
  const Node& node = ctx.node();
  if (w->rank() != x->rank())
    return fail(ErrorCode::kInvalidArgument,
                op + " weight W " + w->describe() + " must have the rank of X " + x->describe());
  ConvShape p;
  p.n = x->dim(0);
  p.c = x->dim(1);
  HONE_TRY(const ops::ConvAttrs ca, ops::conv_attrs(node));
  p.group = ca.group;
  if (p.c % p.group != 0 || w->dim(0) != p.c)
    return fail(ErrorCode::kInvalidArgument,
                op + " weight W " + w->describe() + " must be [C, M/group, k...] with C = " +
                    std::to_string(p.c) + " divisible by group " + std::to_string(p.group));
  p.m = w->dim(1) * p.group;
  std::vector<int64_t> in(x->shape().begin() + 2, x->shape().end());
  std::vector<int64_t> kernel(w->shape().begin() + 2, w->shape().end());
  const std::vector<int64_t>& ks = ca.kernel_shape;
  if (!ks.empty() && ks != kernel)
    return fail(ErrorCode::kInvalidArgument, op + " kernel_shape " + list_to_string(ks) +
                                                 " does not match weight W " + w->describe());
  HONE_TRY(p.win, ops::make_transpose_window(node, in, kernel));
  HONE_TRY(HostVector<double> bias, read_bias(ctx, 2, p.m, op));
  const HostVector<double> xs = to_doubles(*x), ws = to_doubles(*w);
  const int64_t out_n = product(p.win.out);
  HONE_TRY(Tensor out, Tensor::allocate(x->dtype(), output_shape(p)));
  HostVector<double> y(static_cast<size_t>(p.n * p.m * out_n), 0.0);
  conv_transpose<double>(xs.data(), ws.data(), y.data(), p, ctx.pool());
  for (int64_t t = 0; t < p.n * p.m; ++t)
    for (int64_t i = 0; i < out_n; ++i) y[t * out_n + i] += bias[t % p.m];
  HONE_CHECK_OK(dispatch_float(out.dtype(), [&]<class T>() -> Result<void> {
    T* o = out.data<T>();
    for (size_t i = 0; i < y.size(); ++i) o[i] = from_f64<T>(y[i]);
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

bool is_8bit(DType t) {
  return t == DType::kU8 || t == DType::kI8;
}

/// A zero point: absent → 0; a scalar or 1-element tensor → that value for
/// every channel; a [channels] tensor → one per channel.
Result<std::vector<int64_t>> zero_points(const KernelContext& ctx, size_t index, int64_t channels,
                                         bool per_channel_ok, const std::string& what) {
  if (!ctx.has_input(index)) return std::vector<int64_t>(static_cast<size_t>(channels), 0);
  HONE_TRY(const Tensor* z, ctx.tensor(index));
  if (!is_integer(z->dtype()))
    return fail(ErrorCode::kInvalidArgument,
                what + " " + z->describe() + " must be an integer tensor");
  std::vector<int64_t> v = to_int64s(*z);
  if (v.size() == 1) return std::vector<int64_t>(static_cast<size_t>(channels), v[0]);
  if (per_channel_ok && static_cast<int64_t>(v.size()) == channels && z->rank() == 1) return v;
  return fail(ErrorCode::kInvalidArgument,
              what + " " + z->describe() + " must be a scalar" +
                  (per_channel_ok ? " or have " + std::to_string(channels) + " values" : ""));
}

Result<HostVector<double>> scales(const KernelContext& ctx, size_t index, int64_t channels,
                                  bool per_channel_ok, const std::string& what) {
  HONE_TRY(const Tensor* s, ctx.tensor(index));
  if (!is_floating(s->dtype()))
    return fail(ErrorCode::kInvalidArgument,
                what + " " + s->describe() + " must be a float tensor");
  HostVector<double> v = to_doubles(*s);
  if (v.size() == 1) return HostVector<double>(static_cast<size_t>(channels), v[0]);
  if (per_channel_ok && static_cast<int64_t>(v.size()) == channels && s->rank() == 1) return v;
  return fail(ErrorCode::kInvalidArgument,
              what + " " + s->describe() + " must be a scalar" +
                  (per_channel_ok ? " or have " + std::to_string(channels) + " values" : ""));
}

/// The integer part shared by ConvInteger and QLinearConv: sum of
/// (x - x_zero) * (w - w_zero[m]) in int64.
Result<std::vector<int64_t>> integer_conv(KernelContext& ctx, const Tensor& x, const Tensor& w,
                                          const std::vector<int64_t>& xz, size_t wz_index,
                                          const std::string& op, ConvShape* shape) {
  if (!is_8bit(x.dtype()) || !is_8bit(w.dtype()))
    return fail(ErrorCode::kUnsupported,
                op + " needs u8/i8 X and W, got " + x.describe() + " and " + w.describe());
  HONE_TRY(ConvShape p, conv_shape(ctx, x, w, op));
  HONE_TRY(std::vector<int64_t> wz, zero_points(ctx, wz_index, p.m, true, op + " w_zero_point"));
  std::vector<int64_t> xs = to_int64s(x), ws = to_int64s(w);
  for (int64_t& v : xs) v -= xz[0];
  const int64_t k_n = w.numel() / std::max<int64_t>(p.m, 1);
  for (int64_t m = 0; m < p.m; ++m)
    for (int64_t i = 0; i < k_n; ++i) ws[m * k_n + i] -= wz[m];
  // Padding must read as the zero point, i.e. 0 after the shift: the core
  // never reads padded positions, so that holds.
  std::vector<int64_t> y(static_cast<size_t>(p.n * p.m * product(p.win.out)), 0);
  conv_forward<int64_t>(xs.data(), ws.data(), y.data(), p, ctx.pool());
  *shape = p;
  return y;
}

Result<void> conv_integer(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* w, ctx.tensor(1));
  HONE_TRY(std::vector<int64_t> xz, zero_points(ctx, 2, 1, false, "ConvInteger x_zero_point"));
  ConvShape p;
  HONE_TRY(std::vector<int64_t> y, integer_conv(ctx, *x, *w, xz, 3, "ConvInteger", &p));
  Tensor out = Tensor::zeros(DType::kI32, output_shape(p));
  int32_t* o = out.data<int32_t>();
  for (size_t i = 0; i < y.size(); ++i) o[i] = static_cast<int32_t>(y[i]);
  ctx.set_output(0, std::move(out));
  return {};
}

Result<void> qlinear_conv(KernelContext& ctx) {
  const std::string op = "QLinearConv";
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* w, ctx.tensor(3));
  HONE_TRY(HostVector<double> xscale, scales(ctx, 1, 1, false, op + " x_scale"));
  HONE_TRY(std::vector<int64_t> xz, zero_points(ctx, 2, 1, false, op + " x_zero_point"));
  ConvShape p;
  HONE_TRY(std::vector<int64_t> acc, integer_conv(ctx, *x, *w, xz, 5, op, &p));
  HONE_TRY(HostVector<double> wscale, scales(ctx, 4, p.m, true, op + " w_scale"));
  HONE_TRY(HostVector<double> yscale, scales(ctx, 6, 1, false, op + " y_scale"));
  HONE_TRY(std::vector<int64_t> yz, zero_points(ctx, 7, 1, false, op + " y_zero_point"));
  DType out_type = x->dtype();
  if (ctx.has_input(7)) out_type = ctx.input(7).dtype();
  if (!is_8bit(out_type))
    return fail(ErrorCode::kUnsupported, op + " y_zero_point must be u8 or i8");
  std::vector<int64_t> bias(static_cast<size_t>(p.m), 0);
  if (ctx.has_input(8)) {
    HONE_TRY(const Tensor* b, ctx.tensor(8));
    if (b->rank() != 1 || b->dim(0) != p.m || !is_integer(b->dtype()))
      return fail(ErrorCode::kInvalidArgument, op + " bias B " + b->describe() +
                                                   " must be int32 with shape [" +
                                                   std::to_string(p.m) + "]");
    bias = to_int64s(*b);
  }
  const double lo = out_type == DType::kU8 ? 0.0 : -128.0;
  const double hi = out_type == DType::kU8 ? 255.0 : 127.0;
  const int64_t out_n = product(p.win.out);
  Tensor out = Tensor::zeros(out_type, output_shape(p));
  for (int64_t t = 0; t < p.n * p.m; ++t) {
    const int64_t m = t % p.m;
    const double mult = xscale[0] * wscale[m] / yscale[0];
    for (int64_t i = 0; i < out_n; ++i) {
      const size_t idx = static_cast<size_t>(t * out_n + i);
      double q = std::nearbyint(static_cast<double>(acc[idx] + bias[m]) * mult) +
                 static_cast<double>(yz[0]);
      q = std::clamp(q, lo, hi);
      if (out_type == DType::kU8)
        out.data<uint8_t>()[idx] = static_cast<uint8_t>(q);
      else
        out.data<int8_t>()[idx] = static_cast<int8_t>(q);
    }
  }
  ctx.set_output(0, std::move(out));
  return {};
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  r.add("Conv", conv);
  r.add("ConvTranspose", conv_transpose_kernel);
  r.add("ConvInteger", conv_integer);
  r.add("QLinearConv", qlinear_conv);
}

}  // namespace hone::eval::nn
