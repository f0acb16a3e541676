#include "backends/blas/kernels/conv.h"

#include <algorithm>
#include <cstring>

#include "backends/blas/kernels/gemm.h"

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
/// rows [r0, r1) only.
void im2col_rows(const Conv2dShape& s, const float* img, int64_t c0, float* col, int64_t r0,
                 int64_t r1) {
  const int64_t plane = s.oh * s.ow;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t kx = r % s.kw, ky = (r / s.kw) % s.kh, ch = c0 + r / (s.kw * s.kh);
    const float* src = img + ch * s.h * s.w;
    float* dst = col + r * plane;
    int64_t lo, hi;
    valid_range(kx, s.sw, s.dw, s.pl, s.w, s.ow, &lo, &hi);
    for (int64_t oy = 0; oy < s.oh; ++oy) {
      float* d = dst + oy * s.ow;
      const int64_t iy = oy * s.sh + ky * s.dh - s.pt;
      if (iy < 0 || iy >= s.h) {
        std::fill(d, d + s.ow, 0.0f);
        continue;
      }
      const float* row = src + iy * s.w;
      const int64_t off = kx * s.dw - s.pl;  // input column of output column 0
      std::fill(d, d + lo, 0.0f);
      if (s.sw == 1 && hi > lo)
        std::memcpy(d + lo, row + lo + off, static_cast<size_t>(hi - lo) * sizeof(float));
      else
        for (int64_t ox = lo; ox < hi; ++ox) d[ox] = row[ox * s.sw + off];
      std::fill(d + hi, d + s.ow, 0.0f);
    }
  }
}

}  // namespace

size_t conv2d_im2col_workspace(const Conv2dShape& s, int threads) {
  if (s.pointwise()) return 0;
  const int64_t col = (s.c / s.group) * s.kh * s.kw * s.oh * s.ow;
  const int64_t tasks = s.n * s.group;
  const int64_t slots = std::max<int64_t>(1, std::min<int64_t>(threads, tasks));
  return static_cast<size_t>(col * slots);
}

void conv2d_im2col(const Conv2dShape& s, const float* x, const float* w, float* y, float* workspace,
                   ThreadPool& pool, const OutputDone* done) {
  const int64_t cg = s.c / s.group, mg = s.m / s.group;
  const int64_t kdim = cg * s.kh * s.kw, plane = s.oh * s.ow;
  const int64_t col_size = kdim * plane;
  const int64_t tasks = s.n * s.group;
  const int threads = pool.num_threads();
  auto out_at = [&](int64_t img, int64_t g) { return y + (img * s.m + g * mg) * plane; };
  auto in_at = [&](int64_t img) { return x + img * s.c * s.h * s.w; };
  auto finish = [&](int64_t img, int64_t g, int64_t r0, int64_t r1) {
    if (done == nullptr || !*done) return;
    const int64_t base = (img * s.m + g * mg) * plane;
    (*done)(base + r0 * plane, base + r1 * plane);
  };

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
            im2col_rows(s, in_at(img), g * cg, col, 0, kdim);
            b = col;
          }
          sgemm(false, false, mg, plane, kdim, 1.0f, w + g * mg * kdim, kdim, b, plane, 0.0f,
                out_at(img, g), plane);
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
        im2col_rows(s, in_at(img), g * cg, workspace, r0, r1);
      });
      b = workspace;
    }
    const RowsDone rows_done = [&](int64_t r0, int64_t r1) { finish(img, g, r0, r1); };
    sgemm_rows(pool, false, false, mg, plane, kdim, 1.0f, w + g * mg * kdim, kdim, b, plane,
               out_at(img, g), plane, &rows_done);
  }
}

void conv2d_depthwise(const Conv2dShape& s, const float* x, const float* w, float* y,
                      ThreadPool& pool, const OutputDone* done) {
  const int64_t mult = s.m / s.c;  // output channels per input channel
  const int64_t plane = s.oh * s.ow;
  // Per kernel column: the output columns whose tap is inside the input.
  std::vector<int64_t> lo(static_cast<size_t>(s.kw)), hi(static_cast<size_t>(s.kw));
  for (int64_t kx = 0; kx < s.kw; ++kx)
    valid_range(kx, s.sw, s.dw, s.pl, s.w, s.ow, &lo[static_cast<size_t>(kx)],
                &hi[static_cast<size_t>(kx)]);
  const int64_t planes = s.n * s.m;
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(plane, 1));
  pool.parallel_for(
      planes,
      [&](int64_t pb, int64_t pe) {
        for (int64_t p = pb; p < pe; ++p) {
          const int64_t img = p / s.m, oc = p % s.m, ic = oc / mult;
          const float* src = x + (img * s.c + ic) * s.h * s.w;
          const float* wk = w + oc * s.kh * s.kw;
          float* dst = y + p * plane;
          std::fill(dst, dst + plane, 0.0f);
          for (int64_t oy = 0; oy < s.oh; ++oy) {
            float* d = dst + oy * s.ow;
            for (int64_t ky = 0; ky < s.kh; ++ky) {
              const int64_t iy = oy * s.sh + ky * s.dh - s.pt;
              if (iy < 0 || iy >= s.h) continue;
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                const float wv = wk[ky * s.kw + kx];
                const float* row = src + iy * s.w;
                const int64_t off = kx * s.dw - s.pl;
                const int64_t a = lo[static_cast<size_t>(kx)], b = hi[static_cast<size_t>(kx)];
                if (s.sw == 1)
                  for (int64_t ox = a; ox < b; ++ox) d[ox] += wv * row[ox + off];
                else
                  for (int64_t ox = a; ox < b; ++ox) d[ox] += wv * row[ox * s.sw + off];
              }
            }
          }
        }
        if (done != nullptr && *done) (*done)(pb * plane, pe * plane);
      },
      grain);
}

}  // namespace hone::blas::kernels
