
#define HONE_ATTN_MAX_BATCH 4
struct HoneAttn {
  const float* q;
  const float* k;
  const float* v;
  const float* mask;
  float* o;
  long long bdims[HONE_ATTN_MAX_BATCH];
  long long sq[HONE_ATTN_MAX_BATCH];
  long long sk[HONE_ATTN_MAX_BATCH];
  long long sv[HONE_ATTN_MAX_BATCH];
  long long sm[HONE_ATTN_MAX_BATCH];
  long long so[HONE_ATTN_MAX_BATCH];
  long long mask_r, mask_c;
  long long q_row, q_col, k_row, k_col, v_row, v_col, o_row, o_col;
  int nb, len_q, len_k, has_mask;
  float scale;
  int vec;  // bit 0: K rows, bit 1: V rows load four elements at once; bit 2: O rows store two
};
#define HONE_NEG_INF (-__int_as_float(0x7f800000))
// Scores are kept in base 2 (Q's scale and the mask times log2(e)), so the
// softmax's exponentials are exp2f, one special-function instruction each.
#define HONE_LOG2E 1.4426950408889634f

// Query tiles of 64 rows per batch index. Block x is tile x % tiles of batch
// index x / tiles: the blocks sharing one head's K and V run side by side, so
// the later ones find K and V in L2.
__device__ __forceinline__ unsigned hone_attn_tiles(const HoneAttn& p) {
  return (unsigned)(p.len_q + 63) / 64u;
}

// Offsets of batch index b in q, k, v, mask and o (elements).
struct HoneAttnAt {
  long long q, k, v, m, o;
};
__device__ __forceinline__ HoneAttnAt hone_attn_batch(const HoneAttn& p, long long b) {
  HoneAttnAt at = {0, 0, 0, 0, 0};
  for (int d = p.nb - 1; d >= 0; --d) {
    const long long c = b % p.bdims[d];
    b /= p.bdims[d];
    at.q += c * p.sq[d];
    at.k += c * p.sk[d];
    at.v += c * p.sv[d];
    at.m += c * p.sm[d];
    at.o += c * p.so[d];
  }
  return at;
}

