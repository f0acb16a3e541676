// LSTM for the aot backend, the code generation half. Per direction, the
// time loop runs hone_lstm_tile over tiles of 16 hidden units: it starts its
// accumulators from the summed biases, adds x_t · W^T (batches below 4: a
// projection made by SGEMMs up front) and h · R^T with W and
// R packed [tile][k][gate][16] (four vectors per k, the same for every batch
// row), and does the gate math in registers, writing c in place and h
// to the next step's buffer and to Y. With several threads the tiles of one
// step are split between them, with one barrier per step.
#include "backends/aot/lstm.h"

namespace hone::aot {
namespace {

std::string s(int64_t v) {
  return std::to_string(v);
}

// GCC vector extensions compile on any target (AVX-512 here: one zmm per
// hidden tile and gate). The exp is a reduction to |r| <= ln2/2 and a
// polynomial (error ~2e-7 relative; degree 5 on AVX-512, folded into the
// sigmoid, degree 6 elsewhere), scaled by 2^n with vscalefps on AVX-512 and
// through the exponent bits elsewhere: tanh and sigmoid stay well within the
// 1e-4 the reference comparison allows.
const char* kHelpers = R"C(
/* --- LSTM: vector helpers and the cell kernel ------------------------------- */
/* Below AVX-512 these 64-byte vectors are passed in memory between the (all
 * inlined) helpers; GCC's note that this ABI differs is moot here. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float hv16 __attribute__((vector_size(64)));
typedef int hv16i __attribute__((vector_size(64)));
typedef float hv16u __attribute__((vector_size(64), aligned(4)));

static inline hv16 hv_ld(const float* p) { return *(const hv16u*)p; }
/* A load kept in a register: GCC otherwise folds it into every FMA that uses
 * it, and 16 FMA loads plus 4 broadcasts per k bind the kernel on the load
 * ports instead of the FMA pipes. */
static inline hv16 hv_ld_reg(const float* p) {
  hv16 v = *(const hv16u*)p;
  __asm__("" : "+v"(v));
  return v;
}
static inline void hv_st(float* p, hv16 v) { *(hv16u*)p = v; }
/* A list, not (hv16){0} + x: without -ffast-math that add is kept (0 + -0 is +0). */
static inline hv16 hv_set(float x) { return (hv16){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }
#if defined(__AVX512F__)
/* AVX-512: min/max, an exp whose 2^n is one vscalefps (no clamp needed for
 * the exponent), and a reciprocal from vrcp14ps plus one Newton step
 * (relative error ~1e-8) instead of a vdivps, the slowest op of the cell. */
#include <immintrin.h>
static inline hv16 hv_min(hv16 a, hv16 b) { return (hv16)_mm512_min_ps((__m512)a, (__m512)b); }
static inline hv16 hv_max(hv16 a, hv16 b) { return (hv16)_mm512_max_ps((__m512)a, (__m512)b); }
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
  hv16 q = r * (8.369148708879948e-3f * (m * m * m * m * m)) + 4.1917506605386734e-2f * (m * m * m * m);
  q = q * r + 1.6666504740715027e-1f * (m * m * m);
  q = q * r + 4.9998870491981506e-1f * (m * m);
  q = q * r + m;
  q = q * r + 1.0000001192092896f;
  return hv_rcp(1.0f + (hv16)_mm512_scalef_ps((__m512)q, (__m512)n));
}
#else
static inline hv16 hv_min(hv16 a, hv16 b) { const hv16i m = a < b; return (hv16)((m & (hv16i)a) | (~m & (hv16i)b)); }
static inline hv16 hv_max(hv16 a, hv16 b) { const hv16i m = a > b; return (hv16)((m & (hv16i)a) | (~m & (hv16i)b)); }
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
static inline hv16 hv_rcp(hv16 d) { return 1.0f / d; }
/* The argument is clamped so 1 + e^-x stays finite; sigmoid(+-88) is 1 and ~0 in f32. */
static inline hv16 hv_sigmoid_k(hv16 x, const float k) {
  x = hv_min(hv_max(x * k, hv_set(-88.0f)), hv_set(88.0f));
  return hv_rcp(1.0f + hv_exp(-x));
}
#endif
static inline hv16 hv_sigmoid(hv16 x) { return hv_sigmoid_k(x, 1.0f); }
static inline hv16 hv_tanh(hv16 x) { return 2.0f * hv_sigmoid_k(x, 2.0f) - 1.0f; }
static inline hv16 hv_clip(hv16 x, float c) { return c > 0.0f ? hv_min(hv_max(x, hv_set(-c)), hv_set(c)) : x; }

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
      const hv16 w0 = hv_ld_reg(w), w1 = hv_ld_reg(w + 16), w2 = hv_ld_reg(w + 32), w3 = hv_ld_reg(w + 48);
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
    const float* restrict bias, const float* restrict pj, const int64_t ps, const int64_t gs, float* restrict y, const int64_t ys, const int nv,
    const float* restrict peep, const float clip, const int input_forget) {
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
)C";

}  // namespace

