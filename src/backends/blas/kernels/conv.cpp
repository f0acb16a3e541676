#include "backends/blas/kernels/conv.h"

#include <algorithm>

#include "backends/blas/kernels/gemm.h"
#include "backends/blas/kernels/vector_clones.h"

namespace hone::blas::kernels {
namespace {

/// The output columns [lo, hi) whose tap at kernel column `k` lands inside
/// the input row: 0 <= o*s + k*d - p < w.
void valid_range(int64_t k, int64_t s, int64_t d, int64_t p, int64_t w, int64_t out, int64_t* lo,
                 int64_t* hi) {
  const int64_t off = k * d - p;  // input column of output 0
  // smallest o with o*s + off >= 0
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  // smallest o with o*s + off >= w
  *hi = w - off <= 0 ? 0 : (w - off + s - 1) / s;
  *lo = std::min(*lo, out);
  *hi = std::clamp(*hi, *lo, out);
}

/// im2col of channels [c0, c0 + cg) of one image into col[cg*kh*kw, oh*ow],
/// rows [r0, r1) only, each row `ld` floats after the previous one.
HONE_VECTOR_CLONES void im2col_rows(const Conv2dShape& s, const float* img, int64_t c0, float* col,
                                    int64_t ld, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t kx = r % s.kw, ky = (r / s.kw) % s.kh, ch = c0 + r / (s.kw * s.kh);
    const float* src = img + ch * s.h * s.w;
    float* dst = col + r * ld;
    int64_t lo, hi;
    valid_range(kx, s.sw, s.dw, s.pl, s.w, s.ow, &lo, &hi);
    const int64_t off = kx * s.dw - s.pl;  // input column of output column 0
    for (int64_t oy = 0; oy < s.oh; ++oy) {
      float* d = dst + oy * s.ow;
      const int64_t iy = oy * s.sh + ky * s.dh - s.pt;
      if (iy < 0 || iy >= s.h) {
        std::fill(d, d + s.ow, 0.0f);
        continue;
      }
      const float* row = src + iy * s.w;
      std::fill(d, d + lo, 0.0f);
      // Rows are short (tens of floats): a plain loop the compiler
      // vectorizes beats a memcpy call per row.
      if (s.sw == 1)
        for (int64_t ox = lo; ox < hi; ++ox) d[ox] = row[ox + off];
      else
        for (int64_t ox = lo; ox < hi; ++ox) d[ox] = row[ox * s.sw + off];
      std::fill(d + hi, d + s.ow, 0.0f);
    }
  }
}

/// C[rows, cols] = bias (per row; zero when null), each row `ldc` apart.
void fill_bias(float* c, int64_t rows, int64_t cols, int64_t ldc, const float* bias) {
  for (int64_t r = 0; r < rows; ++r)
    std::fill(c + r * ldc, c + r * ldc + cols, bias != nullptr ? bias[r] : 0.0f);
}

/// C = bias + W[mg, kdim] x B[kdim, cols] on the calling thread.
void gemm_bias(int64_t mg, int64_t cols, int64_t kdim, const float* w, const float* b, int64_t ldb,
               const float* bias, float* c, int64_t ldc) {
  fill_bias(c, mg, cols, ldc, bias);
  sgemm(false, false, mg, cols, kdim, 1.0f, w, kdim, b, ldb, 1.0f, c, ldc);
}

int64_t batch_chunks(const Conv2dShape& s, int threads) {
  return std::max<int64_t>(1, std::min<int64_t>(threads, s.n));
}

/// Padded input plane geometry for the depthwise kernel: rows, columns, and
/// columns per stride phase (the plane is stored as `sw` phases of every
/// row, so each kernel tap reads a contiguous run for any stride).
struct PaddedPlane {
  int64_t rows, cols, phase_cols;
  explicit PaddedPlane(const Conv2dShape& s)
      : rows((s.oh - 1) * s.sh + (s.kh - 1) * s.dh + 1),
        cols((s.ow - 1) * s.sw + (s.kw - 1) * s.dw + 1),
        phase_cols((cols + s.sw - 1) / s.sw) {}
  size_t floats(const Conv2dShape& s) const {
    return static_cast<size_t>(rows * s.sw * phase_cols);
  }
};

/// The zero-padded copy of input plane `src` in `buf`, stride phase `ph` of
/// padded row r at buf[(r * sw + ph) * phase_cols]: padded column c is phase
/// c % sw, position c / sw.
HONE_VECTOR_CLONES void pad_plane(const Conv2dShape& s, const PaddedPlane& pp, const float* src,
                                  float* buf) {
  std::fill(buf, buf + pp.floats(s), 0.0f);
  const int64_t c0 = s.pl, c1 = std::min(pp.cols, s.w + s.pl);  // columns inside the input
  for (int64_t r = 0; r < pp.rows; ++r) {
    const int64_t iy = r - s.pt;
    if (iy < 0 || iy >= s.h) continue;
    const float* row = src + iy * s.w;  // padded column c is row[c - pl]
    for (int64_t ph = 0; ph < s.sw; ++ph) {
      float* dst = buf + (r * s.sw + ph) * pp.phase_cols;
      // positions j with c0 <= j * sw + ph < c1
      const int64_t j0 = c0 > ph ? (c0 - ph + s.sw - 1) / s.sw : 0;
      const int64_t j1 = c1 > ph ? (c1 - ph + s.sw - 1) / s.sw : 0;
      for (int64_t j = j0; j < j1; ++j) dst[j] = row[j * s.sw + ph - s.pl];
    }
  }
}

/// One output plane of a depthwise conv from its padded input plane: every
/// tap reads a contiguous run of `ow` floats. `kOw` > 0 fixes the row width
/// at compile time: rows of mobile nets are 4 to 32 wide, and a loop of
/// unknown length that short is all prologue and epilogue.
template <int64_t kOw>
HONE_VECTOR_CLONES void depthwise_plane(const Conv2dShape& s, const PaddedPlane& pp,
                                        const float* buf, const float* wk, float bias, float* dst) {
  const int64_t ow = kOw > 0 ? kOw : s.ow, taps = s.kh * s.kw;
  // Where each tap starts in the padded plane, relative to the output row's first padded row.
  int64_t off[64];
  const bool small = taps <= 64;
  if (small)
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t ky = t / s.kw, c = (t % s.kw) * s.dw;
      off[t] = ky * s.dh * s.sw * pp.phase_cols + (c % s.sw) * pp.phase_cols + c / s.sw;
    }
  // A fixed-width row accumulates in registers; a variable one in place.
  float acc_fixed[kOw > 0 ? kOw : 1];
  for (int64_t oy = 0; oy < s.oh; ++oy) {
    float* __restrict d = kOw > 0 ? acc_fixed : dst + oy * ow;
    const float* row0 = buf + oy * s.sh * s.sw * pp.phase_cols;
    for (int64_t ox = 0; ox < ow; ++ox) d[ox] = bias;
    for (int64_t t = 0; t < taps; ++t) {
      int64_t o;
      if (small) {
        o = off[t];
      } else {
        const int64_t ky = t / s.kw, c = (t % s.kw) * s.dw;
        o = ky * s.dh * s.sw * pp.phase_cols + (c % s.sw) * pp.phase_cols + c / s.sw;
      }
      const float* __restrict src = row0 + o;
      const float wv = wk[t];
      for (int64_t ox = 0; ox < ow; ++ox) d[ox] += wv * src[ox];
    }
    if constexpr (kOw > 0) std::copy(acc_fixed, acc_fixed + kOw, dst + oy * kOw);
  }
}

