#include "backends/blas/kernels/pool.h"

#include <algorithm>
#include <limits>

namespace hone::blas::kernels {
namespace {

/// Calls f(out_offset, y0, y1, x0, x1, padded_count) per output position,
/// with [y0,y1) x [x0,x1) the window's in-bounds input rows and columns
/// (in units of taps: iy = oy*sh + ky*dh - pt for ky in [y0, y1)).
template <class F>
void for_each_window(const Pool2dShape& s, F f) {
  auto taps = [](int64_t o, int64_t st, int64_t d, int64_t p, int64_t in, int64_t k, int64_t pe,
                 int64_t* lo, int64_t* hi, int64_t* padded) {
    *lo = k;
    *hi = 0;
    *padded = 0;
    for (int64_t t = 0; t < k; ++t) {
      const int64_t i = o * st + t * d - p;
      if (i >= -p && i < in + pe) ++*padded;
      if (i >= 0 && i < in) {
        *lo = std::min(*lo, t);
        *hi = std::max(*hi, t + 1);
      }
    }
    if (*hi < *lo) *hi = *lo;
  };
  for (int64_t oy = 0; oy < s.oh; ++oy) {
    int64_t y0, y1, py;
    taps(oy, s.sh, s.dh, s.pt, s.h, s.kh, s.pb, &y0, &y1, &py);
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      int64_t x0, x1, px;
      taps(ox, s.sw, s.dw, s.pl, s.w, s.kw, s.pr, &x0, &x1, &px);
      f(oy * s.ow + ox, oy, ox, y0, y1, x0, x1, py * px);
    }
  }
}

int64_t plane_grain(int64_t work) {
  return std::max<int64_t>(1, 8192 / std::max<int64_t>(work, 1));
}

}  // namespace

void pool2d_max(const Pool2dShape& s, const float* x, float* y, ThreadPool& pool) {
  const int64_t in_plane = s.h * s.w, out_plane = s.oh * s.ow;
  pool.parallel_for(
      s.planes,
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const float* src = x + p * in_plane;
          float* dst = y + p * out_plane;
          for_each_window(s, [&](int64_t o, int64_t oy, int64_t ox, int64_t y0, int64_t y1,
                                 int64_t x0, int64_t x1, int64_t) {
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t ky = y0; ky < y1; ++ky) {
              const float* row = src + (oy * s.sh + ky * s.dh - s.pt) * s.w;
              for (int64_t kx = x0; kx < x1; ++kx) {
                const float v = row[ox * s.sw + kx * s.dw - s.pl];
                m = v > m || v != v ? v : m;  // NaN wins, as in the reference
              }
            }
            dst[o] = m;
          });
        }
      },
      plane_grain(out_plane * s.kh * s.kw));
}

void pool2d_average(const Pool2dShape& s, const float* x, float* y, ThreadPool& pool) {
  const int64_t in_plane = s.h * s.w, out_plane = s.oh * s.ow;
  pool.parallel_for(
      s.planes,
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const float* src = x + p * in_plane;
          float* dst = y + p * out_plane;
          for_each_window(s, [&](int64_t o, int64_t oy, int64_t ox, int64_t y0, int64_t y1,
                                 int64_t x0, int64_t x1, int64_t padded) {
            double sum = 0.0;
            for (int64_t ky = y0; ky < y1; ++ky) {
              const float* row = src + (oy * s.sh + ky * s.dh - s.pt) * s.w;
              for (int64_t kx = x0; kx < x1; ++kx) sum += row[ox * s.sw + kx * s.dw - s.pl];
            }
            const int64_t count = s.count_include_pad ? padded : (y1 - y0) * (x1 - x0);
            dst[o] = count > 0 ? static_cast<float>(sum / static_cast<double>(count)) : 0.0f;
          });
        }
      },
      plane_grain(out_plane * s.kh * s.kw));
}

void global_pool(int64_t planes, int64_t hw, bool max, const float* x, float* y, ThreadPool& pool) {
  pool.parallel_for(
      planes,
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const float* src = x + p * hw;
          if (max) {
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t i = 0; i < hw; ++i) m = src[i] > m || src[i] != src[i] ? src[i] : m;
            y[p] = m;
          } else {
            double sum = 0.0;
            for (int64_t i = 0; i < hw; ++i) sum += src[i];
            y[p] = static_cast<float>(sum / static_cast<double>(hw));
          }
        }
      },
      plane_grain(hw));
}

}  // namespace hone::blas::kernels
