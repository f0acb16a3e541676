
#define HONE_INF __int_as_float(0x7f800000)

// y[dst] = x[src] over dims: Transpose, Concat slices, bias broadcasts.
extern "C" __global__ void hone_strided_copy(const float* x, float* y, HoneShape s, long long n) {
  HONE_FOR(i, n) y[hone_offset(i, s.rank, s.dims, s.dst)] = x[hone_offset(i, s.rank, s.dims, s.src)];
}

// Copies whose innermost dim is contiguous on both sides (Transposes that keep
// it, Concat slices): blockDim.y rows per block, blockDim.x threads along a
// row, so the strided index arithmetic of `s` (the outer dims) is paid once
// per row, not per element. `vec`: rows move as float4 (16-byte aligned).
extern "C" __global__ void hone_copy_rows(const float* x, float* y, HoneShape s, long long rows,
                                          int L, int vec) {
  for (long long r = blockIdx.x * (long long)blockDim.y + threadIdx.y; r < rows;
       r += (long long)gridDim.x * blockDim.y) {
    const long long so = hone_offset(r, s.rank, s.dims, s.src);
    const long long d0 = hone_offset(r, s.rank, s.dims, s.dst);
    if (vec) {
      const float4* xs = reinterpret_cast<const float4*>(x + so);
      float4* yd = reinterpret_cast<float4*>(y + d0);
      for (int j = threadIdx.x; j < L / 4; j += blockDim.x) yd[j] = xs[j];
    } else {
      for (int j = threadIdx.x; j < L; j += blockDim.x) y[d0 + j] = x[so + j];
    }
  }
}