template <int D>
__device__ __forceinline__ void hone_attn_simt(const HoneAttn& p) {
  constexpr int KT = 32, ROWS = 64, KP = KT + 4;  // KP: padded row of the transposed K tile
  __shared__ __align__(16) float kt[D * KP];      // kt[d * KP + j]
  __shared__ __align__(16) float vs[KT * D];      // vs[j * D + d]
  const int tid = threadIdx.x;
  const HoneAttnAt at = hone_attn_batch(p, blockIdx.x / hone_attn_tiles(p));
  const int row = (blockIdx.x % hone_attn_tiles(p)) * ROWS + tid;
  const bool live = row < p.len_q;
  float q[D], o[D];
  const float qs = p.scale * HONE_LOG2E;
#pragma unroll
  for (int d = 0; d < D; ++d) {
    q[d] = live ? p.q[at.q + (long long)row * p.q_row + (long long)d * p.q_col] * qs : 0.0f;
    o[d] = 0.0f;
  }
  float m = HONE_NEG_INF, l = 0.0f;
  for (int j0 = 0; j0 < p.len_k; j0 += KT) {
    __syncthreads();
    for (int e = tid; e < KT * D; e += ROWS) {
      const int j = e / D, d = e % D;
      const bool in = j0 + j < p.len_k;
      kt[d * KP + j] = in ? p.k[at.k + (long long)(j0 + j) * p.k_row + (long long)d * p.k_col] : 0.0f;
      vs[j * D + d] = in ? p.v[at.v + (long long)(j0 + j) * p.v_row + (long long)d * p.v_col] : 0.0f;
    }
    __syncthreads();
    float s[KT];
#pragma unroll
    for (int j = 0; j < KT; ++j) s[j] = 0.0f;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const float qd = q[d];
      const float4* k4 = reinterpret_cast<const float4*>(kt + d * KP);
#pragma unroll
      for (int c = 0; c < KT / 4; ++c) {
        const float4 x = k4[c];
        s[4 * c] = fmaf(qd, x.x, s[4 * c]);
        s[4 * c + 1] = fmaf(qd, x.y, s[4 * c + 1]);
        s[4 * c + 2] = fmaf(qd, x.z, s[4 * c + 2]);
        s[4 * c + 3] = fmaf(qd, x.w, s[4 * c + 3]);
      }
    }
    float mx = m;
#pragma unroll
    for (int j = 0; j < KT; ++j) {
      float x = HONE_NEG_INF;
      if (j0 + j < p.len_k) {
        x = s[j];
        if (p.has_mask && live)
          x += p.mask[at.m + (long long)row * p.mask_r + (long long)(j0 + j) * p.mask_c] * HONE_LOG2E;
      }
      s[j] = x;
      mx = fmaxf(mx, x);
    }
    if (mx == HONE_NEG_INF) continue;  // every key so far masked out
    const float corr = exp2f(m - mx);
    l *= corr;
#pragma unroll
    for (int d = 0; d < D; ++d) o[d] *= corr;
#pragma unroll
    for (int j = 0; j < KT; ++j) {
      const float pj = exp2f(s[j] - mx);
      l += pj;
      const float4* v4 = reinterpret_cast<const float4*>(vs + j * D);
#pragma unroll
      for (int c = 0; c < D / 4; ++c) {
        const float4 x = v4[c];
        o[4 * c] = fmaf(pj, x.x, o[4 * c]);
        o[4 * c + 1] = fmaf(pj, x.y, o[4 * c + 1]);
        o[4 * c + 2] = fmaf(pj, x.z, o[4 * c + 2]);
        o[4 * c + 3] = fmaf(pj, x.w, o[4 * c + 3]);
      }
    }
    m = mx;
  }
  if (!live) return;
  float* out = p.o + at.o + (long long)row * p.o_row;
#pragma unroll
  for (int d = 0; d < D; ++d) out[(long long)d * p.o_col] = o[d] / l;
}