std::string lstm_prelude(const Program& p) {
  for (const Step& st : p.steps)
    if (st.anchor >= 0 && p.node(st.anchor).op_type == "LSTM") return kHelpers;
  return {};
}

void emit_lstm(Emitter& e, const Node& n, NodeId id, const std::string& y, const Step& st) {
  const LstmInfo L = lstm_info(e.program(), id);
  const int64_t H = L.hidden, Hp = L.hidden_pad, I = L.input, D = L.dirs, T = Hp / 16;
  auto out_ptr = [&](size_t k) {
    return k < n.outputs.size() && n.outputs[k] >= 0 ? e.ptr(n.outputs[k]) : std::string("NULL");
  };
  const std::string yh = out_ptr(1), yc = out_ptr(2);
  e.line("/* LSTM hidden " + s(H) + " (tiles of 16: " + s(T) + "), input " + s(I) + ", " + s(D) +
         " direction(s), " + (L.batch_major ? "layout 1" : "layout 0") +
         (L.packed ? ", weights packed at lowering" : ", weights packed here") + " */");
  e.line("const int64_t S = " + e.dim(L.seq) + ", B = " + e.dim(L.batch) + ";");
  e.line("const float* X = " + e.ptr(L.x) + ";");
  e.line("float* Y = " + y + ";");
  e.line("float* Yh = " + yh + ";");
  e.line("float* Yc = " + yc + ";");
  e.line("const float* H0 = " + (L.h0 >= 0 ? e.ptr(L.h0) : std::string("NULL")) + ";");
  e.line("const float* C0 = " + (L.c0 >= 0 ? e.ptr(L.c0) : std::string("NULL")) + ";");
  e.line("(void)Y, (void)Yh, (void)Yc, (void)H0, (void)C0;");
  e.line("float* ws = (float*)(c->A + " + s(st.scratch_offset) + ");");
  const int64_t pack = L.packed ? 0 : D * (4 * Hp * I + Hp * H * 4 + 4 * Hp + 3 * Hp);
  if (L.packed) {
    e.line("const float* Wp = " + e.ptr(L.w) + ";");
    e.line("const float* Rp = " + e.ptr(L.r) + ";");
    e.line("const float* Bp = " + e.ptr(L.b) + ";");
    e.line("const float* Pp = " + (L.p >= 0 ? e.ptr(L.p) : std::string("NULL")) + ";");
  } else {
    // The same layout lstm_lower.cpp packs constant weights into.
    e.line("float* Wp = ws;");
    e.line("float* Rp = Wp + " + s(D * 4 * Hp * I) + ";");
    e.line("float* Bp = Rp + " + s(D * Hp * H * 4) + ";");
    e.line("float* Pp = Bp + " + s(D * 4 * Hp) + ";");
    e.line("const float* Wr = " + e.ptr(L.w) + ";");
    e.line("const float* Rr = " + e.ptr(L.r) + ";");
    e.line("const float* Br = " + (L.b >= 0 ? e.ptr(L.b) : std::string("NULL")) + ";");
    e.line("const float* Pr = " + (L.p >= 0 ? e.ptr(L.p) : std::string("NULL")) + ";");
    e.line("memset(ws, 0, sizeof(float) * " + s(pack) + ");");
    e.open("for (int64_t d = 0; d < " + s(D) + "; ++d)");
    e.open("for (int64_t g = 0; g < 4; ++g)");
    e.open("for (int64_t u = 0; u < " + s(H) + "; ++u)");
    e.line("const int64_t row = d * " + s(4 * H) + " + g * " + s(H) + " + u;");
    e.line("for (int64_t k = 0; k < " + s(I) + "; ++k) Wp[(((d * " + s(T) + " + u / 16) * " + s(I) +
           " + k) * 4 + g) * 16 + u % 16] = Wr[row * " + s(I) + " + k];");
    e.line("for (int64_t k = 0; k < " + s(H) + "; ++k) Rp[(((d * " + s(T) + " + u / 16) * " + s(H) +
           " + k) * 4 + g) * 16 + u % 16] = Rr[row * " + s(H) + " + k];");
    e.line("if (Br) Bp[d * " + s(4 * Hp) + " + g * " + s(Hp) + " + u] = Br[d * " + s(8 * H) +
           " + g * " + s(H) + " + u] + Br[d * " + s(8 * H) + " + " + s(4 * H) + " + g * " + s(H) +
           " + u];");
    e.line("if (Pr && g < 3) Pp[d * " + s(3 * Hp) + " + g * " + s(Hp) + " + u] = Pr[d * " +
           s(3 * H) + " + g * " + s(H) + " + u];");
    e.close();
    e.close();
    e.close();
    if (L.p < 0) e.line("Pp = NULL;");
  }
  e.line("float* hb = ws + " + s(pack) + ";");
  e.line("float* cb = hb + 2 * B * " + s(Hp) + ";");
  // Row strides of X, Y and the states, by layout.
  const std::string pt = L.batch_major ? "1" : "B", pb = L.batch_major ? "S" : "1";
  const std::string yt = L.batch_major ? s(D * H) : "B * " + s(D * H);
  const std::string yb = L.batch_major ? "S * " + s(D * H) : s(H);
  const std::string yd = L.batch_major ? s(H) : "B * " + s(H);
  const std::string sb = L.batch_major ? s(D * H) : s(H);
  const std::string sd = L.batch_major ? s(H) : "B * " + s(H);
  e.open("for (int64_t d = 0; d < " + s(D) + "; ++d)");
  e.line("const int rev = " + std::string(L.reverse ? "1" : "d == 1") + ";");
  e.line("const float* Rd = Rp + d * " + s(Hp * H * 4) + ";");
  e.line("const float* Bd = Bp + d * " + s(4 * Hp) + ";");
  e.line("const float* Pd = Pp ? Pp + d * " + s(3 * Hp) + " : NULL;");
  e.line("(void)rev, (void)Pd;");
  e.line("const float* Wd = Wp + d * " + s(Hp * I * 4) + ";");
  e.line("const int usep = B < 4;");
  e.line("float* proj = cb + B * " + s(Hp) + ";");
  e.line("if (usep)");
  e.line("  for (int64_t j = 0; j < " + s(T) + "; ++j)");
  e.line("    SGEMM(0, 0, S * B, 64, " + s(I) + ", 1.0f, X, " + s(I) + ", Wd + j * " + s(I * 64) +
         ", 64, 0.0f, proj + j * 64, " + s(4 * Hp) + ");");
  e.line("memset(hb, 0, sizeof(float) * 3 * B * " + s(Hp) + ");");
  e.open("for (int64_t b = 0; b < B; ++b)");
  e.line("if (H0) memcpy(hb + b * " + s(Hp) + ", H0 + d * " + sd + " + b * " + sb +
         ", sizeof(float) * " + s(H) + ");");
  e.line("if (C0) memcpy(cb + b * " + s(Hp) + ", C0 + d * " + sd + " + b * " + sb +
         ", sizeof(float) * " + s(H) + ");");
  e.close();
  const std::string peep = L.p >= 0 ? "Pd + j * 16" : "NULL";
  const std::string clip = float_literal(L.clip);
  const std::string yarg = y == "NULL"
                               ? std::string("NULL")
                               : "Y + t * " + yt + " + d * " + yd + " + b0 * " + yb + " + j * 16";
  e.line("#define HONE_LSTM_TILE(MB, KS) hone_lstm_tile(MB, KS, " + s(H) + ", rt, hp + b0 * " +
         s(Hp) + ", " + s(Hp) + ", hn + b0 * " + s(Hp) + " + j * 16, cb + b0 * " + s(Hp) +
         " + j * 16, usep ? 0 : " + s(I) + ", wt, X + (t * " + pt + " + b0 * " + pb + ") * " +
         s(I) + ", " + pb + " * " + s(I) + ", Bd + j * 16, usep ? proj + (t * " + pt + " + b0 * " +
         pb + ") * " + s(4 * Hp) + " + j * 64 : NULL, " + pb + " * " + s(4 * Hp) + ", " + s(Hp) +
         ", " + yarg + ", " + yb + ", nv, " + peep + ", " + clip + ", " +
         (L.input_forget ? "1" : "0") + ")");
  e.begin_parallel("parallel", "c->nt > 1");
  e.open("for (int64_t st = 0; st < S; ++st)");
  e.line("const int64_t t = rev ? S - 1 - st : st;");
  e.line("const float* hp = hb + (st & 1) * B * " + s(Hp) + ";");
  e.line("float* hn = hb + ((st + 1) & 1) * B * " + s(Hp) + ";");
  e.line("#pragma omp for schedule(static)");
  e.open("for (int64_t j = 0; j < " + s(T) + "; ++j)");
  e.line("const float* rt = Rd + j * " + s(H * 64) + ";");
  e.line("const float* wt = Wd + j * " + s(I * 64) + ";");
  e.line("const int nv = " + s(H) + " - j * 16 < 16 ? (int)(" + s(H) + " - j * 16) : 16;");
  e.line("int64_t b0 = 0;");
  e.line("for (; b0 + 4 <= B; b0 += 4) HONE_LSTM_TILE(4, 1);");
  e.line("switch (B - b0) {");
  e.line("  case 3: HONE_LSTM_TILE(3, 1); break;");
  e.line("  case 2: HONE_LSTM_TILE(2, 2); break;");
  e.line("  case 1: HONE_LSTM_TILE(1, 4); break;");
  e.line("  default: break;");
  e.line("}");
  e.close();
  e.close();
  e.end_parallel();
  e.line("#undef HONE_LSTM_TILE");
  e.line("const float* hl = hb + (S & 1) * B * " + s(Hp) + ";");
  e.open("for (int64_t b = 0; b < B; ++b)");
  e.line("if (Yh) memcpy(Yh + d * " + sd + " + b * " + sb + ", hl + b * " + s(Hp) +
         ", sizeof(float) * " + s(H) + ");");
  e.line("if (Yc) memcpy(Yc + d * " + sd + " + b * " + sb + ", cb + b * " + s(Hp) +
         ", sizeof(float) * " + s(H) + ");");
  e.close();
  e.close();
}

}  // namespace hone::aot
