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
#include <string>
#include <string_view>
#include <vector>

#include "hone/thread_pool.h"

namespace hone::eval {

/// Which OpenBLAS build this process loaded: "sequential", "pthreads" or "openmp".
std::string_view openblas_variant();

/// The kernel set OpenBLAS chose at load ("Haswell", "SkylakeX", ...).
std::string_view openblas_core();

/// A better OPENBLAS_CORETYPE for this CPU than `core`, or "" when `core` is
/// right. OpenBLAS (DYNAMIC_ARCH, as Debian builds it) picks its kernels from
/// the CPU model when it loads; a model it does not know (a newer one, or a
/// virtual machine that masks it) falls back to the oldest x86-64 kernels,
/// Prescott's SSE3. On the H200 machine's Xeon that made the reference's
/// DGEMM 4.3x slower on one thread and 2.4x on 16 than SkylakeX's kernels
/// (bench/RESULTS.md). The answer goes by the instructions the CPU has:
/// SkylakeX with AVX-512 F/CD/BW/DQ/VL, Haswell with AVX2 and FMA.
std::string better_openblas_core(std::string_view core, bool avx2_fma, bool avx512);

/// better_openblas_core() for the loaded OpenBLAS on this CPU.
std::string better_openblas_core_here();

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
