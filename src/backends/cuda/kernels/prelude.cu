
#define HONE_MAX_RANK 6
#define HONE_EW_MAX 8
struct HoneShape {
  int rank;
  long long dims[HONE_MAX_RANK];
  long long src[HONE_MAX_RANK];
  long long dst[HONE_MAX_RANK];
};
struct HoneEw {
  const float* in[HONE_EW_MAX];
  long long st[HONE_EW_MAX][HONE_MAX_RANK];
  long long dims[HONE_MAX_RANK];
  int rank;
  int flat[HONE_EW_MAX];
};
#define HONE_FOR(i, n) \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
       i += (long long)gridDim.x * blockDim.x)
__device__ __forceinline__ long long hone_offset(long long i, int rank, const long long* dims,
                                                 const long long* st) {
  long long off = 0;
  if (i <= 0x7fffffffLL) {
    // Index below 2^31, so every coordinate is too: 32-bit division is several
    // times cheaper than 64-bit, and transposes and broadcasts pay it per element.
    unsigned t = (unsigned)i;
#pragma unroll
    for (int d = HONE_MAX_RANK - 1; d >= 0; --d) {
      if (d < rank) {
        // t < 2^31: a larger dim holds all of t, as 2^31 does.
        const unsigned n = dims[d] > 0x7fffffffLL ? 0x80000000u : (unsigned)dims[d];
        const unsigned c = t % n;
        t /= n;
        off += (long long)c * st[d];
      }
    }
    return off;
  }
  for (int d = rank - 1; d >= 0; --d) {
    const long long c = i % dims[d];
    i /= dims[d];
    off += c * st[d];
  }
  return off;
}
__device__ __forceinline__ float hone_ld(const HoneEw& p, int k, long long i) {
  return p.flat[k] ? p.in[k][i] : p.in[k][hone_offset(i, p.rank, p.dims, p.st[k])];
}
// Four neighbouring elements i..i+3 of one innermost row (i % 4 == 0, the
// row's length a multiple of 4): one float4 load for an operand that is
// contiguous there, one broadcast scalar for one constant along it.
__device__ __forceinline__ float4 hone_ld4(const HoneEw& p, int k, long long i) {
  if (p.flat[k]) return *reinterpret_cast<const float4*>(p.in[k] + i);
  const long long off = hone_offset(i, p.rank, p.dims, p.st[k]);
  if (p.st[k][p.rank - 1] == 0) {
    const float v = p.in[k][off];
    return make_float4(v, v, v, v);
  }
  return *reinterpret_cast<const float4*>(p.in[k] + off);
}
__device__ __forceinline__ float hone_lane(const float4& v, int l) {
  return l == 0 ? v.x : l == 1 ? v.y : l == 2 ? v.z : v.w;
}
__device__ __forceinline__ float hone_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float hone_gelu(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
__device__ __forceinline__ float hone_gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float hone_softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }
// f32 to bf16 (bf16 = 1) or f16 storage, rounding to nearest even (NaN stays
// NaN, f16 overflow goes to infinity): the operands of reduced-precision GEMMs
// and cuDNN's NHWC convs, and an MLP unit's hidden activation.
__device__ __forceinline__ unsigned short hone_half_bits(float f, int bf16) {
  unsigned short h;
  if (bf16) {
    const unsigned u = __float_as_uint(f);
    h = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u)
                                        : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  } else {
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  }
  return h;
}
// And back (exact).
__device__ __forceinline__ float hone_half_value(unsigned short h, int bf16) {
  if (bf16) return __uint_as_float((unsigned)h << 16);
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
// Operand k of an element-wise chain over half-precision activations
// (storage.h): bf16/f16 when bit k of `halves` is set, else f32; the index
// arithmetic is hone_ld's, in elements either way.
__device__ __forceinline__ float hone_ldh(const HoneEw& p, int k, long long i, int halves,
                                          int bf16) {
  const long long off = p.flat[k] ? i : hone_offset(i, p.rank, p.dims, p.st[k]);
  return (halves >> k) & 1
             ? hone_half_value(reinterpret_cast<const unsigned short*>(p.in[k])[off], bf16)
             : p.in[k][off];
}
// The run's error word (run_errors.h): a kernel that meets what the reference
// refuses, and so cannot produce a result, sets it to `code` (kind << 32 |
// step + 1, run_error_code on the host); the first error wins and the host
// fails the call naming the step. Null where the launch has no word.
__device__ __forceinline__ void hone_flag(unsigned long long* err, unsigned long long code) {
  if (err != nullptr && *err == 0ull) atomicCAS(err, 0ull, code);
}
