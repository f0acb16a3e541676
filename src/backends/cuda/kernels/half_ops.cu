// The cuda backend's kernels over half-precision activations (storage.h):
// under precision=bf16/fp16 a block's values between ops may be bf16/f16,
// rank-4 ones channels-last [N, H, W, C]. Every kernel computes in f32 and
// rounds once when it stores (hone_half_bits); bf16 = 1 selects bf16, else
// f16. Compiled into the fixed module after prelude.cu, fixed.cu and
// tensor_ops.cu (HONE_INF comes from fixed.cu).

// x bf16/f16 to y f32, n elements in the same order (exact).
extern "C" __global__ void hone_from_half(const unsigned short* x, float* y, long long n,
                                         int bf16) {
  const bool vec = ((unsigned long long)x & 7) == 0 && ((unsigned long long)y & 15) == 0;
  const long long n4 = vec ? n / 4 : 0;
  HONE_FOR(i, n4) {
    const uint2 w = reinterpret_cast<const uint2*>(x)[i];
    reinterpret_cast<float4*>(y)[i] = make_float4(
        hone_half_value((unsigned short)(w.x & 0xffffu), bf16),
        hone_half_value((unsigned short)(w.x >> 16), bf16),
        hone_half_value((unsigned short)(w.y & 0xffffu), bf16),
        hone_half_value((unsigned short)(w.y >> 16), bf16));
  }
  HONE_FOR(i, n - 4 * n4) y[4 * n4 + i] = hone_half_value(x[4 * n4 + i], bf16);
}

// A conv's epilogue in place over its channels-last output y [.., C]:
// y = relu?(y + bias[c] (f32, may be null) + z (bf16/f16 like y, may be
// null)), one rounding. `vec`: C % 4 == 0 and y, z 8-byte aligned, so each
// step takes four channels of one position (8-byte loads and stores).
__device__ __forceinline__ float hone_bias_act(float v, const float* bias, int c,
                                               const unsigned short* z, long long i, int relu,
                                               int bf16) {
  if (bias) v += bias[c];
  if (z) v += hone_half_value(z[i], bf16);
  return relu && v < 0.0f ? 0.0f : v;  // NaN stays NaN
}
extern "C" __global__ void hone_half_bias_act(unsigned short* y, const float* bias,
                                             const unsigned short* z, long long n, int C,
                                             int relu, int vec, int bf16) {
  if (vec) {
    HONE_FOR(j, n / 4) {
      const long long i = j * 4;
      const int c = (int)(i % C);
      const uint2 w = reinterpret_cast<const uint2*>(y)[j];
      const unsigned short h[4] = {(unsigned short)(w.x & 0xffffu), (unsigned short)(w.x >> 16),
                                   (unsigned short)(w.y & 0xffffu), (unsigned short)(w.y >> 16)};
      unsigned r[4];
#pragma unroll
      for (int l = 0; l < 4; ++l)
        r[l] = hone_half_bits(
            hone_bias_act(hone_half_value(h[l], bf16), bias, c + l, z, i + l, relu, bf16), bf16);
      reinterpret_cast<uint2*>(y)[j] = make_uint2(r[0] | r[1] << 16, r[2] | r[3] << 16);
    }
    return;
  }
  HONE_FOR(i, n) {
    const int c = (int)(i % C);
    y[i] = hone_half_bits(hone_bias_act(hone_half_value(y[i], bf16), bias, c, z, i, relu, bf16),
                          bf16);
  }
}

// Max or average pooling over channels-last x [N, H, W, C] into y [N, OH,
// OW, C]: one thread per output, channels fastest (coalesced). PHE/PWE are
// the end pads; max keeps NaN, as hone_pool2d.
extern "C" __global__ void hone_pool2d_nhwc_half(const unsigned short* x, unsigned short* y,
                                                long long N, int C, int H, int W, int OH, int OW,
                                                int KH, int KW, int SH, int SW, int PH, int PW,
                                                int PHE, int PWE, int DH, int DW, int is_max,
                                                int include_pad, int bf16) {
  HONE_FOR(i, N * OH * OW * C) {
    const int c = (int)(i % C);
    const long long q = i / C;
    const int ow = (int)(q % OW);
    const int oh = (int)((q / OW) % OH);
    const long long img = q / ((long long)OW * OH);
    const unsigned short* p = x + img * H * W * C + c;
    const int hs = oh * SH - PH, ws = ow * SW - PW;
    float acc = is_max ? -HONE_INF : 0.0f;
    int count = 0;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = hs + kh * DH;
      if (ih < 0 || ih >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int iw = ws + kw * DW;
        if (iw < 0 || iw >= W) continue;
        const float v = hone_half_value(p[((long long)ih * W + iw) * C], bf16);
        acc = is_max ? (v > acc || v != v ? v : acc) : acc + v;
        ++count;
      }
    }
    if (!is_max) {
      if (include_pad) {
        const int he = min(hs + KH, H + PHE), we = min(ws + KW, W + PWE);
        count = (he - hs) * (we - ws);
      }
      acc = acc / (float)count;
    }
    y[i] = hone_half_bits(acc, bf16);
  }
}

