// SGEMM through OpenBLAS, with hone's thread pool supplying the parallelism.
//
//   kernels::sgemm(false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);  // one thread
//   kernels::sgemm_rows(pool, false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n, on_rows);
//   kernels::openblas_variant();   // "pthreads", "openmp" or "sequential"
//
// OpenBLAS is kept at one thread on every thread that calls it: Debian's
// default libopenblas is the pthreads build, whose thread count is one
// process-wide number, so it cannot express a per-backend `threads` setting
// nor stay sane when several inferences run at once. hone splits the work
// itself (over rows, batches, images) and each piece is a one-thread SGEMM.
// With the OpenMP build the count is per calling thread, so it is set on
// every thread that calls in. Kernel id: "gemm.f32.blas.sgemm".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "hone/thread_pool.h"

namespace hone::blas::kernels {

/// Which OpenBLAS build this process loaded.
std::string_view openblas_variant();
/// OpenBLAS's version ("0.3.21"), from its build configuration.
std::string openblas_version();

/// Makes OpenBLAS run single-threaded on the calling thread (and, for the
/// pthreads build, process-wide). Cheap after the first call per thread.
void pin_openblas_single_thread();

/// Row-major C[m,n] = alpha * op(A) * op(B) + beta * C on the calling thread.
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// Called with a finished range of rows [row_begin, row_end) of C.
using RowsDone = std::function<void(int64_t row_begin, int64_t row_end)>;

/// C = alpha * op(A) * op(B) + beta * C split over row blocks of C on
/// `pool` (one block when the product is too small to be worth splitting);
/// `done` (may be null) runs on each finished block on the thread that
/// computed it.
void sgemm_rows(ThreadPool& pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                float* c, int64_t ldc, const RowsDone* done);

/// Row blocks worth giving each thread for an m x n x k product.
int64_t gemm_row_blocks(int64_t m, int64_t n, int64_t k, int threads);

}  // namespace hone::blas::kernels