void depthwise_plane_any(const Conv2dShape& s, const PaddedPlane& pp, const float* buf,
                         const float* wk, float bias, float* dst) {
  switch (s.ow) {
    case 4:
      return depthwise_plane<4>(s, pp, buf, wk, bias, dst);
    case 8:
      return depthwise_plane<8>(s, pp, buf, wk, bias, dst);
    case 16:
      return depthwise_plane<16>(s, pp, buf, wk, bias, dst);
    case 32:
      return depthwise_plane<32>(s, pp, buf, wk, bias, dst);
    default:
      return depthwise_plane<0>(s, pp, buf, wk, bias, dst);
  }
}

}  // namespace

bool conv2d_batched(const Conv2dShape& s, int threads) {
  // Below this many output pixels a per-image SGEMM is too narrow for
  // OpenBLAS; batching only pays when each thread gets several images.
  constexpr int64_t kNarrowPlane = 512;
  return !s.depthwise() && s.oh * s.ow < kNarrowPlane && s.n >= 2 * batch_chunks(s, threads);
}

size_t conv2d_im2col_workspace(const Conv2dShape& s, int threads) {
  const int64_t kdim = (s.c / s.group) * s.kh * s.kw, plane = s.oh * s.ow;
  if (conv2d_batched(s, threads)) {
    const int64_t chunks = batch_chunks(s, threads), per = (s.n + chunks - 1) / chunks;
    return static_cast<size_t>(chunks * (kdim + s.m / s.group) * per * plane);
  }
  if (s.pointwise()) return 0;
  const int64_t tasks = s.n * s.group;
  const int64_t slots = std::max<int64_t>(1, std::min<int64_t>(threads, tasks));
  return static_cast<size_t>(kdim * plane * slots);
}