// Transposes that move the innermost dim: batched 2-D tiles through shared
// memory, read along the source's contiguous dim (length A, destination stride
// da) and written along the destination's (length B, source stride sb), both
// coalesced. Block (32, 8); grid (B tiles, A tiles, batches); `s`: batch dims.
extern "C" __global__ void hone_transpose_tiles(const float* x, float* y, HoneShape s,
                                                long long batches, int A, int B, long long da,
                                                long long sb) {
  __shared__ float tile[32][33];
  const int a0 = blockIdx.y * 32, b0 = blockIdx.x * 32;
  for (long long bt = blockIdx.z; bt < batches; bt += gridDim.z) {
    const long long so = hone_offset(bt, s.rank, s.dims, s.src);
    const long long d0 = hone_offset(bt, s.rank, s.dims, s.dst);
    for (int j = threadIdx.y; j < 32; j += 8) {
      const int a = a0 + threadIdx.x, b = b0 + j;
      if (a < A && b < B) tile[j][threadIdx.x] = x[so + a + b * sb];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8) {
      const int a = a0 + j, b = b0 + threadIdx.x;
      if (a < A && b < B) y[d0 + a * da + b] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

extern "C" __global__ void hone_to_half(const float* x, unsigned short* y, long long n, int bf16) {
  // Four elements a step (16-byte loads, 8-byte stores) where both pointers allow.
  const bool vec = ((unsigned long long)x & 15) == 0 && ((unsigned long long)y & 7) == 0;
  const long long n4 = vec ? n / 4 : 0;
  HONE_FOR(i, n4) {
    const float4 v = reinterpret_cast<const float4*>(x)[i];
    reinterpret_cast<uint2*>(y)[i] =
        make_uint2(hone_half_bits(v.x, bf16) | (unsigned)hone_half_bits(v.y, bf16) << 16,
                   hone_half_bits(v.z, bf16) | (unsigned)hone_half_bits(v.w, bf16) << 16);
  }
  HONE_FOR(i, n - 4 * n4) y[4 * n4 + i] = hone_half_bits(x[4 * n4 + i], bf16);
}

// The NHWC cuDNN conv under bf16/fp16 (ops_conv.cpp) reads its input as
// bf16/f16 [N, P, C] (P = H*W) and writes [N, P, M]; hone's tensors are f32
// [N, C, P]. Both moves are batched 2-D transposes, done in 32x32 tiles
// through shared memory (f32, padded against bank conflicts) so that reads and
// writes are both coalesced: block (32, 8), each thread 4 rows of a tile; the
// tiles of all images are one grid-stride range over blockIdx.x (so gridDim.y
// and z stay 1 whatever N and the channel count). The tile loop's bounds
// depend on blockIdx only: every thread reaches each __syncthreads.
// Channel counts below 16 would leave most of each tile idle (a first conv's
// 3 channels): there the *_rows kernels give one thread per element, in the
// destination's order (reads strided by the few channels, cached).

// Tile t of the walk over [N][channel tiles][position tiles] of 32 x 32:
// its image, first channel and first position.
struct HoneTile {
  long long n, p0;
  int c0;
};
__device__ __forceinline__ HoneTile hone_tile(long long t, long long pt, long long ct) {
  const long long rest = t / pt;
  return {rest / ct, (t % pt) * 32, (int)(rest % ct) * 32};
}

// x f32 [N, C, P] to y bf16/f16 [N, P, C]: a conv's input, and its weights
// [M, C, KH*KW] -> [M, KH*KW, C] (KRSC) when they are no constant.
extern "C" __global__ void hone_to_nhwc_half(const float* x, unsigned short* y, long long N, int C,
                                             long long P, int bf16) {
  __shared__ float tile[32][33];  // [channel][position]
  const long long pt = (P + 31) / 32, ct = (C + 31) / 32, tiles = N * ct * pt;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const auto [n, p0, c0] = hone_tile(t, pt, ct);
    const float* xn = x + n * C * P;
    unsigned short* yn = y + n * P * C;
    for (int j = threadIdx.y; j < 32; j += 8) {  // along P: coalesced f32 reads
      const int c = c0 + j;
      const long long p = p0 + threadIdx.x;
      if (c < C && p < P) tile[j][threadIdx.x] = xn[(long long)c * P + p];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8) {  // along C: coalesced 2-byte writes
      const long long p = p0 + j;
      const int c = c0 + threadIdx.x;
      if (c < C && p < P) yn[p * C + c] = hone_half_bits(tile[threadIdx.x][j], bf16);
    }
    __syncthreads();
  }
}
extern "C" __global__ void hone_to_nhwc_half_rows(const float* x, unsigned short* y, long long n,
                                                  int C, long long P, int bf16) {
  HONE_FOR(i, n) {  // i indexes y [N, P, C]
    const long long np = i / C, p = np % P, img = np / P;
    const int c = (int)(i - np * C);
    y[i] = hone_half_bits(x[(img * C + c) * P + p], bf16);
  }
}

// The conv's epilogue on its way back: out f32 [N, M, P] = relu?(yh [N, P, M]
// + bias[m] (may be null) + z [N, M, P] (may be null)); NaN stays NaN through
// the Relu, as in hone_conv_epilogue.
__device__ __forceinline__ float hone_nhwc_out(float v, const float* bias, const float* z, int m,
                                               long long o, int relu) {
  if (bias) v += bias[m];
  if (z) v += z[o];
  return relu && v < 0.0f ? 0.0f : v;
}
extern "C" __global__ void hone_nhwc_half_epilogue(const unsigned short* yh, float* out,
                                                   const float* bias, const float* z, long long N,
                                                   int M, long long P, int relu, int bf16) {
  __shared__ float tile[32][33];  // [position][channel]
  const long long pt = (P + 31) / 32, mt = (M + 31) / 32, tiles = N * mt * pt;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const auto [n, p0, m0] = hone_tile(t, pt, mt);
    const unsigned short* yn = yh + n * P * M;
    for (int j = threadIdx.y; j < 32; j += 8) {  // along M: coalesced 2-byte reads
      const long long p = p0 + j;
      const int m = m0 + threadIdx.x;
      if (m < M && p < P) tile[j][threadIdx.x] = hone_half_value(yn[p * M + m], bf16);
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += 8) {  // along P: coalesced f32 reads of z, writes
      const int m = m0 + j;
      const long long p = p0 + threadIdx.x;
      if (m < M && p < P) {
        const long long o = (n * M + m) * P + p;
        out[o] = hone_nhwc_out(tile[threadIdx.x][j], bias, z, m, o, relu);
      }
    }
    __syncthreads();
  }
}
extern "C" __global__ void hone_nhwc_half_epilogue_rows(const unsigned short* yh, float* out,
                                                        const float* bias, const float* z,
                                                        long long n, int M, long long P, int relu,
                                                        int bf16) {
  HONE_FOR(i, n) {  // i indexes out [N, M, P]
    const long long nm = i / P, p = i - nm * P, img = nm / M;
    const int m = (int)(nm - img * M);
    out[i] = hone_nhwc_out(hone_half_value(yh[(img * P + p) * M + m], bf16), bias, z, m, i, relu);
  }
}

// Images [imgs, C, H, W] to columns [imgs, C*KH*KW, OH*OW], rows in the weights' order.
extern "C" __global__ void hone_im2col(const float* x, float* col, long long imgs, int C, int H,
                                       int W, int KH, int KW, int SH, int SW, int PH, int PW,
                                       int DH, int DW, int OH, int OW) {
  const long long per = (long long)C * KH * KW * OH * OW;
  HONE_FOR(i, imgs * per) {
    long long t = i;
    const int ow = t % OW; t /= OW;
    const int oh = t % OH; t /= OH;
    const int kw = t % KW; t /= KW;
    const int kh = t % KH; t /= KH;
    const long long c = t % C, img = t / C;
    const int ih = oh * SH - PH + kh * DH, iw = ow * SW - PW + kw * DW;
    col[i] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? x[((img * C + c) * H + ih) * W + iw] : 0.0f;
  }
}

// A conv's epilogue over y [N, M, P]: y += bias[m] (may be null) + z (may be null), then
// Relu if asked.
extern "C" __global__ void hone_conv_epilogue(float* y, const float* bias, const float* z,
                                              long long n, long long P, int M, int relu) {
  HONE_FOR(i, n) {
    float v = y[i];
    if (bias) v += bias[(i / P) % M];
    if (z) v += z[i];
    y[i] = relu && v < 0.0f ? 0.0f : v;  // NaN stays NaN, as the Relu chain
  }
}

// Depthwise conv (group == C == M), bias may be null, Relu fused when `relu`.
// blockIdx.y (stepping by gridDim.y) picks an [n, c] plane and its block
// the plane's outputs, so every index below is 32-bit arithmetic (64-bit
// division costs a hundred instructions a thread); the channel's taps sit
// in shared memory (KH * KW <= 256, checked when planned).
extern "C" __global__ void hone_conv_dw(const float* x, const float* w, const float* b, float* y,
                                        long long NC, int C, int H, int W, int KH, int KW, int SH,
                                        int SW, int PH, int PW, int DH, int DW, int OH, int OW,
                                        int relu) {
  __shared__ float taps[256];
  const int P = OH * OW, T = KH * KW;
  for (long long nc = blockIdx.y; nc < NC; nc += gridDim.y) {
    const int c = (int)(nc % C);
    __syncthreads();  // the previous plane's taps are read
    for (int t = threadIdx.x; t < T; t += blockDim.x) taps[t] = w[c * T + t];
    __syncthreads();
    const float bias = b ? b[c] : 0.0f;
    const float* p = x + nc * H * W;
    float* q = y + nc * P;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < P; i += gridDim.x * blockDim.x) {
      const int oh = i / OW, ow = i - oh * OW;
      const int hs = oh * SH - PH, ws = ow * SW - PW;
      float acc = bias;
      for (int kh = 0; kh < KH; ++kh) {
        const int ih = hs + kh * DH;
        if (ih < 0 || ih >= H) continue;
        const float* row = p + ih * W;
        for (int kw = 0; kw < KW; ++kw) {
          const int iw = ws + kw * DW;
          if (iw >= 0 && iw < W) acc += __ldg(row + iw) * taps[kh * KW + kw];
        }
      }
      q[i] = relu && acc < 0.0f ? 0.0f : acc;  // NaN stays NaN, as the Relu chain
    }
  }
}

