// Row-wise normalization and reduction kernels over f32, split over rows on
// the thread pool. A tensor is viewed as [outer, axis, inner]; the kernels
// work along `axis`.
//
//   softmax(outer, axis, inner, /*log=*/false, x, y, pool);      // "softmax.f32.blas.rows"
//   layer_norm(rows, size, eps, x, scale, bias, y, pool);        // "layernorm.f32.blas.rows"
//   reduce(dims, reduced_mask, ops::ReduceKind::kMean, x, y, pool); // "reduce.f32.blas.strided"
#pragma once

#include <cstdint>
#include <vector>

#include "hone/thread_pool.h"
#include "ops/reduce.h"

namespace hone::blas::kernels {

/// Softmax (or log-softmax) of x viewed as [outer, axis, inner] along axis.
void softmax(int64_t outer, int64_t axis, int64_t inner, bool log, const float* x, float* y,
             ThreadPool& pool);

/// y = (x - mean) / sqrt(var + eps) * scale + bias over each row of `size`;
/// scale and bias have `size` elements (bias may be null).
void layer_norm(int64_t rows, int64_t size, float eps, const float* x, const float* scale,
                const float* bias, float* y, ThreadPool& pool);

/// The Reduce* of `kind` over the dims of `dims` flagged in `reduced`; y
/// holds the kept dims in order. Computes in double: Sum and Mean in the
/// input's order, the rest by ops::reduce_f64 (the reference's formulas).
void reduce(const std::vector<int64_t>& dims, const std::vector<bool>& reduced,
            ops::ReduceKind kind, const float* x, float* y, ThreadPool& pool);

}  // namespace hone::blas::kernels
