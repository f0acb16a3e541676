#include "backends/cuda/attention_kernels.h"

#include <memory>
#include <mutex>

namespace hone::cuda {
namespace {

// O = softmax(Q·Kᵀ·scale + mask)·V per batch index, one pass over K and V
// with the running (online) softmax: no score matrix reaches memory.
//
// hone_attn_simt_D: f32 arithmetic throughout (strict fp32 and tf32 builds).
//   A block of 64 threads owns 64 query rows, one row per thread (q and the
//   output row in registers); key tiles of 32 keys are staged in shared
//   memory (K transposed so a float4 holds four keys' values of one dim) and
//   every thread walks the same tile, so shared reads are broadcasts.
// hone_attn_mma_D_bf16 / _f16: tensor cores (mma.sync m16n8k16, f32
//   accumulation). A block of 4 warps owns 64 query rows, 16 per warp; K and
//   V tiles of 64 keys are converted to bf16/f16 into shared memory (V
//   transposed); the scores stay in the mma accumulators, whose layout is the
//   A operand's for P·V, so the probabilities never leave registers. Row
//   maxima and sums are f32, reduced over the four lanes sharing a row.
const char* const kSource = R"CUDA(
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
  int pad;
};
#define HONE_NEG_INF (-__int_as_float(0x7f800000))

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
  const HoneAttnAt at = hone_attn_batch(p, blockIdx.x);
  const int row = blockIdx.y * ROWS + tid;
  const bool live = row < p.len_q;
  float q[D], o[D];
#pragma unroll
  for (int d = 0; d < D; ++d) {
    q[d] = live ? p.q[at.q + (long long)row * p.q_row + (long long)d * p.q_col] * p.scale : 0.0f;
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
          x += p.mask[at.m + (long long)row * p.mask_r + (long long)(j0 + j) * p.mask_c];
      }
      s[j] = x;
      mx = fmaxf(mx, x);
    }
    if (mx == HONE_NEG_INF) continue;  // every key so far masked out
    const float corr = expf(m - mx);
    l *= corr;
#pragma unroll
    for (int d = 0; d < D; ++d) o[d] *= corr;