// Global average (is_max 0) or max pooling of channels-last x [N, P, C] into
// y [N, C] (= [N, C, 1, 1] in either layout). Block (32, 16), one per image
// and tile of 32 channels (gridDim.x = N * ceil(C / 32)): threadIdx.x picks
// the channel (coalesced reads along C), threadIdx.y strides over the
// positions, and the 16 partial results meet in shared memory, in f32.
extern "C" __global__ void hone_global_pool_nhwc_half(const unsigned short* x, unsigned short* y,
                                                     long long N, int C, long long P, int is_max,
                                                     int bf16) {
  __shared__ float part[16][33];
  const int ct = (C + 31) / 32;
  for (long long t = blockIdx.x; t < N * ct; t += gridDim.x) {
    const long long img = t / ct;
    const int c = (int)(t % ct) * 32 + threadIdx.x;
    float acc = is_max ? -HONE_INF : 0.0f;
    if (c < C)
      for (long long p = threadIdx.y; p < P; p += 16) {
        const float v = hone_half_value(x[(img * P + p) * C + c], bf16);
        acc = is_max ? (v > acc || v != v ? v : acc) : acc + v;
      }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
      float r = part[0][threadIdx.x];
      for (int k = 1; k < 16; ++k) {
        const float v = part[k][threadIdx.x];
        r = is_max ? (v > r || v != v ? v : r) : r + v;
      }
      y[img * C + c] = hone_half_bits(is_max ? r : r / (float)P, bf16);
    }
    __syncthreads();
  }
}

// Concat of channels-last or row-major half tensors as a strided copy of
// 2-byte elements: y[dst] = x[src] over dims (HoneShape, as hone_strided_copy).
extern "C" __global__ void hone_strided_copy_half(const unsigned short* x, unsigned short* y,
                                                 HoneShape s, long long n) {
  HONE_FOR(i, n) {
    y[hone_offset(i, s.rank, s.dims, s.dst)] = x[hone_offset(i, s.rank, s.dims, s.src)];
  }
}

// Element i of an operand that is f32 (h 0) or bf16/f16 bits (h 1).
__device__ __forceinline__ float hone_ld_any(const void* p, long long i, int h, int bf16) {
  return h ? hone_half_value(reinterpret_cast<const unsigned short*>(p)[i], bf16)
           : reinterpret_cast<const float*>(p)[i];
}
// Elements 4*i4..4*i4+3 of such an operand (16-byte aligned if f32, 8 if half).
__device__ __forceinline__ float4 hone_ld4_any(const void* p, long long i4, int h, int bf16) {
  if (!h) return reinterpret_cast<const float4*>(p)[i4];
  const uint2 w = reinterpret_cast<const uint2*>(p)[i4];
  return make_float4(hone_half_value((unsigned short)(w.x & 0xffffu), bf16),
                     hone_half_value((unsigned short)(w.x >> 16), bf16),
                     hone_half_value((unsigned short)(w.y & 0xffffu), bf16),
                     hone_half_value((unsigned short)(w.y >> 16), bf16));
}
__device__ __forceinline__ void hone_st4_half(unsigned short* p, long long i4, float4 v, int bf16) {
  reinterpret_cast<uint2*>(p)[i4] =
      make_uint2((unsigned)hone_half_bits(v.x, bf16) | (unsigned)hone_half_bits(v.y, bf16) << 16,
                 (unsigned)hone_half_bits(v.z, bf16) | (unsigned)hone_half_bits(v.w, bf16) << 16);
}

