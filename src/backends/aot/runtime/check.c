/* The compile check of aot's C runtime: the pieces joined in the order
 * emit_c() joins them, around the model-specific part emit_c() writes, here
 * for one small model with every optional piece (a channels-last conv through
 * oneDNN, an LSTM tile, Gelu's erf). The build compiles it with
 * -Wall -Wextra -Werror (target hone_aot_runtime_check), so a warning in the
 * runtime fails hone's build rather than a user's compile. Not linked into
 * anything. */
#include "core.c"

#define NUM_DN_SLOTS 2
#include "dnnl_conv.c"
#include "lstm.c"

/* The reference's own C, where a GridSample, RoiAlign or NonMaxSuppression step needs it. */
#include "../../../ops/grid_sample_taps.h"
#include "../../../ops/nms_select.h"
#include "../../../ops/roi_align_points.h"

/* --- what emit_c() writes per model ----------------------------------------- */
#define NUM_INPUTS 1
#define NUM_OUTPUTS 1
#define NUM_SYMBOLS 1
#define MAX_RANK 4
#define ARENA_BYTES 4096ULL
#define WEIGHT_BYTES 256ULL
#define WEIGHT_HASH 0x0123456789abcdefULL

static const char* const input_names[] = {"x", NULL};
static const char* const output_names[] = {"y", NULL};
static const int input_ranks[] = {4, 0};
static const int output_ranks[] = {4, 0};
static const char* const input_dtypes[] = {"f32", NULL};
static const char* const output_dtypes[] = {"f32", NULL};
static const int64_t input_dims[NUM_INPUTS + 1][MAX_RANK] = {{-1, 16, 4, 4}, {0}};
static const char* const symbol_names[] = {"batch", NULL};
static const int64_t symbol_max[] = {8, 0};
static const int64_t symbol_min[] = {1, 0};
static const int symbol_set_by_run[] = {0, 0};

static void output_dims(const int64_t* d, int k, int64_t* dims) {
  switch (k) {
    case 0:
      dims[0] = d[0];
      dims[1] = 16;
      dims[2] = 4;
      dims[3] = 4;
      break;
    default:
      break;
  }
}

__attribute__((noinline)) static void step0_conv(const ctx_t* c) {
  const int64_t* d = c->d;
  static const dn_conv_desc k = {"conv", 16, 4, 4, 16, 1, 1,
                                 4,      4,  1, 1, 1,  1, 0,
                                 0,      0,  0, 1, 0,  1, {{0, dnnl_eltwise_relu, 0.0f, 0.0f}},
                                 0,      0};
  const float* const post_src[] = {NULL};
  if (dn_conv_run(c, 0, &k, d[0], c->in[0], c->W, NULL, (float*)c->A, NULL, post_src) != 0) {
    *c->status = last_status;
    return;
  }
}

__attribute__((noinline)) static void step1_gelu_lstm(const ctx_t* c) {
  const int64_t n = c->d[0] * 256;
  float* Y = c->out[0];
  const float* X = (const float*)c->A;
  if (c->nt > 1 && (n > 32768)) {
#pragma omp parallel for simd num_threads(c->nt)
    for (int64_t i = 0; i < n; ++i) Y[i] = 0.5f * X[i] * (1.0f + hone_erf(X[i] * 0.70710678f));
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) Y[i] = 0.5f * X[i] * (1.0f + hone_erf(X[i] * 0.70710678f));
  }
  /* One LSTM tile of one batch row, H = d[0] hidden units (as a symbol here,
   * a number in generated code), over the weights. */
  const int64_t H = c->d[0];
  float* hn = (float*)c->A + 256;
  float* cs = hn + 16;
  hone_lstm_tile(1, 4, H, c->W, c->W, 16, hn, cs, H, c->W, X, H, c->W, NULL, 0, 16, NULL, 0, 16,
                 NULL, 0.0f, 0);
}

static void run_steps(const ctx_t* c) {
  step0_conv(c);
  if (*c->status) return;
  step1_gelu_lstm(c);
}

static int check_cpu(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2"))
    return set_error(HONE_AOT_UNSUPPORTED_CPU,
                     "this CPU lacks 'avx2', which this library was compiled for");
#endif
  return 0;
}
/* --- end of the per-model part ---------------------------------------------- */

#include "model.c"
