// The cuda backend's FP8 kernels (precision=fp8, fp8.h): an activation
// quantized per call to e4m3 with a per-tensor scale computed on the device
// from its current largest magnitude ("current scaling"), in two launches:
// hone_fp8_amax, then hone_fp8_quantize, which also writes the scale that
// cuBLASLt reads through CUBLASLT_MATMUL_DESC_B_SCALE_POINTER. Nothing goes
// through the host, so the pair captures into a CUDA graph. Compiled into the
// fixed module after half_ops.cu (hone_half_value comes from prelude.cu).
// `src` names the input's type: 0 f32, 1 bf16, 2 f16.

// f32 to e4m3 (CUDA_R_8F_E4M3, the OCP "E4M3FN": sign, 4 exponent bits of
// bias 7, 3 mantissa bits, no infinities, NaN 0x7f / 0xff, largest finite
// 448, smallest subnormal 2^-9), rounding to nearest even, saturating as
// __NV_SATFINITE does (|f| >= 448 and infinities to +-448), NaN to NaN. Its
// host twin is fp8.cpp's e4m3_bits(), tested against known values; change
// both together.
__device__ __forceinline__ unsigned char hone_e4m3_bits(float f) {
  const unsigned u = __float_as_uint(f);
  const unsigned sign = (u >> 24) & 0x80u;
  const unsigned a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned char)(sign | 0x7fu);   // NaN
  if (a >= 0x43e00000u) return (unsigned char)(sign | 0x7eu);  // 448 and beyond: 448
  if (a >= 0x3c800000u) {
    // 2^-6 and above, normal: keep 3 of f32's 23 mantissa bits, ties to
    // even; a carry moves into the exponent (rebiased from 127 to 7).
    const unsigned r = (a + 0x7ffffu + ((a >> 20) & 1u)) >> 20;
    return (unsigned char)(sign | (r - (120u << 3)));
  }
  // Below 2^-6: m x 2^-9 with m the value's 24-bit significand shifted
  // right, ties to even (m = 8 is 2^-6, the smallest normal, bits 0x08).
  const unsigned e = a >> 23;
  if (e < 117u) return (unsigned char)sign;  // below 2^-10: zero
  const unsigned shift = 141u - e;           // 21 to 24
  const unsigned full = (a & 0x7fffffu) | 0x800000u;
  unsigned m = full >> shift;
  const unsigned rest = full & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (m & 1u))) ++m;
  return (unsigned char)(sign | m);
}

__device__ __forceinline__ float hone_fp8_source(const void* x, long long i, int src) {
  if (src == 0) return static_cast<const float*>(x)[i];
  return hone_half_value(static_cast<const unsigned short*>(x)[i], src == 1 ? 1 : 0);
}

// *amax = max(*amax, |x[i]|) over n elements, as float bits: non-negative
// floats order as their bits do, and a NaN (bits above infinity's) wins. The
// caller zeroes *amax first. Every thread reaches the warp reduction.
extern "C" __global__ void hone_fp8_amax(const void* x, long long n, int src, unsigned* amax) {
  unsigned best = 0u;
  HONE_FOR(i, n) {
    const unsigned b = __float_as_uint(hone_fp8_source(x, i, src)) & 0x7fffffffu;
    best = b > best ? b : best;
  }
  for (int o = 16; o > 0; o >>= 1) {
    const unsigned other = __shfl_xor_sync(0xffffffffu, best, o);
    best = other > best ? other : best;
  }
  if ((threadIdx.x & 31u) == 0u && best != 0u) atomicMax(amax, best);
}

// q[i] = e4m3(x[i] * 448 / amax), and *scale = amax / 448 (the factor that
// turns q back into x, which cuBLASLt applies); amax from hone_fp8_amax. A
// zero, tiny, infinite or NaN amax gives scale 1 (x as it is: zeros stay
// zero, a NaN stays NaN, an infinity saturates).
extern "C" __global__ void hone_fp8_quantize(const void* x, unsigned char* q, long long n, int src,
                                             const unsigned* amax, float* scale) {
  const float a = __uint_as_float(*amax);
  const bool scaled = a >= 1.0e-30f && a <= 3.0e38f;
  const float inv = scaled ? 448.0f / a : 1.0f;
  if (blockIdx.x == 0 && threadIdx.x == 0) *scale = scaled ? a / 448.0f : 1.0f;
  HONE_FOR(i, n) q[i] = hone_e4m3_bits(hone_fp8_source(x, i, src) * inv);
}