// LayerNormalization over rows of r elements with half-precision activations
// (ops_half.cpp): x and z (the residual Add's other operand, may be null)
// each f32 or bf16/f16 (xh, zh); y and sum (x + z, may be null) bf16/f16;
// scale and bias (may be null) f32; mean and variance in f32 from the
// unrounded x + z; zb, yb: z read and y written through a swap of the two
// leading row axes (hone_swapped_row, fixed.cu), 0 for none. One block a row.
extern "C" __global__ void hone_layernorm_half(const void* x, const void* z, const float* scale,
                                              const float* bias, unsigned short* sum,
                                              unsigned short* y, long long rows, long long r,
                                              float eps, int xh, int zh, int bf16, long long zb,
                                              long long yb) {
  for (long long o = blockIdx.x; o < rows; o += gridDim.x) {
    const long long base = o * r, zbase = hone_swapped_row(o, rows, zb) * r;
    const long long ybase = hone_swapped_row(o, rows, yb) * r;
    float s = 0.0f;
    for (long long k = threadIdx.x; k < r; k += blockDim.x) {
      float v = hone_ld_any(x, base + k, xh, bf16);
      if (z) v += hone_ld_any(z, zbase + k, zh, bf16);
      if (sum) sum[base + k] = hone_half_bits(v, bf16);
      s += v;
    }
    const float mean = hone_block_reduce(s, 0) / (float)r;
    float q = 0.0f;
    for (long long k = threadIdx.x; k < r; k += blockDim.x) {
      float v = hone_ld_any(x, base + k, xh, bf16);
      if (z) v += hone_ld_any(z, zbase + k, zh, bf16);
      q += (v - mean) * (v - mean);
    }
    const float inv = 1.0f / sqrtf(hone_block_reduce(q, 0) / (float)r + eps);
    for (long long k = threadIdx.x; k < r; k += blockDim.x) {
      float v = hone_ld_any(x, base + k, xh, bf16);
      if (z) v += hone_ld_any(z, zbase + k, zh, bf16);
      y[ybase + k] = hone_half_bits((v - mean) * inv * scale[k] + (bias ? bias[k] : 0.0f), bf16);
    }
  }
}

// The same for rows of r <= 1024 elements, r a multiple of 4, f32 pointers
// 16-byte and half ones 8-byte aligned: one warp a row held in registers (as
// hone_layernorm_warp).
extern "C" __global__ void hone_layernorm_warp_half(const void* x, const void* z,
                                                   const float* scale, const float* bias,
                                                   unsigned short* sum, unsigned short* y,
                                                   long long rows, int r, float eps, int xh,
                                                   int zh, int bf16, long long zb, long long yb) {
  const int lane = threadIdx.x & 31, n4 = r >> 2;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  const float4* sc = reinterpret_cast<const float4*>(scale);
  const float4* bi = reinterpret_cast<const float4*>(bias);
  for (long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; row < rows;
       row += warps) {
    const long long base4 = row * n4, zbase4 = hone_swapped_row(row, rows, zb) * n4;
    const long long ybase4 = hone_swapped_row(row, rows, yb) * n4;
    float4 v[8];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int c = lane + 32 * k;
      v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (c < n4) {
        v[k] = hone_ld4_any(x, base4 + c, xh, bf16);
        if (z) {
          const float4 b = hone_ld4_any(z, zbase4 + c, zh, bf16);
          v[k].x += b.x; v[k].y += b.y; v[k].z += b.z; v[k].w += b.w;
        }
        if (sum) hone_st4_half(sum, base4 + c, v[k], bf16);
        s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
      }
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    const float mean = s / (float)r;
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (lane + 32 * k < n4) {
        const float a = v[k].x - mean, b = v[k].y - mean, c = v[k].z - mean, d = v[k].w - mean;
        q += (a * a + b * b) + (c * c + d * d);
      }
    for (int o = 16; o > 0; o >>= 1) q += __shfl_xor_sync(0xffffffffu, q, o);
    const float inv = 1.0f / sqrtf(q / (float)r + eps);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int c = lane + 32 * k;
      if (c < n4) {
        const float4 g = sc[c], h = bi ? bi[c] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        hone_st4_half(y, ybase4 + c,
                      make_float4((v[k].x - mean) * inv * g.x + h.x,
                                  (v[k].y - mean) * inv * g.y + h.y,
                                  (v[k].z - mean) * inv * g.z + h.z,
                                  (v[k].w - mean) * inv * g.w + h.w),
                      bf16);
      }
    }
  }
}