#pragma unroll
    for (int j = 0; j < KT; ++j) {
      const float pj = expf(s[j] - mx);
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

template <int D, int BF16>
__device__ __forceinline__ void hone_attn_mma(const HoneAttn& p) {
  constexpr int KB = 64, ROWS = 64, THREADS = 128;
  constexpr int KS = D + 8;   // halves per K row in shared memory (padding: no bank conflicts)
  constexpr int VS = KB + 8;  // halves per row of the transposed V tile
  __shared__ __align__(16) unsigned short ks[KB * KS];
  __shared__ __align__(16) unsigned short vt[D * VS];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, t = lane & 3;
  const HoneAttnAt at = hone_attn_batch(p, blockIdx.x);
  const int r0 = blockIdx.y * ROWS + warp * 16 + g, r1 = r0 + 8;
  const bool live0 = r0 < p.len_q, live1 = r1 < p.len_q;
  // Q (scaled) as A fragments, straight from global memory.
  unsigned qa[D / 16][4];
  {
    const float* q0 = p.q + at.q + (long long)r0 * p.q_row;
    const float* q1 = p.q + at.q + (long long)r1 * p.q_row;
    const long long qc = p.q_col;
    const float s = p.scale;
#define HONE_Q(ptr, live, c) ((live) ? (ptr)[(long long)(c) * qc] * s : 0.f)
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
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  float m0 = HONE_NEG_INF, m1 = HONE_NEG_INF, l0 = 0.f, l1 = 0.f;
  for (int j0 = 0; j0 < p.len_k; j0 += KB) {
    __syncthreads();
    // K tile [KB][D] and V tile transposed [D][KB], two elements per step.
    for (int e = tid; e < KB * D / 2; e += THREADS) {
      const int j = (2 * e) / D, d = (2 * e) % D;
      const bool in = j0 + j < p.len_k;
      float k0 = 0.f, k1 = 0.f, v0 = 0.f, v1 = 0.f;
      if (in) {
        const float* kr = p.k + at.k + (long long)(j0 + j) * p.k_row;
        k0 = kr[(long long)d * p.k_col];
        k1 = kr[(long long)(d + 1) * p.k_col];
        const float* vr = p.v + at.v + (long long)(j0 + j) * p.v_row;
        v0 = vr[(long long)d * p.v_col];
        v1 = vr[(long long)(d + 1) * p.v_col];
      }
      *reinterpret_cast<unsigned*>(ks + j * KS + d) = hone_pack2<BF16>(k0, k1);
      const unsigned vv = hone_pack2<BF16>(v0, v1);
      vt[d * VS + j] = (unsigned short)(vv & 0xffffu);
      vt[(d + 1) * VS + j] = (unsigned short)(vv >> 16);
    }
    __syncthreads();
    // S = Q·Kᵀ for this warp's 16 rows and the tile's 64 keys.
    float s[KB / 8][4];
#pragma unroll
    for (int n = 0; n < KB / 8; ++n) {
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
      for (int kc = 0; kc < D / 16; ++kc) {
        const unsigned short* kr = ks + (n * 8 + g) * KS + kc * 16 + 2 * t;
        hone_mma<BF16>(s[n], qa[kc], *reinterpret_cast<const unsigned*>(kr),
                       *reinterpret_cast<const unsigned*>(kr + 8));
      }
    }
    // Mask, bounds, running maxima.
    float mx0 = m0, mx1 = m1;
#pragma unroll
    for (int n = 0; n < KB / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = j0 + n * 8 + 2 * t + (e & 1);
        const int r = e < 2 ? r0 : r1;
        const bool live = e < 2 ? live0 : live1;
        float x = HONE_NEG_INF;
        if (j < p.len_k) {
          x = s[n][e];
          if (p.has_mask && live) x += p.mask[at.m + (long long)r * p.mask_r + (long long)j * p.mask_c];
        }
        s[n][e] = x;
        if (e < 2) mx0 = fmaxf(mx0, x); else mx1 = fmaxf(mx1, x);
      }
    }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    // A row masked out so far keeps max -inf: its probabilities are 0.
    const float base0 = mx0 == HONE_NEG_INF ? 0.f : mx0, base1 = mx1 == HONE_NEG_INF ? 0.f : mx1;
    const float c0 = expf(m0 - base0), c1 = expf(m1 - base1);
    l0 *= c0;
    l1 *= c1;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      acc[n][0] *= c0; acc[n][1] *= c0;
      acc[n][2] *= c1; acc[n][3] *= c1;
    }
#pragma unroll
    for (int n = 0; n < KB / 8; ++n) {
      s[n][0] = expf(s[n][0] - base0);
      s[n][1] = expf(s[n][1] - base0);
      s[n][2] = expf(s[n][2] - base1);
      s[n][3] = expf(s[n][3] - base1);
      l0 += s[n][0] + s[n][1];
      l1 += s[n][2] + s[n][3];
    }
    m0 = mx0;
    m1 = mx1;
    // O += P·V: the score accumulators of two key groups are one A fragment.
#pragma unroll
    for (int kc = 0; kc < KB / 16; ++kc) {
      unsigned pa[4];
      pa[0] = hone_pack2<BF16>(s[2 * kc][0], s[2 * kc][1]);
      pa[1] = hone_pack2<BF16>(s[2 * kc][2], s[2 * kc][3]);
      pa[2] = hone_pack2<BF16>(s[2 * kc + 1][0], s[2 * kc + 1][1]);
      pa[3] = hone_pack2<BF16>(s[2 * kc + 1][2], s[2 * kc + 1][3]);
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        const unsigned short* vr = vt + (n * 8 + g) * VS + kc * 16 + 2 * t;
        hone_mma<BF16>(acc[n], pa, *reinterpret_cast<const unsigned*>(vr),
                       *reinterpret_cast<const unsigned*>(vr + 8));
      }
    }
  }
  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  float* o0 = p.o + at.o + (long long)r0 * p.o_row;
  float* o1 = p.o + at.o + (long long)r1 * p.o_row;
  const long long oc = p.o_col;
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    const long long c = n * 8 + 2 * t;
    if (live0) { o0[c * oc] = acc[n][0] / l0; o0[(c + 1) * oc] = acc[n][1] / l0; }
    if (live1) { o1[c * oc] = acc[n][2] / l1; o1[(c + 1) * oc] = acc[n][3] / l1; }
  }
}

extern "C" __global__ void __launch_bounds__(64) hone_attn_simt_32(HoneAttn p) { hone_attn_simt<32>(p); }
extern "C" __global__ void __launch_bounds__(64) hone_attn_simt_64(HoneAttn p) { hone_attn_simt<64>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_32_bf16(HoneAttn p) { hone_attn_mma<32, 1>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_64_bf16(HoneAttn p) { hone_attn_mma<64, 1>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_128_bf16(HoneAttn p) { hone_attn_mma<128, 1>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_32_f16(HoneAttn p) { hone_attn_mma<32, 0>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_64_f16(HoneAttn p) { hone_attn_mma<64, 0>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_128_f16(HoneAttn p) { hone_attn_mma<128, 0>(p); }
)CUDA";

}  // namespace

const std::string& attention_source() {
  static const std::string s = kSource;
  return s;
}

Result<const Module*> attention_module(const Driver& d) {
  static std::mutex mu;
  static std::unique_ptr<Module> module;
  std::lock_guard lock(mu);
  if (!module) {
    HONE_TRY(Module m, Module::compile(d, kSource, "hone_attention"));
    module = std::make_unique<Module>(std::move(m));
  }
  return module.get();
}

}  // namespace hone::cuda