void conv2d_im2col(const Conv2dShape& s, const float* x, const float* w, const float* bias,
                   float* y, float* workspace, ThreadPool& pool, const OutputDone* done) {
  const int64_t cg = s.c / s.group, mg = s.m / s.group;
  const int64_t kdim = cg * s.kh * s.kw, plane = s.oh * s.ow;
  const int64_t col_size = kdim * plane;
  const int64_t tasks = s.n * s.group;
  const int threads = pool.num_threads();
  auto out_at = [&](int64_t img, int64_t g) { return y + (img * s.m + g * mg) * plane; };
  auto in_at = [&](int64_t img) { return x + img * s.c * s.h * s.w; };
  auto bias_at = [&](int64_t g) { return bias != nullptr ? bias + g * mg : nullptr; };
  auto finish = [&](int64_t img, int64_t g, int64_t r0, int64_t r1) {
    if (done == nullptr || !*done) return;
    const int64_t base = (img * s.m + g * mg) * plane;
    (*done)(base + r0 * plane, base + r1 * plane);
  };

  if (conv2d_batched(s, threads)) {
    // Each chunk of images: im2col side by side, one SGEMM of
    // mg x (images * plane), then the result copied out in NCHW order.
    const int64_t chunks = batch_chunks(s, threads), per = (s.n + chunks - 1) / chunks;
    const int64_t chunk_floats = (kdim + mg) * per * plane;
    pool.parallel_for(chunks, [&](int64_t cb, int64_t ce) {
      for (int64_t chunk = cb; chunk < ce; ++chunk) {
        const int64_t i0 = chunk * per, i1 = std::min(s.n, i0 + per);
        if (i0 >= i1) continue;
        const int64_t cols = (i1 - i0) * plane;
        float* col = workspace + chunk * chunk_floats;
        float* c = col + kdim * cols;
        for (int64_t g = 0; g < s.group; ++g) {
          for (int64_t img = i0; img < i1; ++img)
            im2col_rows(s, in_at(img), g * cg, col + (img - i0) * plane, cols, 0, kdim);
          gemm_bias(mg, cols, kdim, w + g * mg * kdim, col, cols, bias_at(g), c, cols);
          for (int64_t img = i0; img < i1; ++img) {
            float* o = out_at(img, g);
            for (int64_t m = 0; m < mg; ++m)
              std::copy(c + m * cols + (img - i0) * plane, c + m * cols + (img - i0 + 1) * plane,
                        o + m * plane);
            finish(img, g, 0, mg);
          }
        }
      }
    });
    return;
  }
  if (tasks >= threads || threads == 1) {
    // Enough images x groups to keep every thread busy: each task is one
    // single-threaded im2col + SGEMM in its own workspace slot.
    const int64_t slots = std::max<int64_t>(1, std::min<int64_t>(threads, tasks));
    pool.parallel_for(slots, [&](int64_t sb, int64_t se) {
      for (int64_t slot = sb; slot < se; ++slot)
        for (int64_t t = slot; t < tasks; t += slots) {
          const int64_t img = t / s.group, g = t % s.group;
          const float* b = in_at(img) + g * cg * s.h * s.w;
          if (!s.pointwise()) {
            float* col = workspace + slot * col_size;
            im2col_rows(s, in_at(img), g * cg, col, plane, 0, kdim);
            b = col;
          }
          gemm_bias(mg, plane, kdim, w + g * mg * kdim, b, plane, bias_at(g), out_at(img, g),
                    plane);
          finish(img, g, 0, mg);
        }
    });
    return;
  }
  // Few tasks (a single image): parallelize inside each one instead.
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t img = t / s.group, g = t % s.group;
    const float* b = in_at(img) + g * cg * s.h * s.w;
    if (!s.pointwise()) {
      pool.parallel_for(kdim, [&](int64_t r0, int64_t r1) {
        im2col_rows(s, in_at(img), g * cg, workspace, plane, r0, r1);
      });
      b = workspace;
    }
    fill_bias(out_at(img, g), mg, plane, plane, bias_at(g));
    const RowsDone rows_done = [&](int64_t r0, int64_t r1) { finish(img, g, r0, r1); };
    sgemm_rows(pool, false, false, mg, plane, kdim, 1.0f, w + g * mg * kdim, kdim, b, plane, 1.0f,
               out_at(img, g), plane, &rows_done);
  }
}

