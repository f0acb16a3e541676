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
