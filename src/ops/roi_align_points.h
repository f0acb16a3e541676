/* ONNX RoiAlign's sampling points, in the common subset of C99 and C++,
 * written once: ops/roi_align.h's roi_align_rois (the reference, onednn's own
 * step) calls it, and the aot backend embeds this file as text into every
 * library with a RoiAlign step (CMakeLists.txt's HONE_AOT_RT_FILES), so
 * compiled code samples exactly as the reference does, in double. The cuda
 * backend compiles it into its NVRTC kernels too (NVRTC has no C headers:
 * the math functions are its built-ins, int64_t is typedef'd here, as
 * ops/grid_sample_taps.h does, a repeat C++ allows), its functions device
 * functions (HONE_ROI_FN).
 *
 *   hone_roi_bins b = hone_roi_bins_of(roi, scale, half_pixel, oh, ow, sampling);
 *   for each bin (ph, pw), point (iy < b.gh, ix < b.gw):
 *     hone_roi_point q = hone_roi_sample(&b, ph, pw, iy, ix, h, w);  (4 weighted corners)
 *     acc = hone_roi_fold(acc, hone_roi_point_value(&q, x00, x01, x10, x11, max), first, max);
 */
#ifndef HONE_OPS_ROI_ALIGN_POINTS_H
#define HONE_OPS_ROI_ALIGN_POINTS_H

#ifdef __CUDACC_RTC__
typedef long long int64_t;
#define HONE_ROI_FN static __device__ __forceinline__
#else
#include <math.h>
#include <stdint.h>
#define HONE_ROI_FN static inline
#endif

/* One sampling point's four corners and weights (all 0 outside the map). */
typedef struct hone_roi_point {
  int64_t y0, y1, x0, x1;
  double w00, w01, w10, w11;
} hone_roi_point;

/* The bilinear corners of point (y, x) of an h x w map: a point over a pixel
 * outside reads nothing, others clamp (ONNX's and ONNX Runtime's rule). */
HONE_ROI_FN hone_roi_point hone_roi_point_at(double y, double x, int64_t h, int64_t w) {
  hone_roi_point b = {0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0};
  double ly, lx;
  if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w) return b;
  y = y > 0.0 ? y : 0.0;
  x = x > 0.0 ? x : 0.0;
  b.y0 = (int64_t)y;
  b.x0 = (int64_t)x;
  if (b.y0 >= h - 1) {
    b.y0 = b.y1 = h - 1;
    y = (double)b.y0;
  } else {
    b.y1 = b.y0 + 1;
  }
  if (b.x0 >= w - 1) {
    b.x0 = b.x1 = w - 1;
    x = (double)b.x0;
  } else {
    b.x1 = b.x0 + 1;
  }
  ly = y - (double)b.y0, lx = x - (double)b.x0;
  b.w00 = (1.0 - ly) * (1.0 - lx);
  b.w01 = (1.0 - ly) * lx;
  b.w10 = ly * (1.0 - lx);
  b.w11 = ly * lx;
  return b;
}

/* One roi's bins: its corner, bin sizes, sampling grid per bin, and the count
 * an average divides by. */
typedef struct hone_roi_bins {
  double x0, y0, bin_h, bin_w, count;
  int64_t gh, gw;
} hone_roi_bins;

/* roi = (x0, y0, x1, y1) in input coordinates, scaled by `scale`; half_pixel
 * shifts by half a pixel (else output_half_pixel: torchvision's aligned=False,
 * sizes at least 1); sampling 0: adaptive, ceil of the bin size. */
HONE_ROI_FN hone_roi_bins hone_roi_bins_of(const double* roi, double scale, int half_pixel,
                                           int64_t oh, int64_t ow, int64_t sampling) {
  hone_roi_bins b;
  const double offset = half_pixel ? 0.5 : 0.0;
  double rw, rh;
  b.x0 = roi[0] * scale - offset;
  b.y0 = roi[1] * scale - offset;
  rw = roi[2] * scale - offset - b.x0;
  rh = roi[3] * scale - offset - b.y0;
  if (!half_pixel) {
    rw = rw > 1.0 ? rw : 1.0;
    rh = rh > 1.0 ? rh : 1.0;
  }
  b.bin_h = rh / (double)oh, b.bin_w = rw / (double)ow;
  b.gh = sampling > 0 ? sampling : (int64_t)ceil(b.bin_h);
  b.gw = sampling > 0 ? sampling : (int64_t)ceil(b.bin_w);
  b.count = (double)(b.gh * b.gw > 1 ? b.gh * b.gw : 1);
  return b;
}

/* Sampling point (iy, ix) of bin (ph, pw) over an h x w map. */
HONE_ROI_FN hone_roi_point hone_roi_sample(const hone_roi_bins* b, int64_t ph, int64_t pw,
                                           int64_t iy, int64_t ix, int64_t h, int64_t w) {
  const double yy = b->y0 + (double)ph * b->bin_h + ((double)iy + 0.5) * b->bin_h / (double)b->gh;
  const double xx = b->x0 + (double)pw * b->bin_w + ((double)ix + 0.5) * b->bin_w / (double)b->gw;
  return hone_roi_point_at(yy, xx, h, w);
}

/* A point's value from its corners' input values: the sum of the weighted
 * corners, or in max mode the first largest of them (ONNX's max mode). */
HONE_ROI_FN double hone_roi_point_value(const hone_roi_point* q, double x00, double x01, double x10,
                                        double x11, int max_mode) {
  const double v00 = q->w00 * x00, v01 = q->w01 * x01, v10 = q->w10 * x10, v11 = q->w11 * x11;
  double m;
  if (!max_mode) return v00 + v01 + v10 + v11;
  m = v00;
  if (m < v01) m = v01;
  if (m < v10) m = v10;
  if (m < v11) m = v11;
  return m;
}

/* A bin's running value after one more point's value v: the sum, or in max
 * mode the largest (v itself for the bin's first point). */
HONE_ROI_FN double hone_roi_fold(double acc, double v, int first, int max_mode) {
  if (!max_mode) return acc + v;
  return first || acc < v ? v : acc;
}

#endif /* HONE_OPS_ROI_ALIGN_POINTS_H */