template <int BF16>
__device__ __forceinline__ void hone_mma(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  if (BF16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Elements d..d+3 of a row: one float4 where the rows are contiguous and
// 16-byte aligned (`vec`), else four strided loads.
__device__ __forceinline__ float4 hone_attn_row4(const float* row, int d, long long col, int vec) {
  if (vec) return *reinterpret_cast<const float4*>(row + d);
  return make_float4(row[(long long)d * col], row[(long long)(d + 1) * col],
                     row[(long long)(d + 2) * col], row[(long long)(d + 3) * col]);
}

// Two f32 as one register of two bf16 (BF16 != 0) or f16, `lo` in the low half.
template <int BF16>
__device__ __forceinline__ unsigned hone_pack2(float lo, float hi) {
  unsigned r;
  if (BF16)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// One bf16 (BF16 != 0) or f16 element as f32 (exact).
template <int BF16>
__device__ __forceinline__ float hone_attn_unhalf(unsigned short h) {
  if (BF16) return __uint_as_float((unsigned)h << 16);
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}

// The mma kernels' end: row sums reduced over the four lanes sharing a row,
// O = acc / l written for rows r0 and r0 + 8. O is f32 (HIO 0; float2 where
// its rows allow) or bf16/f16 (HIO 1, half-precision activations; two
// elements as one 4-byte store where its rows allow).
template <int D, int BF16, int HIO>
__device__ __forceinline__ void hone_attn_store(const HoneAttn& p, const HoneAttnAt& at,
                                                float (*acc)[4], float l0, float l1, int r0,
                                                bool live0, bool live1) {
  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  const int t = (threadIdx.x & 31) & 3;
  const long long oc = p.o_col;
  const float i0 = 1.0f / l0, i1 = 1.0f / l1;
  if (HIO) {
    unsigned short* o0 = reinterpret_cast<unsigned short*>(p.o) + at.o + (long long)r0 * p.o_row;
    unsigned short* o1 = o0 + 8 * p.o_row;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const long long c = n * 8 + 2 * t;
      const unsigned w0 = hone_pack2<BF16>(acc[n][0] * i0, acc[n][1] * i0);
      const unsigned w1 = hone_pack2<BF16>(acc[n][2] * i1, acc[n][3] * i1);
      if (p.vec & 4) {
        if (live0) *reinterpret_cast<unsigned*>(o0 + c) = w0;
        if (live1) *reinterpret_cast<unsigned*>(o1 + c) = w1;
      } else {
        if (live0) { o0[c * oc] = (unsigned short)(w0 & 0xffffu); o0[(c + 1) * oc] = (unsigned short)(w0 >> 16); }
        if (live1) { o1[c * oc] = (unsigned short)(w1 & 0xffffu); o1[(c + 1) * oc] = (unsigned short)(w1 >> 16); }
      }
    }
    return;
  }
  float* o0 = p.o + at.o + (long long)r0 * p.o_row;
  float* o1 = p.o + at.o + (long long)(r0 + 8) * p.o_row;
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    const long long c = n * 8 + 2 * t;
    if (p.vec & 4) {
      if (live0) *reinterpret_cast<float2*>(o0 + c) = make_float2(acc[n][0] * i0, acc[n][1] * i0);
      if (live1) *reinterpret_cast<float2*>(o1 + c) = make_float2(acc[n][2] * i1, acc[n][3] * i1);
    } else {
      if (live0) { o0[c * oc] = acc[n][0] * i0; o0[(c + 1) * oc] = acc[n][1] * i0; }
      if (live1) { o1[c * oc] = acc[n][2] * i1; o1[(c + 1) * oc] = acc[n][3] * i1; }
    }
  }
}

// 2^x on the special-function unit, subnormal results flushed to zero
// (probabilities that small are zero in the sums they join).
__device__ __forceinline__ float hone_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// One key tile's online-softmax step on score accumulators s (rows r0 and
// r0 + 8, keys j0 + n * 8 + 2t + {0, 1}): mask and bounds (CHECK; without
// it every key of the tile is in range and there is no mask), running maxima
// (m0, m1), rescaling of the sums and of acc; s becomes the probabilities.
template <int D, int KB, int CHECK>
__device__ __forceinline__ void hone_attn_softmax(const HoneAttn& p, const HoneAttnAt& at,
                                                  float (*s)[4], float (*acc)[4], int j0, int r0,
                                                  bool live0, bool live1, float& m0, float& m1,
                                                  float& l0, float& l1) {
  const int t = (threadIdx.x & 31) & 3;
  float mx0 = m0, mx1 = m1;
#pragma unroll
  for (int n = 0; n < KB / 8; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (CHECK) {
        const int j = j0 + n * 8 + 2 * t + (e & 1);
        const int r = e < 2 ? r0 : r0 + 8;
        const bool live = e < 2 ? live0 : live1;
        float x = HONE_NEG_INF;
        if (j < p.len_k) {
          x = s[n][e];
          if (p.has_mask && live)
            x += p.mask[at.m + (long long)r * p.mask_r + (long long)j * p.mask_c] * HONE_LOG2E;
        }
        s[n][e] = x;
      }
      if (e < 2) mx0 = fmaxf(mx0, s[n][e]); else mx1 = fmaxf(mx1, s[n][e]);
    }
  }
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
  // A row masked out so far keeps max -inf: its probabilities are 0.
  const float base0 = mx0 == HONE_NEG_INF ? 0.f : mx0, base1 = mx1 == HONE_NEG_INF ? 0.f : mx1;
  const float c0 = hone_exp2(m0 - base0), c1 = hone_exp2(m1 - base1);
  l0 *= c0;
  l1 *= c1;
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    acc[n][0] *= c0; acc[n][1] *= c0;
    acc[n][2] *= c1; acc[n][3] *= c1;
  }