size_t conv2d_depthwise_workspace(const Conv2dShape& s, int threads) {
  const int64_t slots = std::max<int64_t>(1, std::min<int64_t>(threads, s.n * s.m));
  return PaddedPlane(s).floats(s) * static_cast<size_t>(slots);
}

void conv2d_depthwise(const Conv2dShape& s, const float* x, const float* w, const float* bias,
                      float* y, float* workspace, ThreadPool& pool, const OutputDone* done) {
  const int64_t mult = s.m / s.c;  // output channels per input channel
  const int64_t plane = s.oh * s.ow;
  const PaddedPlane pp(s);
  const int64_t planes = s.n * s.m;
  const int64_t slots = std::max<int64_t>(1, std::min<int64_t>(pool.num_threads(), planes));
  const int64_t per = (planes + slots - 1) / slots;
  // Epilogues run on runs of about this many outputs, still in cache.
  const int64_t done_every = std::max<int64_t>(1, 4096 / std::max<int64_t>(plane, 1));
  pool.parallel_for(slots, [&](int64_t sb, int64_t se) {
    for (int64_t slot = sb; slot < se; ++slot) {
      float* buf = workspace + static_cast<size_t>(slot) * pp.floats(s);
      const int64_t p0 = slot * per, p1 = std::min(planes, p0 + per);
      int64_t built = -1;  // the input plane (img * c + ic) now in `buf`
      int64_t pending = p0;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t img = p / s.m, oc = p % s.m, ic = oc / mult;
        if (img * s.c + ic != built) {
          built = img * s.c + ic;
          pad_plane(s, pp, x + built * s.h * s.w, buf);
        }
        depthwise_plane_any(s, pp, buf, w + oc * s.kh * s.kw, bias != nullptr ? bias[oc] : 0.0f,
                            y + p * plane);
        if (done != nullptr && *done && (p + 1 - pending >= done_every || p + 1 == p1)) {
          (*done)(pending * plane, (p + 1) * plane);
          pending = p + 1;
        }
      }
    }
  });
}

}  // namespace hone::blas::kernels
