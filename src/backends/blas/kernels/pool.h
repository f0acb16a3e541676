// 2-D pooling kernels over NCHW f32 planes (1-D pools run with a height of
// one), split over planes on the thread pool.
//
//   Pool2dShape s{...};   // geometry, from the node's attributes and input shape
//   pool2d_max(s, x, y, pool);        // "maxpool2d.f32.blas.direct"
//   pool2d_average(s, x, y, pool);    // "avgpool2d.f32.blas.direct"
//   global_pool(planes, hw, /*max=*/false, x, y, pool);   // "globalpool.f32.blas.direct"
#pragma once

#include <cstdint>

#include "hone/thread_pool.h"

namespace hone::blas::kernels {

struct Pool2dShape {
  int64_t planes = 1;  // N * C
  int64_t h = 1, w = 1, oh = 1, ow = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;  // pads: top, left, bottom, right
  bool count_include_pad = false;
};

/// Max over the in-bounds taps of each window (-inf when a window has none).
void pool2d_max(const Pool2dShape& s, const float* x, float* y, ThreadPool& pool);
/// Mean over the in-bounds taps, or over the taps inside the padded input
/// when count_include_pad.
void pool2d_average(const Pool2dShape& s, const float* x, float* y, ThreadPool& pool);
/// Mean (or max) of each of `planes` planes of `hw` elements.
void global_pool(int64_t planes, int64_t hw, bool max, const float* x, float* y, ThreadPool& pool);

}  // namespace hone::blas::kernels