// The common depthwise geometries (K x K taps at stride S, no dilation):
// four outputs along a row a thread, so a row's 3S + K inputs are loaded
// once for the four (3 x 3 at stride 1: 6 loads where four threads load 12),
// all in registers (K and S known when compiled). Same sums in the same order
// as hone_conv_dw; a padding input reads as 0.
template <int K, int S>
__device__ void hone_dw_rows4(const float* x, const float* w, const float* b, float* y,
                              long long NC, int C, int H, int W, int PH, int PW, int OH, int OW,
                              int relu) {
  __shared__ float taps[K * K];
  const int OW4 = (OW + 3) >> 2, P4 = OH * OW4;
  for (long long nc = blockIdx.y; nc < NC; nc += gridDim.y) {
    const int c = (int)(nc % C);
    __syncthreads();
    for (int t = threadIdx.x; t < K * K; t += blockDim.x) taps[t] = w[c * K * K + t];
    __syncthreads();
    const float bias = b ? b[c] : 0.0f;
    const float* p = x + nc * H * W;
    float* q = y + nc * OH * OW;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < P4; i += gridDim.x * blockDim.x) {
      const int oh = i / OW4, ow0 = (i - oh * OW4) * 4;
      const int ws = ow0 * S - PW;
      float acc[4] = {bias, bias, bias, bias};
#pragma unroll
      for (int kh = 0; kh < K; ++kh) {
        const int ih = oh * S - PH + kh;
        if (ih < 0 || ih >= H) continue;
        const float* row = p + ih * W;
        float in[3 * S + K];
#pragma unroll
        for (int t = 0; t < 3 * S + K; ++t) {
          const int iw = ws + t;
          in[t] = iw >= 0 && iw < W ? __ldg(row + iw) : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int kw = 0; kw < K; ++kw) acc[j] += in[j * S + kw] * taps[kh * K + kw];
      }
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (ow0 + j < OW) q[oh * OW + ow0 + j] = relu && acc[j] < 0.0f ? 0.0f : acc[j];
    }
  }
}

