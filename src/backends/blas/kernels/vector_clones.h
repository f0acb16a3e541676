// HONE_VECTOR_CLONES: marks a hot loop function to be compiled several times.
//
//   HONE_VECTOR_CLONES void axpy(float* y, const float* x, float a, int64_t n) {
//     for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
//   }
//
// The library targets any x86-64, but the blas kernels' plain loops are
// where wider vectors pay: GCC builds each marked function for x86-64-v4
// (AVX-512), x86-64-v3 (AVX2, FMA) and the baseline, and the dynamic loader
// picks one for the CPU it runs on (an ifunc). Elsewhere it expands to nothing.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HONE_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HONE_VECTOR_CLONES
#endif
