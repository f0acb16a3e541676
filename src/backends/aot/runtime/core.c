/* The start of every generated library, after hone_aot_abi.h: the C headers,
 * the SGEMM and vector math the kernels call, hone_erf, the model and run
 * context types, and the per-thread error. Included into the generated
 * source as text (see runtime/README.md); not a translation unit alone. */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hone_aot_abi.h"

#define HONE_EXPORT __attribute__((visibility("default")))

/* Every ABI function, declared exported from the one list. */
#define HONE_AOT_DECLARE(name, ret, params) HONE_EXPORT ret hone_aot_##name params;
HONE_AOT_FUNCTIONS(HONE_AOT_DECLARE)
#undef HONE_AOT_DECLARE

/* oneDNN's row-major SGEMM (libdnnl.so.2), declared here so no oneDNN header is
 * needed. It threads with OpenMP (libgomp), the runtime of the loops below, so
 * one thread team serves both. */
int dnnl_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc);
/* An empty product does no call: oneDNN refuses a leading dim of 0 (lda < 1
 * when K is 0) and would leave C unwritten. K = 0 gives C = beta * C, as
 * ONNX's Gemm and MatMul over an empty axis (0 where beta is 0). */
static inline void hone_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                              const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                              float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#define SGEMM(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) \
  hone_sgemm((ta), (tb), (m), (n), (k), (alpha), (a), (lda), (b), (ldb), (beta), (c), (ldc))

/* A quotient of dims (a Reshape's -1 over the other entries): 0 where the
 * divisor is, as a symbolic dim of 0 makes it (the lowering folds numbers so). */
static inline int64_t hone_dim_div(int64_t a, int64_t b) {
  return b == 0 ? 0 : a / b;
}

/* glibc's vector math (libmvec): with these, loops that call them vectorize. */
float expf(float) __attribute__((simd("notinbranch")));
float logf(float) __attribute__((simd("notinbranch")));
float erff(float) __attribute__((simd("notinbranch")));
float tanhf(float) __attribute__((simd("notinbranch")));
float powf(float, float) __attribute__((simd("notinbranch")));

/* Max and Min of two floats as the reference takes them: NaN if either is
 * (fmaxf and fminf would return the other). */
static inline __attribute__((always_inline)) float hone_maxf(float a, float b) {
  return a != a || b != b ? a + b : (a > b ? a : b);
}
static inline __attribute__((always_inline)) float hone_minf(float a, float b) {
  return a != a || b != b ? a + b : (a < b ? a : b);
}

/* erf for Gelu: a degree-18 polynomial in u = |x|/2 - 1 over |x| <= 4 (erf(4)
 * is 1 in float), from Chebyshev interpolation; absolute error under 2e-7.
 * Inline, so a Gelu loop is FMAs only (libmvec's erff was 7% of a
 * transformer). NaN stays NaN; the Erf op itself keeps libm's erff. */
static inline __attribute__((always_inline)) float hone_erf(float x) {
  float a = fabsf(x);
  a = a > 4.0f ? 4.0f : a;
  const float u = 0.5f * a - 1.0f;
  /* Horner written out: a loop over a coefficient table stops GCC from
   * vectorizing the Gelu loop around it. */
  float p = 4.608522499e-03f;
  p = p * u - 5.780227974e-03f;
  p = p * u - 2.481124632e-02f;
  p = p * u + 4.325807609e-02f;
  p = p * u + 4.276042235e-02f;
  p = p * u - 1.396366690e-01f;
  p = p * u + 3.521664338e-02f;
  p = p * u + 2.147358212e-01f;
  p = p * u - 2.743972892e-01f;
  p = p * u - 2.608322236e-02f;
  p = p * u + 4.085031267e-01f;
  p = p * u - 4.324625850e-01f;
  p = p * u + 2.924482129e-02f;
  p = p * u + 4.188512705e-01f;
  p = p * u - 5.511112456e-01f;
  p = p * u + 3.857835519e-01f;
  p = p * u - 1.653360218e-01f;
  p = p * u + 4.133397467e-02f;
  p = p * u + 9.953222650e-01f;
  return copysignf(p, x);
}

typedef struct hone_model {
  const float* w; /* the weights payload */
  void* owned;    /* the blob read by hone_aot_create, or NULL */
  int threads;    /* as given to create; 0: OpenMP's default */
  int nt;         /* OpenMP team size of every loop */
  char* arena;    /* used by one run at a time; others allocate their own */
  int arena_busy;
  void* dn; /* oneDNN state of channels-last convs, or NULL */
  void (*free_dn)(void*);
} hone_model;

typedef struct {
  const float* W;
  const int64_t* d;
  char* A;
  const void* const* in; /* each of its input's dtype (input_dtypes) */
  void* const* out;
  int nt;
  hone_model* m;
  int exclusive;  /* this run holds the model's arena (and its cached oneDNN objects) */
  int* status;    /* a step that fails sets it (a hone_aot_status), after set_error() */
  int64_t* d_set; /* d itself: a step sets a symbol it finds when it runs (NonZero's count) */
} ctx_t;

static __thread char last_error[1024];
static __thread int last_status;

/* Records why the call fails; returns `status` for `return set_error(...)`. */
__attribute__((format(printf, 2, 3))) static int set_error(hone_aot_status status, const char* fmt,
                                                           ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  last_status = (int)status;
  return (int)status;
}

HONE_EXPORT const char* hone_aot_last_error(void) {
  return last_error;
}
HONE_EXPORT int hone_aot_last_status(void) {
  return last_status;
}
HONE_EXPORT int hone_aot_abi_version(void) {
  return HONE_AOT_ABI_VERSION;
}
