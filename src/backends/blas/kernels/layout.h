// Data-movement kernels: transpose and concat of f32 (any 4-byte element).
//
//   transpose(dims, perm, x, y, pool);              // "transpose.f32.blas.strided"
//   concat(outer, {inner sizes}, {srcs}, y, pool);  // "concat.f32.blas.copy"
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

}  // namespace hone::blas::kernels