#define HONE_DW_ROWS4(K, S)                                                                  \
  extern "C" __global__ void hone_conv_dw_##K##_##S(                                         \
      const float* x, const float* w, const float* b, float* y, long long NC, int C, int H,  \
      int W, int PH, int PW, int OH, int OW, int relu) {                                     \
    hone_dw_rows4<K, S>(x, w, b, y, NC, C, H, W, PH, PW, OH, OW, relu);                      \
  }
HONE_DW_ROWS4(3, 1)
HONE_DW_ROWS4(3, 2)
HONE_DW_ROWS4(5, 1)
HONE_DW_ROWS4(5, 2)
HONE_DW_ROWS4(7, 1)
HONE_DW_ROWS4(7, 2)

// Max or average pooling over [NC, H, W]; PHE/PWE are the end pads.
extern "C" __global__ void hone_pool2d(const float* x, float* y, long long NC, int H, int W,
                                       int OH, int OW, int KH, int KW, int SH, int SW, int PH,
                                       int PW, int PHE, int PWE, int DH, int DW, int is_max,
                                       int include_pad) {
  HONE_FOR(i, NC * OH * OW) {
    const int ow = i % OW;
    const int oh = (i / OW) % OH;
    const float* p = x + (i / ((long long)OW * OH)) * H * W;
    const int hs = oh * SH - PH, ws = ow * SW - PW;
    float acc = is_max ? -HONE_INF : 0.0f;
    int count = 0;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = hs + kh * DH;
      if (ih < 0 || ih >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int iw = ws + kw * DW;
        if (iw < 0 || iw >= W) continue;
        const float v = p[ih * W + iw];
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
    y[i] = acc;
  }
}

// How block and warp reductions combine: 0 add, 1 max, 2 min, 3 multiply
// (a bool argument reads as 0 add, 1 max); hone_identity is what a lane
// without elements holds.
__device__ __forceinline__ float hone_combine(float a, float b, int kind) {
  return kind == 0 ? a + b : kind == 1 ? fmaxf(a, b) : kind == 2 ? fminf(a, b) : a * b;
}
__device__ __forceinline__ float hone_identity(int kind) {
  return kind == 0 ? 0.0f : kind == 1 ? -HONE_INF : kind == 2 ? HONE_INF : 1.0f;
}

// Combines v over a block of 256 threads (kind as hone_combine); every
// thread gets the result.
__device__ float hone_block_reduce(float v, int kind) {
  __shared__ float part[32];
  __shared__ float result;
  for (int o = 16; o > 0; o >>= 1) v = hone_combine(v, __shfl_down_sync(0xffffffffu, v, o), kind);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : hone_identity(kind);
    for (int o = 16; o > 0; o >>= 1)
      v = hone_combine(v, __shfl_down_sync(0xffffffffu, v, o), kind);
    if (threadIdx.x == 0) result = v;
  }
  __syncthreads();
  v = result;
  __syncthreads();  // part and result may be reused by the next call
  return v;
}

