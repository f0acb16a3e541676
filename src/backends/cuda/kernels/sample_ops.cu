// Kernels that read windows of an input by computed coordinates: GridSample
// and RoiAlign (ops_sample.cpp), 3-D pools (ops_misc.cpp). The first two's taps and
// sampling points come from the C the reference and aot sample with
// (src/ops/grid_sample_taps.h, src/ops/roi_align_points.h, compiled into this
// module ahead of this file), so every backend reads the same input points
// with the same weights, summed in double in the same order.

// One thread an output point p = batch * out_plane + o of x [n, c, plane] by
// grid [n, out_plane, rank] into y [n, c, out_plane]: the point's taps once,
// then every channel from them. TAPS holds 4^rank (cubic's 4 taps an axis).
template <int TAPS>
__device__ __forceinline__ void hone_grid_point(const float* x, const float* grid, float* y,
                                                long long p, long long c, long long in_plane,
                                                long long out_plane, int rank,
                                                const long long* dims, int mode, int padding,
                                                int align) {
  double g[3];
  for (int d = 0; d < rank; ++d) g[d] = (double)grid[p * rank + d];
  long long off[TAPS];
  double w[TAPS];
  const int n = hone_grid_taps(g, rank, dims, mode, padding, align, off, w);
  const long long b = p / out_plane, o = p % out_plane;
  for (long long ch = 0; ch < c; ++ch) {
    const float* plane = x + (b * c + ch) * in_plane;
    double acc = 0.0;
    for (int k = 0; k < n; ++k)
      if (off[k] >= 0) acc += w[k] * (double)plane[off[k]];
    y[(b * c + ch) * out_plane + o] = (float)acc;
  }
}

// GridSample over 1 to 3 spatial dims d0..d2 (outermost first; in_plane their
// product); points = n * out_plane.
extern "C" __global__ void hone_grid_sample(const float* x, const float* grid, float* y,
                                            long long points, long long c, long long in_plane,
                                            long long out_plane, int rank, long long d0,
                                            long long d1, long long d2, int mode, int padding,
                                            int align) {
  const long long dims[3] = {d0, d1, d2};
  HONE_FOR(p, points) {
    if (rank == 3 && mode == HONE_GRID_CUBIC)
      hone_grid_point<64>(x, grid, y, p, c, in_plane, out_plane, rank, dims, mode, padding, align);
    else
      hone_grid_point<16>(x, grid, y, p, c, in_plane, out_plane, rank, dims, mode, padding, align);
  }
}

// RoiAlign of x [n, c, h, w] by rois [num, 4] (x0, y0, x1, y1) and their
// batch indices (i64) into y [num, c, oh, ow]: one thread an output element,
// its roi's bins, sampling points and their values from hone_roi_bins_of,
// hone_roi_sample, hone_roi_point_value and hone_roi_fold
// (src/ops/roi_align_points.h, the reference's), in double. A batch index
// outside [0, n) leaves NaN and sets the run's error word to `code`.
extern "C" __global__ void hone_roi_align(const float* x, const float* rois,
                                          const long long* batch, float* y, long long num,
                                          long long c, long long h, long long w, long long n,
                                          long long oh, long long ow, long long sampling,
                                          double scale, int half_pixel, int max_mode,
                                          unsigned long long* err, unsigned long long code) {
  HONE_FOR(t, num * c * oh * ow) {
    const long long pw = t % ow, ph = (t / ow) % oh, ch = (t / (ow * oh)) % c;
    const long long r = t / (ow * oh * c), bi = batch[r];
    if (bi < 0 || bi >= n) {
      hone_flag(err, code);
      y[t] = __int_as_float(0x7fc00000);
      continue;
    }
    const double roi[4] = {(double)rois[r * 4], (double)rois[r * 4 + 1], (double)rois[r * 4 + 2],
                           (double)rois[r * 4 + 3]};
    const hone_roi_bins b = hone_roi_bins_of(roi, scale, half_pixel, oh, ow, sampling);
    const float* plane = x + (bi * c + ch) * h * w;
    double acc = 0.0;
    bool first = true;
    for (long long iy = 0; iy < b.gh; ++iy)
      for (long long ix = 0; ix < b.gw; ++ix) {
        const hone_roi_point q = hone_roi_sample(&b, ph, pw, iy, ix, h, w);
        const double v = hone_roi_point_value(
            &q, (double)plane[q.y0 * w + q.x0], (double)plane[q.y0 * w + q.x1],
            (double)plane[q.y1 * w + q.x0], (double)plane[q.y1 * w + q.x1], max_mode);
        acc = hone_roi_fold(acc, v, first ? 1 : 0, max_mode);
        first = false;
      }
    y[t] = (float)(max_mode ? acc : acc / b.count);
  }
}

// MaxPool and AveragePool over three spatial dims (ops_misc.cpp's plan_pool,
// whose Pool3 mirrors this struct): per dim the input and output sizes, the
// kernel, strides, pads before and after and dilations. One thread an output
// element, as hone_pool2d: NaN propagates through max; an average divides by
// the taps inside the input, or with include_pad by the window clipped to
// the padded input.
struct HonePool3 {
  int in[3], out[3], k[3], s[3], pb[3], pe[3], dil[3];
  int is_max, include_pad;
};
extern "C" __global__ void hone_pool3d(const float* x, float* y, long long NC, HonePool3 w) {
  const long long plane = (long long)w.in[0] * w.in[1] * w.in[2];
  HONE_FOR(i, NC * w.out[0] * w.out[1] * w.out[2]) {
    const int ow = i % w.out[2], oh = (i / w.out[2]) % w.out[1];
    const int od = (i / ((long long)w.out[2] * w.out[1])) % w.out[0];
    const float* p = x + (i / ((long long)w.out[2] * w.out[1] * w.out[0])) * plane;
    const int ds = od * w.s[0] - w.pb[0], hs = oh * w.s[1] - w.pb[1], ws = ow * w.s[2] - w.pb[2];
    float acc = w.is_max ? -HONE_INF : 0.0f;
    int count = 0;
    for (int kd = 0; kd < w.k[0]; ++kd) {
      const int id = ds + kd * w.dil[0];
      if (id < 0 || id >= w.in[0]) continue;
      for (int kh = 0; kh < w.k[1]; ++kh) {
        const int ih = hs + kh * w.dil[1];
        if (ih < 0 || ih >= w.in[1]) continue;
        for (int kw = 0; kw < w.k[2]; ++kw) {
          const int iw = ws + kw * w.dil[2];
          if (iw < 0 || iw >= w.in[2]) continue;
          const float v = p[((long long)id * w.in[1] + ih) * w.in[2] + iw];
          acc = w.is_max ? (v > acc || v != v ? v : acc) : acc + v;
          ++count;
        }
      }
    }
    if (!w.is_max) {
      if (w.include_pad) {
        const int de = min(ds + w.k[0], w.in[0] + w.pe[0]);
        const int he = min(hs + w.k[1], w.in[1] + w.pe[1]);
        const int we = min(ws + w.k[2], w.in[2] + w.pe[2]);
        count = (de - ds) * (he - hs) * (we - ws);
      }
      acc = acc / (float)count;
    }
    y[i] = acc;
  }
}
