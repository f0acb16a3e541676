// Data-movement kernels: transpose, concat, strided copies (Slice, Split,
// Expand, Gather by known indices) and select (Where) of f32 (any 4-byte element).
//
//   transpose(dims, perm, x, y, pool);              // "transpose.f32.blas.strided"
//   concat(outer, {inner sizes}, {srcs}, y, pool);  // "concat.f32.blas.copy"
//   strided_copy(out_dims, strides, x + base, y, pool);  // y[i...] = x[sum i_k * strides_k]
#pragma once

#include <cstdint>
#include <vector>

#include "hone/thread_pool.h"

namespace hone::blas::kernels {

/// y = x.transpose(perm); dims are x's.
void transpose(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm, const float* x,
               float* y, ThreadPool& pool);

/// Each input viewed as [outer, inner_k]; y as [outer, sum inner_k].
void concat(int64_t outer, const std::vector<int64_t>& inner, const std::vector<const float*>& xs,
            float* y, ThreadPool& pool);

/// y (contiguous, of dims `out`) from x read with `strides` (elements per
/// step of each output axis; 0 repeats, negative walks backwards).
void strided_copy(const std::vector<int64_t>& out, const std::vector<int64_t>& strides,
                  const float* x, float* y, ThreadPool& pool);

/// y = x viewed as [outer, dim, inner] with rows `idx` of its middle axis:
/// y[o, j, :] = x[o, idx[j], :]; every index in [0, dim).
void gather_rows(int64_t outer, int64_t dim, int64_t inner, const std::vector<int64_t>& idx,
                 const float* x, float* y, ThreadPool& pool);

/// out = cond ? x : y over output dims `out`, each operand read with its
/// strides (0 on broadcast axes): strides[0] cond's, [1] x's, [2] y's.
void select(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& strides,
            const uint8_t* cond, const float* x, const float* y, float* dst, ThreadPool& pool);

}  // namespace hone::blas::kernels