#pragma unroll
  for (int n = 0; n < KB / 8; ++n) {
    s[n][0] = hone_exp2(s[n][0] - base0);
    s[n][1] = hone_exp2(s[n][1] - base0);
    s[n][2] = hone_exp2(s[n][2] - base1);
    s[n][3] = hone_exp2(s[n][3] - base1);
    l0 += s[n][0] + s[n][1];
    l1 += s[n][2] + s[n][3];
  }
  m0 = mx0;
  m1 = mx1;
}

// The softmax step for the tile at j0: without the checks when every key is
// in range and there is no mask.
template <int D, int KB>
__device__ __forceinline__ void hone_attn_softmax_at(const HoneAttn& p, const HoneAttnAt& at,
                                                     float (*s)[4], float (*acc)[4], int j0, int r0,
                                                     bool live0, bool live1, float& m0, float& m1,
                                                     float& l0, float& l1) {
  if (j0 + KB <= p.len_k && !p.has_mask)
    hone_attn_softmax<D, KB, 0>(p, at, s, acc, j0, r0, live0, live1, m0, m1, l0, l1);
  else
    hone_attn_softmax<D, KB, 1>(p, at, s, acc, j0, r0, live0, live1, m0, m1, l0, l1);
}

// Shared-memory address of `ptr` (the state space ldmatrix and cp.async take).
__device__ __forceinline__ unsigned hone_smem(const void* ptr) {
  return (unsigned)__cvta_generic_to_shared(ptr);
}

