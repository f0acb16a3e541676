// Sampling kernels: GridSample (ops_sample.cpp). The taps come from
// hone_grid_taps (src/ops/grid_sample_taps.h, compiled into this module ahead
// of this file), the C the reference and aot sample with, so every backend
// reads the same input points with the same weights, summed in double in the
// same order.

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