// The reductions (ops_misc.cpp's op codes): 0 sum, 1 mean, 2 max, 3 min,
// 4 prod, 5 L1, 6 L2, 7 sum of squares, 8 log-sum-exp, 9 log-sum. Each maps an element
// (pre; m is the row's max, for log-sum-exp), combines (kind) and finishes
// the row (post).
__device__ __forceinline__ int hone_reduce_kind(int op) {
  return op == 2 ? 1 : op == 3 ? 2 : op == 4 ? 3 : 0;
}
__device__ __forceinline__ float hone_reduce_pre(float u, int op, float m) {
  return op == 5 ? fabsf(u) : (op == 6 || op == 7) ? u * u : op == 8 ? expf(u - m) : u;
}
__device__ __forceinline__ float hone_reduce_post(float v, int op, long long r, float m) {
  if (op == 1) return v / (float)r;
  if (op == 6) return sqrtf(v);
  if (op == 9) return logf(v);
  // Rows of -inf only, or with a +inf: the max itself.
  if (op == 8) return m == HONE_INF || m == -HONE_INF ? m : m + logf(v);
  return v;
}

// x viewed as [outer, r, inner]; y[outer, inner] = the reduction `op` over r
// (hone_reduce_pre). One block per output: the loop bounds are uniform
// across the block.
extern "C" __global__ void hone_reduce(const float* x, float* y, long long outer, long long r,
                                       long long inner, int op) {
  const int kind = hone_reduce_kind(op);
  for (long long o = blockIdx.x; o < outer * inner; o += gridDim.x) {
    const float* p = x + (o / inner) * r * inner + o % inner;
    float m = 0.0f;
    if (op == 8) {  // log-sum-exp: the max first, so that exp cannot overflow
      float v = -HONE_INF;
      for (long long k = threadIdx.x; k < r; k += blockDim.x) v = fmaxf(v, p[k * inner]);
      m = hone_block_reduce(v, 1);
    }
    float v = hone_identity(kind);
    for (long long k = threadIdx.x; k < r; k += blockDim.x)
      v = hone_combine(v, hone_reduce_pre(p[k * inner], op, m), kind);
    v = hone_block_reduce(v, kind);
    if (threadIdx.x == 0) y[o] = hone_reduce_post(v, op, r, m);
  }
}

// The reduction `op` (any but log-sum-exp, which takes hone_reduce) of each
// contiguous row of r floats, one warp per row: global pools' rows (r of 49
// to a few thousand, thousands of them) need no block barrier; float4 loads
// when `vec` (r % 4 == 0 and x 16-byte aligned).
extern "C" __global__ void hone_reduce_rows(const float* x, float* y, long long rows, long long r,
                                            int op, int vec) {
  const int lane = threadIdx.x & 31, kind = hone_reduce_kind(op);
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows;
       row += warps) {
    const float* p = x + row * r;
    float v = hone_identity(kind);
    if (vec) {
      const float4* p4 = reinterpret_cast<const float4*>(p);
      for (long long k = lane; k < r / 4; k += 32) {
        const float4 u = __ldg(p4 + k);
        const float a = hone_combine(hone_reduce_pre(u.x, op, 0.0f),
                                     hone_reduce_pre(u.y, op, 0.0f), kind);
        const float b = hone_combine(hone_reduce_pre(u.z, op, 0.0f),
                                     hone_reduce_pre(u.w, op, 0.0f), kind);
        v = hone_combine(v, hone_combine(a, b, kind), kind);
      }
    } else {
      for (long long k = lane; k < r; k += 32)
        v = hone_combine(v, hone_reduce_pre(__ldg(p + k), op, 0.0f), kind);
    }
    for (int o = 16; o > 0; o >>= 1) v = hone_combine(v, __shfl_xor_sync(0xffffffffu, v, o), kind);
    if (lane == 0) y[row] = hone_reduce_post(v, op, r, 0.0f);
  }
}

