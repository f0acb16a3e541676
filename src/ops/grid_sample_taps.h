/* ONNX GridSample's taps, in the common subset of C99 and C++, written once:
 * ops/grid_sample.cpp (the reference, onednn's own step) calls it, and the aot
 * backend embeds this file as text into every library with a GridSample step
 * (CMakeLists.txt's HONE_AOT_RT_FILES), so compiled code samples exactly as
 * the reference does, in double. The cuda backend compiles it into its NVRTC
 * kernels too (HONE_CUDA_KERNEL_FILES; NVRTC has no C headers, so it takes
 * the math functions as built-ins and int64_t from here), where every
 * function is a device function (HONE_GRID_FN).
 *
 *   int64_t off[64]; double w[64];   (4^rank: cubic's 4 taps per axis)
 *   int n = hone_grid_taps(g, rank, dims, mode, padding, align_corners, off, w);
 *   for (k = 0; k < n; ++k) if (off[k] >= 0) acc += w[k] * plane[off[k]];
 */
#ifndef HONE_OPS_GRID_SAMPLE_TAPS_H
#define HONE_OPS_GRID_SAMPLE_TAPS_H

#ifdef __CUDACC_RTC__
typedef long long int64_t;
#define HONE_GRID_FN static __device__ __forceinline__
#else
#include <math.h>
#include <stdint.h>
#define HONE_GRID_FN static inline
#endif

/* Modes and paddings, as ops::GridMode and ops::GridPadding number them. */
#define HONE_GRID_NEAREST 0
#define HONE_GRID_LINEAR 1
#define HONE_GRID_CUBIC 2
#define HONE_GRID_ZEROS 0
#define HONE_GRID_BORDER 1
#define HONE_GRID_REFLECTION 2

/* x reflected into [lo, hi] (ONNX's reference: whole ranges folded back). */
HONE_GRID_FN double hone_grid_reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double k = floor(dx / range), rem = dx - k * range;
    return (int64_t)k % 2 == 0 ? lo + rem : hi - rem;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double k = floor(dx / range), rem = dx - k * range;
    return (int64_t)k % 2 == 0 ? hi - rem : lo + rem;
  }
  return x;
}

/* The cubic convolution weight at distance d (a = -0.75, as PyTorch). */
HONE_GRID_FN double hone_grid_cubic_weight(double d) {
  const double a = -0.75;
  d = fabs(d);
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  return 0.0;
}

HONE_GRID_FN int64_t hone_grid_clamp(int64_t i, int64_t lo, int64_t hi) {
  return i < lo ? lo : (i > hi ? hi : i);
}

/* Input index i along an axis of `size` after padding, or -1 for a zero. */
HONE_GRID_FN int64_t hone_grid_index(int64_t i, int64_t size, int padding, int align_corners) {
  if (i >= 0 && i < size) return i;
  if (padding == HONE_GRID_ZEROS) return -1;
  if (padding == HONE_GRID_BORDER) return hone_grid_clamp(i, 0, size - 1);
  {
    const double s = (double)size;
    const double r =
        hone_grid_reflect((double)i, align_corners ? 0.0 : -0.5, align_corners ? s - 1.0 : s - 0.5);
    return hone_grid_clamp((int64_t)llround(r), 0, size - 1);
  }
}

/* The 1, 2 or 4 taps of normalized coordinate g along an axis of `size`:
 * indices (-1: a padding zero) and weights; returns how many. */
HONE_GRID_FN int hone_grid_axis_taps(double g, int64_t size, int mode, int padding,
                                     int align_corners, int64_t* idx, double* w) {
  const double s = (double)size;
  const double lo = align_corners ? 0.0 : -0.5, hi = align_corners ? s - 1.0 : s - 0.5;
  double x = align_corners ? (g + 1.0) / 2.0 * (s - 1.0) : ((g + 1.0) * s - 1.0) / 2.0;
  if (x < lo || x > hi) {
    if (padding == HONE_GRID_BORDER) x = x < 0.0 ? 0.0 : (x > s - 1.0 ? s - 1.0 : x);
    if (padding == HONE_GRID_REFLECTION) x = hone_grid_reflect(x, lo, hi);
  }
  if (mode == HONE_GRID_NEAREST) {
    idx[0] = hone_grid_index((int64_t)nearbyint(x), size, padding, align_corners);
    w[0] = 1.0;
    return 1;
  }
  {
    const double f = floor(x), t = x - f;
    const int64_t i0 = (int64_t)f;
    int j;
    if (mode == HONE_GRID_LINEAR) {
      idx[0] = hone_grid_index(i0, size, padding, align_corners), w[0] = 1.0 - t;
      idx[1] = hone_grid_index(i0 + 1, size, padding, align_corners), w[1] = t;
      return 2;
    }
    for (j = 0; j < 4; ++j) {
      idx[j] = hone_grid_index(i0 + j - 1, size, padding, align_corners);
      w[j] = hone_grid_cubic_weight((double)(j - 1) - t);
    }
    return 4;
  }
}

/* The taps of one output point of a GridSample over `rank` spatial dims
 * `dims` (outermost first; row-major planes) whose grid coordinates are
 * g[0..rank) (innermost first, as ONNX lists them): offsets into one input
 * plane (-1: a padding zero) and weights: the tensor product of the axes'
 * taps, the innermost axis's varying slowest (the order the sums add them
 * in). `off` and `w` hold 4^rank entries; returns how many were written. */
HONE_GRID_FN int hone_grid_taps(const double* g, int rank, const int64_t* dims, int mode,
                                int padding, int align_corners, int64_t* off, double* w) {
  int n = 1, d, a, k;
  int64_t stride = 1;
  off[0] = 0, w[0] = 1.0;
  for (d = rank - 1; d >= 0; --d) stride *= dims[d];
  for (d = 0; d < rank; ++d) {
    int64_t ai[4];
    double aw[4];
    const int na =
        hone_grid_axis_taps(g[rank - 1 - d], dims[d], mode, padding, align_corners, ai, aw);
    stride /= dims[d];
    /* New entry a * n + k: axis tap a (slower) after earlier entry k; filled
     * from the end, so entries not yet read are never overwritten. */
    for (a = na - 1; a >= 0; --a)
      for (k = n - 1; k >= 0; --k) {
        off[a * n + k] = ai[a] < 0 || off[k] < 0 ? -1 : off[k] + ai[a] * stride;
        w[a * n + k] = w[k] * aw[a];
      }
    n *= na;
  }
  return n;
}

#endif /* HONE_OPS_GRID_SAMPLE_TAPS_H */
