/* LSTM's vector helpers and cell kernel (see emit_lstm.cpp), in every
 * generated library with an LSTM step. Included into the generated source as
 * text after core.c (see runtime/README.md).
 *
 * GCC vector extensions compile on any target (AVX-512 here: one zmm per
 * hidden tile and gate). The exp is a reduction to |r| <= ln2/2 and a
 * polynomial (error ~2e-7 relative; degree 5 on AVX-512, folded into the
 * sigmoid, degree 6 elsewhere), scaled by 2^n with vscalefps on AVX-512 and
 * through the exponent bits elsewhere: tanh and sigmoid stay well within the
 * 1e-4 the reference comparison allows. */
/* --- LSTM: vector helpers and the cell kernel ------------------------------- */
/* Below AVX-512 these 64-byte vectors are passed in memory between the (all
 * inlined) helpers; GCC's note that this ABI differs is moot here. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float hv16 __attribute__((vector_size(64)));
typedef int hv16i __attribute__((vector_size(64)));
typedef float hv16u __attribute__((vector_size(64), aligned(4)));

static inline hv16 hv_ld(const float* p) {
  return *(const hv16u*)p;
}
/* A load kept in a register: GCC otherwise folds it into every FMA that uses
 * it, and 16 FMA loads plus 4 broadcasts per k bind the kernel on the load
 * ports instead of the FMA pipes. Below AVX-512 no register holds 64 bytes
 * (march_native=false), so there it is a plain load. */
