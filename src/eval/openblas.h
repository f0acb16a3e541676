// OpenBLAS for the reference interpreter's matrix products, and its thread
// pinning, which the blas backend shares.
//
//   eval::pin_openblas_single_thread();            // before any BLAS call on a thread
//   eval::dgemm_batched(pool, batch, M, K, N, a_off, b_off, a, b, c);
//
// The reference accumulates every floating-point product in double, so its
// MatMul and Gemm are DGEMMs: well-kept, exactly specified arithmetic (each
// output a dot product in double, in an order of the library's choosing),
// tens of times the speed of plain loops. That is what keeps checking a
// large model against the reference (vit_b_16 or bert-base at batch 32, in
// f32 and f64) to seconds instead of minutes. OpenBLAS stays at one thread
// per calling thread; hone's pool splits the rows.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "hone/thread_pool.h"

namespace hone::eval {

/// Which OpenBLAS build this process loaded: "sequential", "pthreads" or "openmp".
std::string_view openblas_variant();

/// Makes OpenBLAS run single-threaded on the calling thread (and, for the
/// pthreads build, process-wide). Cheap after the first call per thread.
void pin_openblas_single_thread();

/// For each batch index bi: c[bi] = a[a_off[bi]] · b[b_off[bi]] (row-major
/// M×K by K×N, c contiguous batch × M × N), split over `pool` in row blocks;
/// batches that share one B and lie one after another in A run as a single
/// product of batch·M rows.
void dgemm_batched(ThreadPool& pool, int64_t batch, int64_t M, int64_t K, int64_t N,
                   const std::vector<int64_t>& a_off, const std::vector<int64_t>& b_off,
                   const double* a, const double* b, double* c);

}  // namespace hone::eval