// Four 8x8 b16 matrices from shared memory, lanes 8i..8i+7 giving the row
// addresses of matrix i; r[i] is matrix i's row g, columns 2t and 2t + 1
// (TRANS: its column g, rows 2t and 2t + 1).
template <int TRANS>
__device__ __forceinline__ void hone_ldm4(unsigned* r, unsigned addr) {
  if (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}

// Halves per row of the mma kernels' K and V tiles: 16-byte aligned rows
// whose eight ldmatrix addresses fall in distinct banks.
#define HONE_ATTN_S(D) ((D) + 8)

// Elements d..d+3 of a bf16/f16 row as two words: one 8-byte load where the
// rows are contiguous and 8-byte aligned (`vec`), else four strided loads.
__device__ __forceinline__ uint2 hone_attn_row4h(const unsigned short* row, long long col,
                                                 int vec) {
  if (vec) return *reinterpret_cast<const uint2*>(row);
  return make_uint2((unsigned)row[0] | (unsigned)row[col] << 16,
                    (unsigned)row[2 * col] | (unsigned)row[3 * col] << 16);
}

// The element type of Q, K, V and O in memory: f32 (HIO 0) or bf16/f16 bits.
template <int HIO> struct HoneAttnElem { typedef float type; };
template <> struct HoneAttnElem<1> { typedef unsigned short type; };
template <int BF16>
__device__ __forceinline__ float hone_attn_elem(float x) { return x; }
template <int BF16>
__device__ __forceinline__ float hone_attn_elem(unsigned short h) {
  return hone_attn_unhalf<BF16>(h);
}

// Four elements of a row (d..d+3, `col` apart) as bf16/f16 (BF16) words:
// f32 ones rounded (float4 loads where VEC), half ones as they are.
template <int BF16, int VEC>
__device__ __forceinline__ uint2 hone_attn_load4(const float* row, long long col) {
  const float4 x = hone_attn_row4(row, 0, col, VEC);
  return make_uint2(hone_pack2<BF16>(x.x, x.y), hone_pack2<BF16>(x.z, x.w));
}
template <int BF16, int VEC>
__device__ __forceinline__ uint2 hone_attn_load4(const unsigned short* row, long long col) {
  return hone_attn_row4h(row, col, VEC);
}

// Q's rows r0 and r0 + 8 of this lane (scaled, in base 2) as the A fragments
// of the mma kernels, straight from global memory; rows past len_q are 0.
template <int D, int BF16, int HIO>
__device__ __forceinline__ void hone_attn_q_frags(const HoneAttn& p, const HoneAttnAt& at, int r0,
                                                  bool live0, bool live1, unsigned (*qa)[4]) {
  typedef typename HoneAttnElem<HIO>::type Elem;
  const int t = (threadIdx.x & 31) & 3;
  const Elem* q0 = reinterpret_cast<const Elem*>(p.q) + at.q + (long long)r0 * p.q_row;
  const Elem* q1 = q0 + 8 * p.q_row;
  const long long qc = p.q_col;
  const float s = p.scale * HONE_LOG2E;
#define HONE_Q(ptr, live, c) \
  ((live) ? hone_attn_elem<BF16>((ptr)[(long long)(c) * qc]) * s : 0.f)
#pragma unroll
  for (int kc = 0; kc < D / 16; ++kc) {
    const int c = kc * 16 + 2 * t;
    qa[kc][0] = hone_pack2<BF16>(HONE_Q(q0, live0, c), HONE_Q(q0, live0, c + 1));
    qa[kc][1] = hone_pack2<BF16>(HONE_Q(q1, live1, c), HONE_Q(q1, live1, c + 1));
    qa[kc][2] = hone_pack2<BF16>(HONE_Q(q0, live0, c + 8), HONE_Q(q0, live0, c + 9));
    qa[kc][3] = hone_pack2<BF16>(HONE_Q(q1, live1, c + 8), HONE_Q(q1, live1, c + 9));
  }
#undef HONE_Q
}

// ks, vs: the K and V tiles [64 keys][HONE_ATTN_S(D)] in shared memory.
// VEC: K's and V's rows are contiguous and 16-byte aligned (8-byte under HIO).
// HIO: Q, K, V and O are bf16/f16 in memory (half-precision activations, of
// the kernel's own type), so K and V go to shared memory as they are.
template <int D, int BF16, int VEC, int HIO>
__device__ __forceinline__ void hone_attn_mma_tiles(const HoneAttn& p, unsigned short* ks,
                                                    unsigned short* vs) {
  constexpr int KB = 64, ROWS = 64, THREADS = 128, S = HONE_ATTN_S(D);
  constexpr int PER = KB * D / 4 / THREADS;  // float4s of K (and of V) per thread per tile
  constexpr int BATCH = PER < 8 ? PER : 8;   // loads in flight together
  constexpr int TPR = D / 4, RSTEP = THREADS / TPR;  // threads per row; rows between a thread's
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2;
  const HoneAttnAt at = hone_attn_batch(p, blockIdx.x / hone_attn_tiles(p));
  const int r0 = (blockIdx.x % hone_attn_tiles(p)) * ROWS + warp * 16 + g, r1 = r0 + 8;
  const bool live0 = r0 < p.len_q, live1 = r1 < p.len_q;
  unsigned qa[D / 16][4];
  hone_attn_q_frags<D, BF16, HIO>(p, at, r0, live0, live1, qa);
  // This lane's ldmatrix row: matrix i = lane / 8, row lane % 8. K's four
  // matrices are 8 keys by dims +0, +8, +16, +24; V's are keys +0 and +8 by
  // dims +0, then keys +0 and +8 by dims +8.
  const int li = lane >> 3, lr = lane & 7;
  const unsigned kaddr = hone_smem(ks + lr * S + li * 8);
  const unsigned vaddr = hone_smem(vs + ((li & 1) * 8 + lr) * S + (li >> 1) * 8);
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  float m0 = HONE_NEG_INF, m1 = HONE_NEG_INF, l0 = 0.f, l1 = 0.f;
  // This thread loads rows jt + i * RSTEP of each tile, elements d4..d4 + 3.
  const int jt = tid / TPR, d4 = (tid % TPR) * 4;
  typedef typename HoneAttnElem<HIO>::type Elem;
  const Elem* kb = reinterpret_cast<const Elem*>(p.k) + at.k + (long long)jt * p.k_row +
                   (long long)d4 * p.k_col;
  const Elem* vb = reinterpret_cast<const Elem*>(p.v) + at.v + (long long)jt * p.v_row +
                   (long long)d4 * p.v_col;
  const long long kstep = (long long)RSTEP * p.k_row, vstep = (long long)RSTEP * p.v_row;
  for (int j0 = 0; j0 < p.len_k; j0 += KB) {
    // The tile's K and V rows, BATCH groups of four elements of each in
    // flight at once (the first batch issued before the barrier, so its
    // latency overlaps the other warps' work on the previous tile), stored
    // as bf16/f16 (f32 ones rounded, half ones as they are).
    const Elem* kt = kb + (long long)j0 * p.k_row;
    const Elem* vt = vb + (long long)j0 * p.v_row;
#pragma unroll
    for (int i0 = 0; i0 < PER; i0 += BATCH) {
      uint2 kx[BATCH], vx[BATCH];
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        kx[i] = vx[i] = make_uint2(0u, 0u);
        if (j0 + jt + (i0 + i) * RSTEP < p.len_k) {
          kx[i] = hone_attn_load4<BF16, VEC>(kt + (i0 + i) * kstep, p.k_col);
          vx[i] = hone_attn_load4<BF16, VEC>(vt + (i0 + i) * vstep, p.v_col);
        }
      }
      if (i0 == 0) __syncthreads();  // the previous tile is read
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        const int at_ = (jt + (i0 + i) * RSTEP) * S + d4;
        *reinterpret_cast<uint2*>(ks + at_) = kx[i];
        *reinterpret_cast<uint2*>(vs + at_) = vx[i];
      }
    }
    __syncthreads();
    // S = Q·Kᵀ for this warp's 16 rows and the tile's 64 keys: one ldmatrix
    // gives the B fragments of two 16-dim steps.
    float s[KB / 8][4];
#pragma unroll
    for (int n = 0; n < KB / 8; ++n) {
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
      for (int kc = 0; kc < D / 16; kc += 2) {
        unsigned b[4];
        hone_ldm4<0>(b, kaddr + (unsigned)((n * 8 * S + kc * 16) * 2));
        hone_mma<BF16>(s[n], qa[kc], b[0], b[1]);
        hone_mma<BF16>(s[n], qa[kc + 1], b[2], b[3]);
      }
    }
    hone_attn_softmax_at<D, KB>(p, at, s, acc, j0, r0, live0, live1, m0, m1, l0, l1);
    // O += P·V: the score accumulators of two key groups are one A fragment;
    // one transposing ldmatrix gives the B fragments of two 8-dim groups.
#pragma unroll
    for (int kc = 0; kc < KB / 16; ++kc) {
      unsigned pa[4];
      pa[0] = hone_pack2<BF16>(s[2 * kc][0], s[2 * kc][1]);
      pa[1] = hone_pack2<BF16>(s[2 * kc][2], s[2 * kc][3]);
      pa[2] = hone_pack2<BF16>(s[2 * kc + 1][0], s[2 * kc + 1][1]);
      pa[3] = hone_pack2<BF16>(s[2 * kc + 1][2], s[2 * kc + 1][3]);
#pragma unroll
      for (int n = 0; n < D / 8; n += 2) {
        unsigned b[4];
        hone_ldm4<1>(b, vaddr + (unsigned)((kc * 16 * S + n * 8) * 2));
        hone_mma<BF16>(acc[n], pa, b[0], b[1]);
        hone_mma<BF16>(acc[n + 1], pa, b[2], b[3]);
      }
    }
  }
  hone_attn_store<D, BF16, HIO>(p, at, acc, l0, l1, r0, live0, live1);
}

