// 2-D convolution kernels (1-D convs run as 2-D with a height of one), NCHW
// f32, with an epilogue callback over finished output ranges so bias,
// residual and activation run while the data is still in cache.
//
//   Conv2dShape s{...};                                   // geometry, validated by the caller
//   size_t ws = conv2d_im2col_workspace(s, pool.num_threads());
//   conv2d_im2col(s, x, w, bias, y, workspace, pool, &epilogue);  // "conv2d.f32.blas.im2col"
//   conv2d_depthwise(s, x, w, bias, y, workspace, pool, &epilogue); // "conv2d.f32.blas.depthwise"
//
// Weights are [M, C/group, KH, KW] row-major (the ONNX layout, which is
// already the SGEMM A matrix of each group). The bias (may be null) is where
// each output starts: SGEMM then accumulates onto it (beta = 1), which costs
// nothing over the zero fill OpenBLAS does for beta = 0. Thread-safe:
// kernels write only `y` and `workspace`.
//
// Images are batched into one SGEMM (output channels x images*H*W, each
// thread taking a run of images) when the planes are small: one narrow GEMM
// per image is where OpenBLAS is weakest. The price is copying the result
// from workspace into NCHW order, which the epilogue then finds in cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "hone/thread_pool.h"

namespace hone::blas::kernels {

struct Conv2dShape {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input
  int64_t m = 1, kh = 1, kw = 1;       // output channels, kernel
  int64_t oh = 1, ow = 1;              // output
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0;  // top and left padding (the far side follows from oh/ow)
  int64_t group = 1;

  /// One input channel per group: the depthwise kernel applies.
  bool depthwise() const { return group == c && group > 1; }
  /// A 1x1, stride-1, unpadded conv reads the input as the SGEMM B matrix directly.
  bool pointwise() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && oh == h && ow == w;
  }
};

/// Called with a finished range [begin, end) of flat output elements.
using OutputDone = std::function<void(int64_t begin, int64_t end)>;

/// Whether conv2d_im2col batches the images of each group into one SGEMM.
bool conv2d_batched(const Conv2dShape& s, int threads);

/// Floats of workspace conv2d_im2col needs with `threads` threads.
size_t conv2d_im2col_workspace(const Conv2dShape& s, int threads);

void conv2d_im2col(const Conv2dShape& s, const float* x, const float* w, const float* bias,
                   float* y, float* workspace, ThreadPool& pool, const OutputDone* done);

/// Floats of workspace conv2d_depthwise needs with `threads` threads (a
/// zero-padded copy of one input plane per thread).
size_t conv2d_depthwise_workspace(const Conv2dShape& s, int threads);

void conv2d_depthwise(const Conv2dShape& s, const float* x, const float* w, const float* bias,
                      float* y, float* workspace, ThreadPool& pool, const OutputDone* done);

}  // namespace hone::blas::kernels