// Softmax (or LogSoftmax) of x viewed as [outer, r, inner] along r.
extern "C" __global__ void hone_softmax(const float* x, float* y, long long outer, long long r,
                                        long long inner, int log_softmax) {
  for (long long o = blockIdx.x; o < outer * inner; o += gridDim.x) {
    const long long base = (o / inner) * r * inner + o % inner;
    const float* p = x + base;
    float* q = y + base;
    float m = -HONE_INF;
    for (long long k = threadIdx.x; k < r; k += blockDim.x) m = fmaxf(m, p[k * inner]);
    m = hone_block_reduce(m, 1);
    float s = 0.0f;
    for (long long k = threadIdx.x; k < r; k += blockDim.x) s += expf(p[k * inner] - m);
    s = hone_block_reduce(s, 0);
    const float ls = logf(s);
    for (long long k = threadIdx.x; k < r; k += blockDim.x) {
      const float v = p[k * inner] - m;
      q[k * inner] = log_softmax ? v - ls : expf(v) / s;
    }
  }
}

// Softmax (or LogSoftmax) of contiguous rows of length r, one warp per row:
// attention rows (r of 100-2000, tens of thousands of them) finish without a
// block barrier, which the block-per-row kernel above pays six times a row.
extern "C" __global__ void hone_softmax_warp(const float* x, float* y, long long rows, long long r,
                                             int log_softmax) {
  const int lane = threadIdx.x & 31;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; row < rows;
       row += warps) {
    const float* p = x + row * r;
    float* q = y + row * r;
    float m = -HONE_INF;
    for (long long k = lane; k < r; k += 32) m = fmaxf(m, p[k]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.0f;
    for (long long k = lane; k < r; k += 32) s += expf(p[k] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    const float ls = logf(s);
    for (long long k = lane; k < r; k += 32) {
      const float v = p[k] - m;
      q[k] = log_softmax ? v - ls : expf(v) / s;
    }
  }
}

// y[o, j, k] = x[o, idx[j], k] over [outer, count, inner] (ops_int.cpp):
// a Gather whose indices (i64 when is64, else i32) are known only at run
// time. A negative index counts from the end; one out of range gives NaN and
// sets the run's error word to `code` (hone_flag), so the call fails.
extern "C" __global__ void hone_gather_indices(const float* x, const void* idx, float* y,
                                               long long outer, long long count, long long dim,
                                               long long inner, int is64,
                                               unsigned long long* err, unsigned long long code) {
  HONE_FOR(i, outer * count * inner) {
    const long long k = i % inner, t = i / inner, j = t % count, o = t / count;
    long long id = is64 ? ((const long long*)idx)[j] : (long long)((const int*)idx)[j];
    if (id < 0) id += dim;
    const bool inside = id >= 0 && id < dim;
    if (!inside) hone_flag(err, code);
    y[i] = inside ? x[(o * dim + id) * inner + k] : __int_as_float(0x7fc00000);
  }
}

// y[i] = v for n elements: Pad's border before the input is copied in.
extern "C" __global__ void hone_fill(float* y, float v, long long n) {
  HONE_FOR(i, n) y[i] = v;
}

// y = a + b with broadcasting (p: the two operands): the residual Add of an
// add+layernorm unit whose operands' shapes differ at run time.
extern "C" __global__ void hone_add_bcast(float* y, HoneEw p, long long n) {
  HONE_FOR(i, n) y[i] = hone_ld(p, 0, i) + hone_ld(p, 1, i);
}

// Row `row` of [a, b] rows read or written through a swap of those two axes
// (the [1, 0, 2] Transpose of a batch-first MultiheadAttention fused into a
// LayerNormalization: ops_misc.cpp): row (i, j) of the normalised view is row
// (j, i) of the stored [b, a] one. `b` 0: no swap.
__device__ __forceinline__ long long hone_swapped_row(long long row, long long rows, long long b) {
  return b ? (row % b) * (rows / b) + row / b : row;
}

// LayerNormalization of rows of length r of x (+ z, a residual of x's
// shape, when z is not null; the sum is also stored in `sum` when that is
// not null); scale and bias (may be null) have r values. One block a row.
extern "C" __global__ void hone_layernorm(const float* x, const float* z, const float* scale,
                                          const float* bias, float* sum, float* y, long long rows,
                                          long long r, float eps, long long zb, long long yb) {
  for (long long o = blockIdx.x; o < rows; o += gridDim.x) {
    const float* p = x + o * r;
    const float* pz = z ? z + hone_swapped_row(o, rows, zb) * r : nullptr;
    float* q = y + hone_swapped_row(o, rows, yb) * r;
    float s = 0.0f;
    for (long long k = threadIdx.x; k < r; k += blockDim.x) {
      const float v = pz ? p[k] + pz[k] : p[k];
      if (sum) sum[o * r + k] = v;
      s += v;
    }
    const float mean = hone_block_reduce(s, 0) / (float)r;
    float v = 0.0f;
    for (long long k = threadIdx.x; k < r; k += blockDim.x) {
      const float d = (pz ? p[k] + pz[k] : p[k]) - mean;
      v += d * d;
    }
    const float inv = 1.0f / sqrtf(hone_block_reduce(v, 0) / (float)r + eps);
    for (long long k = threadIdx.x; k < r; k += blockDim.x)
      q[k] = ((pz ? p[k] + pz[k] : p[k]) - mean) * inv * scale[k] + (bias ? bias[k] : 0.0f);
  }
}

// The same for rows of r <= 1024 floats, r a multiple of 4, every pointer
// 16-byte aligned: one warp a row, held in registers (up to 8 float4 a lane),
// so x is read once and no block barrier is paid; the statistics are two
// passes over the registers (mean, then the centred squares).
extern "C" __global__ void hone_layernorm_warp(const float* x, const float* z, const float* scale,
                                               const float* bias, float* sum, float* y,
                                               long long rows, int r, float eps, long long zb,
                                               long long yb) {
  const int lane = threadIdx.x & 31, n4 = r >> 2;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  const float4* sc = reinterpret_cast<const float4*>(scale);
  const float4* bi = reinterpret_cast<const float4*>(bias);
  for (long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; row < rows;
       row += warps) {
    const float4* p = reinterpret_cast<const float4*>(x + row * r);
    const float4* pz =
        z ? reinterpret_cast<const float4*>(z + hone_swapped_row(row, rows, zb) * r) : nullptr;
    float4 v[8];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int c = lane + 32 * k;
      v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (c < n4) {
        v[k] = p[c];
        if (pz) {
          const float4 b = pz[c];
          v[k].x += b.x; v[k].y += b.y; v[k].z += b.z; v[k].w += b.w;
          if (sum) reinterpret_cast<float4*>(sum + row * r)[c] = v[k];
        }
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
    float4* out = reinterpret_cast<float4*>(y + hone_swapped_row(row, rows, yb) * r);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int c = lane + 32 * k;
      if (c < n4) {
        const float4 g = sc[c], h = bi ? bi[c] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        out[c] = make_float4((v[k].x - mean) * inv * g.x + h.x, (v[k].y - mean) * inv * g.y + h.y,
                             (v[k].z - mean) * inv * g.z + h.z, (v[k].w - mean) * inv * g.w + h.w);
      }
    }
  }
}