template <int D, int BF16, int HIO>
__device__ __forceinline__ void hone_attn_mma(const HoneAttn& p) {
  __shared__ __align__(16) unsigned short ks[64 * HONE_ATTN_S(D)];  // ks[key * S + d]
  __shared__ __align__(16) unsigned short vs[64 * HONE_ATTN_S(D)];  // vs[key * S + d]
  if ((p.vec & 3) == 3)
    hone_attn_mma_tiles<D, BF16, 1, HIO>(p, ks, vs);
  else
    hone_attn_mma_tiles<D, BF16, 0, HIO>(p, ks, vs);
}

// 16 bytes from global to shared memory without passing registers
// (cp.async, completed by cp.async.wait_all); `in` false: 16 zero bytes.
__device__ __forceinline__ void hone_cp16(void* dst, const void* src, bool in) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(hone_smem(dst)), "l"(src),
               "r"(in ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ unsigned hone_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ void hone_mma_tf32(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// x as a tf32 head h and the tf32 of the rest l (x ~ h + l to about 21 bits).
__device__ __forceinline__ void hone_split(float x, unsigned& h, unsigned& l) {
  h = hone_tf32(x);
  l = hone_tf32(x - __uint_as_float(h));
}

// c += a·b on tf32 tensor cores; SPLIT: the 3xTF32 product ah·bh + ah·bl + al·bh
// (small terms first), which keeps about f32's precision.
template <int SPLIT>
__device__ __forceinline__ void hone_mma_f32(float* c, const unsigned* ah, const unsigned* al,
                                             unsigned bh0, unsigned bh1, unsigned bl0, unsigned bl1) {
  if (SPLIT) {
    hone_mma_tf32(c, al, bh0, bh1);
    hone_mma_tf32(c, ah, bl0, bl1);
  }
  hone_mma_tf32(c, ah, bh0, bh1);
}

// f32 operands on tensor cores (mma.sync m16n8k8 tf32, f32 accumulation):
// SPLIT = 0 rounds Q, K, V and the probabilities to tf32 (precision=tf32);
// SPLIT = 1 runs each product as 3xTF32, close to f32 FMA arithmetic (strict
// fp32). A block of 4 warps owns 64 query rows, 16 per warp; K and V tiles of
// 64 keys stay f32 in shared memory (rows padded so fragment reads hit 32
// banks). P·V takes the score accumulators as its A fragment with the keys of
// each group of 8 permuted (accumulator column 2t + i is A column t + 4i, and
// V is read in the same order), so the probabilities never leave registers.
template <int D, int SPLIT>
__device__ __forceinline__ void hone_attn_tf32(const HoneAttn& p) {
  constexpr int KB = 64, ROWS = 64, THREADS = 128;
  constexpr int KS = D + 4, VS = D + 4;  // floats per row of the K and V tiles
  __shared__ __align__(16) float ks[KB * KS];
  __shared__ __align__(16) float vs[KB * VS];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, t = lane & 3;
  const HoneAttnAt at = hone_attn_batch(p, blockIdx.x / hone_attn_tiles(p));
  const int r0 = (blockIdx.x % hone_attn_tiles(p)) * ROWS + warp * 16 + g, r1 = r0 + 8;
  const bool live0 = r0 < p.len_q, live1 = r1 < p.len_q;
  // Q (scaled) as A fragments (head and tail under SPLIT), straight from global memory.
  unsigned qh[D / 8][4], ql[D / 8][4];
  {
    const float* q0 = p.q + at.q + (long long)r0 * p.q_row;
    const float* q1 = p.q + at.q + (long long)r1 * p.q_row;
    const long long qc = p.q_col;
    const float sc = p.scale * HONE_LOG2E;
#pragma unroll
    for (int kc = 0; kc < D / 8; ++kc) {
      const int c = kc * 8 + t;
      const float x[4] = {live0 ? q0[(long long)c * qc] * sc : 0.f,
                          live1 ? q1[(long long)c * qc] * sc : 0.f,
                          live0 ? q0[(long long)(c + 4) * qc] * sc : 0.f,
                          live1 ? q1[(long long)(c + 4) * qc] * sc : 0.f};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        if (SPLIT) hone_split(x[i], qh[kc][i], ql[kc][i]);
        else { qh[kc][i] = hone_tf32(x[i]); ql[kc][i] = 0u; }
      }
    }
  }
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  float m0 = HONE_NEG_INF, m1 = HONE_NEG_INF, l0 = 0.f, l1 = 0.f;
  for (int j0 = 0; j0 < p.len_k; j0 += KB) {
    __syncthreads();
    if ((p.vec & 3) == 3) {
      // Rows of 16-byte vectors: every copy of the tile in flight at once
      // (cp.async), rows past len_k zero-filled.
#pragma unroll
      for (int i = 0; i < KB * D / 4 / THREADS; ++i) {
        const int e = tid + i * THREADS, j = e / (D / 4), d = (e % (D / 4)) * 4;
        const bool in = j0 + j < p.len_k;
        const long long r = in ? j0 + j : 0;
        hone_cp16(ks + j * KS + d, p.k + at.k + r * p.k_row + d, in);
        hone_cp16(vs + j * VS + d, p.v + at.v + r * p.v_row + d, in);
      }
      asm volatile("cp.async.wait_all;" ::: "memory");
    } else {
      for (int e = tid; e < KB * D / 4; e += THREADS) {
        const int j = e / (D / 4), d = (e % (D / 4)) * 4;
        float4 kx = make_float4(0.f, 0.f, 0.f, 0.f), vx = kx;
        if (j0 + j < p.len_k) {
          kx = hone_attn_row4(p.k + at.k + (long long)(j0 + j) * p.k_row, d, p.k_col, p.vec & 1);
          vx = hone_attn_row4(p.v + at.v + (long long)(j0 + j) * p.v_row, d, p.v_col, p.vec & 2);
        }
        *reinterpret_cast<float4*>(ks + j * KS + d) = kx;
        *reinterpret_cast<float4*>(vs + j * VS + d) = vx;
      }
    }
    __syncthreads();
    // S = Q·Kᵀ for this warp's 16 rows and the tile's 64 keys.
    float s[KB / 8][4];
#pragma unroll
    for (int n = 0; n < KB / 8; ++n) {
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
      for (int kc = 0; kc < D / 8; ++kc) {
        const float* kr = ks + (n * 8 + g) * KS + kc * 8 + t;
        unsigned bh0, bh1, bl0 = 0u, bl1 = 0u;
        if (SPLIT) {
          hone_split(kr[0], bh0, bl0);
          hone_split(kr[4], bh1, bl1);
        } else {
          bh0 = hone_tf32(kr[0]);
          bh1 = hone_tf32(kr[4]);
        }
        hone_mma_f32<SPLIT>(s[n], qh[kc], ql[kc], bh0, bh1, bl0, bl1);
      }
    }
    hone_attn_softmax_at<D, KB>(p, at, s, acc, j0, r0, live0, live1, m0, m1, l0, l1);
    // O += P·V, one group of 8 keys at a time.
#pragma unroll
    for (int n = 0; n < KB / 8; ++n) {
      unsigned ph[4], pl[4];
      const float x[4] = {s[n][0], s[n][2], s[n][1], s[n][3]};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        if (SPLIT) hone_split(x[i], ph[i], pl[i]);
        else { ph[i] = hone_tf32(x[i]); pl[i] = 0u; }
      }
      const float* v0 = vs + (n * 8 + 2 * t) * VS + g;
#pragma unroll
      for (int dn = 0; dn < D / 8; ++dn) {
        unsigned bh0, bh1, bl0 = 0u, bl1 = 0u;
        if (SPLIT) {
          hone_split(v0[dn * 8], bh0, bl0);
          hone_split(v0[VS + dn * 8], bh1, bl1);
        } else {
          bh0 = hone_tf32(v0[dn * 8]);
          bh1 = hone_tf32(v0[VS + dn * 8]);
        }
        hone_mma_f32<SPLIT>(acc[dn], ph, pl, bh0, bh1, bl0, bl1);
      }
    }
  }
  hone_attn_store<D, 0, 0>(p, at, acc, l0, l1, r0, live0, live1);
}