static inline hv16 hv_ld_reg(const float* p) {
  hv16 v = *(const hv16u*)p;
#if defined(__AVX512F__)
  __asm__("" : "+v"(v));
#endif
  return v;
}
static inline void hv_st(float* p, hv16 v) {
  *(hv16u*)p = v;
}
/* A list, not (hv16){0} + x: without -ffast-math that add is kept (0 + -0 is +0). */
static inline hv16 hv_set(float x) {
  return (hv16){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
}
#if defined(__AVX512F__)
/* AVX-512: min/max, an exp whose 2^n is one vscalefps (no clamp needed for
 * the exponent), and a reciprocal from vrcp14ps plus one Newton step
 * (relative error ~1e-8) instead of a vdivps, the slowest op of the cell. */
#include <immintrin.h>
static inline hv16 hv_min(hv16 a, hv16 b) {
  return (hv16)_mm512_min_ps((__m512)a, (__m512)b);
}
static inline hv16 hv_max(hv16 a, hv16 b) {
  return (hv16)_mm512_max_ps((__m512)a, (__m512)b);
}
static inline hv16 hv_rcp(hv16 d) {
  const hv16 r = (hv16)_mm512_rcp14_ps((__m512)d);
  return r + r * (1.0f - d * r);
}
/* sigmoid(k x) for a constant k (1 for the gates, 2 for tanh), with the
 * scaling and the negation folded into constants: e^-kx = 2^n e^-ks with
 * n = round(-k x log2 e) and s = x + n ln2 / k (one FMA; ln2 in f32 is off by
 * ~2e-9, so |n| <= 127 costs < 3e-7), and e^-ks a degree-5 polynomial in s
 * (Chebyshev interpolation of e^r on |r| <= ln2/2, relative error < 2e-7,
 * the coefficients times (-k)^j, exact powers of two folded at compile time).
 * Both clamps stay: x >= -88/k keeps 1 + e^-kx finite, x <= 88/k keeps s
 * small for huge x (else the polynomial overflows before the 2^n). */
static inline hv16 hv_sigmoid_k(hv16 x, const float k) {
  x = hv_min(hv_max(x, hv_set(-88.0f / k)), hv_set(88.0f / k));
  const float m = -k;
  const hv16 n = (hv16)_mm512_roundscale_ps((__m512)(x * (m * 1.44269504088896341f)), 0);
  const hv16 r = x + n * (0.693147182464599609f / k);
  hv16 q =
      r * (8.369148708879948e-3f * (m * m * m * m * m)) + 4.1917506605386734e-2f * (m * m * m * m);
  q = q * r + 1.6666504740715027e-1f * (m * m * m);
  q = q * r + 4.9998870491981506e-1f * (m * m);
  q = q * r + m;
  q = q * r + 1.0000001192092896f;
  return hv_rcp(1.0f + (hv16)_mm512_scalef_ps((__m512)q, (__m512)n));
}
#else
static inline hv16 hv_min(hv16 a, hv16 b) {
  const hv16i m = a < b;
  return (hv16)((m & (hv16i)a) | (~m & (hv16i)b));
}
static inline hv16 hv_max(hv16 a, hv16 b) {
  const hv16i m = a > b;
  return (hv16)((m & (hv16i)a) | (~m & (hv16i)b));
}
static inline hv16 hv_exp(hv16 x) {
  x = hv_min(hv_max(x, hv_set(-87.0f)), hv_set(88.0f));
  const hv16 magic = hv_set(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
  const hv16 t = x * 1.44269504088896341f + magic;
  const hv16 n = t - magic;
  hv16 r = x - n * 0.693145751953125f;
  r = r - n * 1.428606765330187045e-6f;
  hv16 q = r * 1.38888888888888889e-3f + 8.33333333333333333e-3f;
  q = q * r + 4.16666666666666667e-2f;
  q = q * r + 1.66666666666666667e-1f;
  q = q * r + 0.5f;
  q = q * r + 1.0f;
  q = q * r + 1.0f;
  const hv16i e = ((hv16i)t - 0x4B400000 + 127) << 23;
  return q * (hv16)e;
}
static inline hv16 hv_rcp(hv16 d) {
  return 1.0f / d;
}
/* The argument is clamped so 1 + e^-x stays finite; sigmoid(+-88) is 1 and ~0 in f32. */
static inline hv16 hv_sigmoid_k(hv16 x, const float k) {
  x = hv_min(hv_max(x * k, hv_set(-88.0f)), hv_set(88.0f));
  return hv_rcp(1.0f + hv_exp(-x));
}
#endif
static inline hv16 hv_sigmoid(hv16 x) {
  return hv_sigmoid_k(x, 1.0f);
}
static inline hv16 hv_tanh(hv16 x) {
  return 2.0f * hv_sigmoid_k(x, 2.0f) - 1.0f;
}
static inline hv16 hv_clip(hv16 x, float c) {
  return c > 0.0f ? hv_min(hv_max(x, hv_set(-c)), hv_set(c)) : x;
}

/* acc[s][r][g] += a[r] · w over K, for MB rows a (stride as) and w packed
 * [k][gate][16], with KS partial sums over k (few rows keep 16 accumulators in
 * flight). The kernel runs it twice: x_t · W^T and h_{t-1} · R^T. */
static inline __attribute__((always_inline)) void hone_lstm_dot(
    const int MB, const int KS, const int64_t K, const float* restrict wt, const float* restrict a,
    const int64_t as, hv16 acc[4][4][4]) {
  int64_t k = 0;
  for (; k + KS <= K; k += KS)
    for (int s = 0; s < KS; ++s) {
      const float* w = wt + (k + s) * 64;
      const hv16 w0 = hv_ld_reg(w), w1 = hv_ld_reg(w + 16), w2 = hv_ld_reg(w + 32),
                 w3 = hv_ld_reg(w + 48);
      for (int r = 0; r < MB; ++r) {
        const hv16 h = hv_set(a[r * as + k + s]);
        acc[s][r][0] += h * w0;
        acc[s][r][1] += h * w1;
        acc[s][r][2] += h * w2;
        acc[s][r][3] += h * w3;
      }
    }
  for (; k < K; ++k) {
    const float* w = wt + k * 64;
    const hv16 w0 = hv_ld(w), w1 = hv_ld(w + 16), w2 = hv_ld(w + 32), w3 = hv_ld(w + 48);
    for (int r = 0; r < MB; ++r) {
      const hv16 h = hv_set(a[r * as + k]);
      acc[0][r][0] += h * w0;
      acc[0][r][1] += h * w1;
      acc[0][r][2] += h * w2;
      acc[0][r][3] += h * w3;
    }
  }
}

/* MB batch rows (at most 4) of one tile of 16 hidden units. The input
 * projection is part of the kernel rather than one SGEMM up front: it runs at
 * the same FMA rate as the recurrence, needs no [seq][batch][4Hp] buffer, and
 * reads x_t while the step's h rows are hot. wt: W at the tile, KI inputs;
 * xp: x_t rows (stride xs); hp: h_{t-1} rows (stride hs); hn, cs: the tile's
 * h_t and c rows; bias: summed biases (gates gs apart); y: Y rows (stride ys)
 * or NULL; nv: valid lanes of the tile; peep: P at the tile or NULL; pj:
 * NULL, or the rows' projections at the tile (stride ps, gates 16 apart,
 * with KI 0: below 4 rows W streams from L2 for too few FMAs, so small
 * batches project every step up front with SGEMMs instead). Inlined
 * with constant MB and KS, the loops unroll and acc lives in registers. */
static inline __attribute__((always_inline)) void hone_lstm_tile(
    const int MB, const int KS, const int64_t K, const float* restrict rt, const float* restrict hp,
    const int64_t hs, float* restrict hn, float* restrict cs, const int64_t KI,
    const float* restrict wt, const float* restrict xp, const int64_t xs,
    const float* restrict bias, const float* restrict pj, const int64_t ps, const int64_t gs,
    float* restrict y, const int64_t ys, const int nv, const float* restrict peep, const float clip,
    const int input_forget) {
  hv16 acc[4][4][4];
  for (int r = 0; r < MB; ++r)
    for (int g = 0; g < 4; ++g) {
      acc[0][r][g] = hv_ld(bias + g * gs);
      if (pj) acc[0][r][g] += hv_ld(pj + r * ps + g * 16);
      for (int s = 1; s < KS; ++s) acc[s][r][g] = hv_set(0.0f);
    }
  hone_lstm_dot(MB, KS, KI, wt, xp, xs, acc);
  hone_lstm_dot(MB, KS, K, rt, hp, hs, acc);
  for (int s = 1; s < KS; ++s)
    for (int r = 0; r < MB; ++r)
      for (int g = 0; g < 4; ++g) acc[0][r][g] += acc[s][r][g];
  for (int r = 0; r < MB; ++r) {
    /* ONNX gate order: i, o, f, c; peepholes i, o, f. */
    hv16 vi = acc[0][r][0], vo = acc[0][r][1], vf = acc[0][r][2];
    const hv16 vc = acc[0][r][3];
    const hv16 cp = hv_ld(cs + r * hs);
    if (peep) {
      vi += hv_ld(peep) * cp;
      vf += hv_ld(peep + 2 * gs) * cp;
    }
    const hv16 ig = hv_sigmoid(hv_clip(vi, clip));
    const hv16 fg = input_forget ? 1.0f - ig : hv_sigmoid(hv_clip(vf, clip));
    const hv16 cn = fg * cp + ig * hv_tanh(hv_clip(vc, clip));
    if (peep) vo += hv_ld(peep + gs) * cn;
    const hv16 h = hv_sigmoid(hv_clip(vo, clip)) * hv_tanh(hv_clip(cn, clip));
    hv_st(cs + r * hs, cn);
    hv_st(hn + r * hs, h);
    if (y) {
      if (nv == 16) {
        hv_st(y + r * ys, h);
      } else {
        for (int u = 0; u < nv; ++u) y[r * ys + u] = h[u];
      }
    }
  }
}
