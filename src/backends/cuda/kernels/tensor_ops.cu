// The cuda backend's fixed kernels for ArgMax/ArgMin (of f32, i64 and i32),
// inference BatchNormalization, InstanceNormalization, Resize, the ops that
// read or write bool tensors (Where with a condition made at run time,
// comparisons, Not/And/Or/Xor), TopK, GatherND and ConvTranspose; compiled into one module after prelude.cu and fixed.cu,
// whose helpers they use. A bool tensor on the device is one byte an
// element, 0 or 1, as the host's.
#include "prelude.cu"

// Helpers shared with index_ops.cu, which is compiled after this file.

// Element k of an integer tensor: i64 (is64) or i32, widened.
__device__ __forceinline__ long long hone_ld_int(const void* x, long long k, int is64) {
  return is64 ? ((const long long*)x)[k] : (long long)((const int*)x)[k];
}

// Copies element `from` of x to element `to` of y, elements of `bytes` bytes.
__device__ __forceinline__ void hone_copy_elem(const void* x, long long from, void* y,
                                               long long to, int bytes) {
  if (bytes == 8)
    ((unsigned long long*)y)[to] = ((const unsigned long long*)x)[from];
  else if (bytes == 4)
    ((unsigned*)y)[to] = ((const unsigned*)x)[from];
  else if (bytes == 2)
    ((unsigned short*)y)[to] = ((const unsigned short*)x)[from];
  else
    ((unsigned char*)y)[to] = ((const unsigned char*)x)[from];
}

// Offset of element i of operand k of p (hone_ld's index arithmetic).
__device__ __forceinline__ long long hone_at(const HoneEw& p, int k, long long i) {
  return p.flat[k] ? i : hone_offset(i, p.rank, p.dims, p.st[k]);
}

// The offset (sum of index * s.src) of the slice that index tuple t picks:
// s.rank indices at idx[t * s.rank] (i64 when is64, else i32; a negative one
// counts from the end of s.dims). inside: whether every index lies in range
// (the offset is meaningless when not).
__device__ __forceinline__ long long hone_tuple_offset(const void* idx, long long t,
                                                       const HoneShape& s, int is64,
                                                       bool& inside) {
  long long off = 0;
  inside = true;
  for (int j = 0; j < s.rank; ++j) {
    long long v = hone_ld_int(idx, t * s.rank + j, is64);
    if (v < 0) v += s.dims[j];
    inside = inside && v >= 0 && v < s.dims[j];
    off += v * s.src[j];
  }
  return off;
}

// Whether element u at index k beats the best so far (bv at bi; bi < 0:
// none yet) for ArgMax (is_min 0) or ArgMin: ties go to the first index, or
// the last with select_last_index. As in the reference's scan from index 0,
// a NaN at index 0 wins and any other NaN never does.
__device__ __forceinline__ bool hone_arg_better(float u, long long k, float bv, long long bi,
                                                int is_min, int last) {
  if (k < 0) return false;
  if (bi < 0) return true;
  if (bi == 0 && bv != bv) return false;
  if (k == 0 && u != u) return true;
  if (u != u) return false;
  if (bv != bv) return true;
  if (u == bv) return last ? k > bi : k < bi;
  return is_min ? u < bv : u > bv;
}

// The same for integers (i64 token ids or i32, widened): ties as above; no NaN.
__device__ __forceinline__ bool hone_arg_better(long long u, long long k, long long bv,
                                                long long bi, int is_min, int last) {
  if (k < 0) return false;
  if (bi < 0) return true;
  if (u == bv) return last ? k > bi : k < bi;
  return is_min ? u < bv : u > bv;
}

// Element k of an ArgMax/ArgMin input: f32, or an integer (hone_ld_int).
__device__ __forceinline__ float hone_arg_ld(const float* x, long long k, int) { return x[k]; }
__device__ __forceinline__ long long hone_arg_ld(const void* x, long long k, int is64) {
  return hone_ld_int(x, k, is64);
}

// y[outer, inner] (i64) = the index along r of the max (or min) of x viewed
// as [outer, r, inner], whose elements compare as T (f32, or integers widened
// to i64). One block of 256 threads per output, a tree in shared memory.
template <typename T, typename X>
__device__ __forceinline__ void hone_argreduce_of(X x, long long* y, long long outer, long long r,
                                                  long long inner, int is_min, int last,
                                                  int is64) {
  __shared__ T sv[256];
  __shared__ long long si[256];
  const int t = threadIdx.x;
  for (long long o = blockIdx.x; o < outer * inner; o += gridDim.x) {
    const long long base = (o / inner) * r * inner + o % inner;
    T bv = 0;
    long long bi = -1;
    for (long long k = t; k < r; k += blockDim.x) {
      const T u = hone_arg_ld(x, base + k * inner, is64);
      if (hone_arg_better(u, k, bv, bi, is_min, last)) {
        bv = u;
        bi = k;
      }
    }
    sv[t] = bv;
    si[t] = bi;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (t < s && hone_arg_better(sv[t + s], si[t + s], sv[t], si[t], is_min, last)) {
        sv[t] = sv[t + s];
        si[t] = si[t + s];
      }
      __syncthreads();
    }
    if (t == 0) y[o] = si[0];
    __syncthreads();  // sv and si are reused by the next output
  }
}
extern "C" __global__ void hone_argreduce(const float* x, long long* y, long long outer,
                                          long long r, long long inner, int is_min, int last) {
  hone_argreduce_of<float>(x, y, outer, r, inner, is_min, last, 0);
}
// Of i64 (is64) or i32 values.
extern "C" __global__ void hone_argreduce_int(const void* x, long long* y, long long outer,
                                              long long r, long long inner, int is_min, int last,
                                              int is64) {
  hone_argreduce_of<long long>(x, y, outer, r, inner, is_min, last, is64);
}

// Inference BatchNormalization of x viewed as [n / (C·inner), C, inner]
// (ops_pad_norm.cpp): the statistics of channel c from device constants.
extern "C" __global__ void hone_batchnorm(const float* x, const float* scale, const float* bias,
                                          const float* mean, const float* var, float* y,
                                          long long n, long long inner, int C, float eps) {
  HONE_FOR(i, n) {
    const int c = (int)((i / inner) % C);
    y[i] = (x[i] - mean[c]) * (scale[c] * rsqrtf(var[c] + eps)) + bias[c];
  }
}

// InstanceNormalization of x viewed as [rows = N * C, r]: each row by its
// own mean and variance, then scale[c] and bias[c]. One block a row.
extern "C" __global__ void hone_instancenorm(const float* x, const float* scale,
                                             const float* bias, float* y, long long rows,
                                             long long r, int C, float eps) {
  for (long long o = blockIdx.x; o < rows; o += gridDim.x) {
    const float* p = x + o * r;
    float* q = y + o * r;
    const int c = (int)(o % C);
    float s = 0.0f;
    for (long long k = threadIdx.x; k < r; k += blockDim.x) s += p[k];
    const float mean = hone_block_reduce(s, 0) / (float)r;
    float v = 0.0f;
    for (long long k = threadIdx.x; k < r; k += blockDim.x) {
      const float d = p[k] - mean;
      v += d * d;
    }
    const float inv = 1.0f / sqrtf(hone_block_reduce(v, 0) / (float)r + eps);
    const float g = scale[c], b = bias[c];
    for (long long k = threadIdx.x; k < r; k += blockDim.x) q[k] = (p[k] - mean) * inv * g + b;
  }
}

// Resize (ops_resize.cpp), per axis as the reference computes it, in double:
// the input coordinate of output index o under transformation t (0
// half_pixel, 1 asymmetric, 2 pytorch_half_pixel, 3 align_corners, 4
// tf_half_pixel_for_nn, 5 half_pixel_symmetric).
__device__ double hone_resize_coord(int t, long long o, double scale, long long in,
                                    long long out) {
  const double x = (double)o;
  if (t == 1) return x / scale;
  if (t == 2) return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (t == 3) return out == 1 ? 0.0 : x * (double)(in - 1) / (double)(out - 1);
  if (t == 4) return (x + 0.5) / scale;
  if (t == 5) {
    const double adjustment = (double)out / (scale * (double)in);
    const double offset = (double)in / 2.0 * (1.0 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5;
}

__device__ double hone_cubic_weight(double d, double a) {
  d = fabs(d);
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  return 0.0;
}

// The taps of output index o along one axis (at most 4): input indices and
// weights; returns their count. mode: 0 nearest, 1 linear, 2 cubic (a: its
// coefficient; excl: exclude_outside); nearest: 0 round_prefer_floor, 1
// round_prefer_ceil, 2 floor, 3 ceil, 4 Resize-10's (floor upsampling, ceil
// downsampling).
__device__ int hone_resize_taps(int mode, int t, int nearest, double a, int excl, long long o,
                                double scale, long long in, long long out, long long* idx,
                                double* w) {
  const double x = hone_resize_coord(t, o, scale, in, out);
  if (mode == 0) {
    double f;
    if (nearest == 1)
      f = floor(x + 0.5);
    else if (nearest == 2)
      f = floor(x);
    else if (nearest == 3)
      f = ceil(x);
    else if (nearest == 4)
      f = scale < 1.0 ? ceil(x) : floor(x);
    else
      f = ceil(x - 0.5);
    long long i = (long long)f;
    idx[0] = i < 0 ? 0 : (i >= in ? in - 1 : i);
    w[0] = 1.0;
    return 1;
  }
  const long long base = (long long)floor(x);
  const double ratio = x - (double)base;
  const long long start = mode == 1 ? 0 : -1, stop = 2 - start;
  int n = 0;
  double total = 0.0;
  for (long long j = start; j < stop; ++j) {
    const double d = (double)j - ratio;
    double wt = mode == 1 ? fmax(0.0, 1.0 - fabs(d)) : hone_cubic_weight(d, a);
    long long i = base + j;
    if (i < 0 || i >= in) {
      if (excl) wt = 0.0;
      i = i < 0 ? 0 : in - 1;
    }
    if (wt == 0.0) continue;
    total += wt;
    idx[n] = i;
    w[n] = wt;
    ++n;
  }
  if (excl && total != 0.0 && total != 1.0)
    for (int k = 0; k < n; ++k) w[k] /= total;
  return n;
}

// y [outer, OH, OW] from x [outer, H, W]: each output the weighted sum of
// its taps (one for nearest, an exact copy), summed in double.
extern "C" __global__ void hone_resize(const float* x, float* y, long long outer, long long H,
                                       long long W, long long OH, long long OW, double sh,
                                       double sw, int mode, int t, int nearest, double a,
                                       int excl) {
  HONE_FOR(i, outer * OH * OW) {
    const long long ow = i % OW, rest = i / OW, oh = rest % OH, b = rest / OH;
    long long ih[4], iw[4];
    double wh[4], ww[4];
    const int nh = hone_resize_taps(mode, t, nearest, a, excl, oh, sh, H, OH, ih, wh);
    const int nw = hone_resize_taps(mode, t, nearest, a, excl, ow, sw, W, OW, iw, ww);
    const float* p = x + b * H * W;
    double acc = 0.0;
    for (int j = 0; j < nh; ++j) {
      double row = 0.0;
      for (int k = 0; k < nw; ++k) row += ww[k] * (double)p[ih[j] * W + iw[k]];
      acc += wh[j] * row;
    }
    y[i] = (float)acc;
  }
}

// Operand k of p read as bool bytes (p.in[k] points at unsigned chars).
__device__ __forceinline__ bool hone_ldb(const HoneEw& p, int k, long long i) {
  const unsigned char* c = reinterpret_cast<const unsigned char*>(p.in[k]);
  return c[p.flat[k] ? i : hone_offset(i, p.rank, p.dims, p.st[k])] != 0;
}

// Where whose condition (operand 0, bool bytes) is made at run time; the
// branches are operands 1 and 2, all broadcast to y.
extern "C" __global__ void hone_where_bytes(float* y, HoneEw p, long long n) {
  HONE_FOR(i, n) y[i] = hone_ldb(p, 0, i) ? hone_ld(p, 1, i) : hone_ld(p, 2, i);
}

// y (bool bytes) = a <op> b of two f32 operands with broadcasting: 0
// Equal, 1 Less, 2 Greater, 3 LessOrEqual, 4 GreaterOrEqual (NaN compares
// false, as in C).
extern "C" __global__ void hone_compare(unsigned char* y, HoneEw p, long long n, int op) {
  HONE_FOR(i, n) {
    const float a = hone_ld(p, 0, i), b = hone_ld(p, 1, i);
    const bool r = op == 0 ? a == b : op == 1 ? a < b : op == 2 ? a > b : op == 3 ? a <= b : a >= b;
    y[i] = r ? 1 : 0;
  }
}

// One step of an LSTM direction (ops_rnn.cpp) over k = [B, H]: xw and hr are
// this step's X·Wᵀ and H·Rᵀ, [B, 4H] in ONNX's gate order i, o, f, c; bias
// [8H] (Wb then Rb) may be null. Updates h and c in place (each thread reads
// and writes its own element) and writes h to y (this step's slice of Y)
// when y is not null.
extern "C" __global__ void hone_lstm_step(const float* xw, const float* hr, const float* bias,
                                          float* h, float* c, float* y, long long B, long long H) {
  HONE_FOR(k, B * H) {
    const long long b = k / H, j = k - b * H;
    const float* xr = xw + b * 4 * H;
    const float* rr = hr + b * 4 * H;
    float g[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      float v = xr[q * H + j] + rr[q * H + j];
      if (bias) v += bias[q * H + j] + bias[4 * H + q * H + j];
      g[q] = v;
    }
    const float cn = hone_sigmoid(g[2]) * c[k] + hone_sigmoid(g[0]) * tanhf(g[3]);
    const float hn = hone_sigmoid(g[1]) * tanhf(cn);
    c[k] = cn;
    h[k] = hn;
    if (y) y[k] = hn;
  }
}

// One step of a GRU direction with linear_before_reset (PyTorch's GRU):
// xw, hr [B, 3H] in gate order z, r, h; bias [6H] may be null;
// h = (1 - z) * tanh(xw_h + Wb_h + r * (hr_h + Rb_h)) + z * h, in place.
extern "C" __global__ void hone_gru_step(const float* xw, const float* hr, const float* bias,
                                         float* h, float* y, long long B, long long H) {
  HONE_FOR(k, B * H) {
    const long long b = k / H, j = k - b * H;
    const float* xr = xw + b * 3 * H;
    const float* rr = hr + b * 3 * H;
    float wb[3] = {0.0f, 0.0f, 0.0f}, rb[3] = {0.0f, 0.0f, 0.0f};
    if (bias) {
#pragma unroll
      for (int q = 0; q < 3; ++q) {
        wb[q] = bias[q * H + j];
        rb[q] = bias[3 * H + q * H + j];
      }
    }
    const float z = hone_sigmoid(xr[j] + wb[0] + rr[j] + rb[0]);
    const float r = hone_sigmoid(xr[H + j] + wb[1] + rr[H + j] + rb[1]);
    const float n = tanhf(xr[2 * H + j] + wb[2] + r * (rr[2 * H + j] + rb[2]));
    const float hn = (1.0f - z) * n + z * h[k];
    h[k] = hn;
    if (y) y[k] = hn;
  }
}

// u above v in TopK's order of values (ops/topk.h): NaN above every number.
__device__ __forceinline__ bool hone_nan_greater(float u, float v) {
  if (u != u || v != v) return u != u && v == v;
  return u > v;
}

// TopK of x viewed as [outer, r, inner] along r (ops_select.cpp): one thread
// per element counts the elements of its row that come before it (the k
// largest, or smallest, first; equal values by position, so the order is
// strict), and an element whose count is below k writes itself there. The
// outputs [outer, k, inner] are sorted, as ops::topk_order's.
extern "C" __global__ void hone_topk(const float* x, float* vals, long long* idx, long long outer,
                                     long long r, long long inner, long long k, int largest) {
  HONE_FOR(i, outer * r * inner) {
    const long long c = i % inner, j = (i / inner) % r, o = i / (inner * r);
    const float* row = x + o * r * inner + c;
    const float u = row[j * inner];
    long long rank = 0;
    for (long long m = 0; m < r && rank < k; ++m) {
      if (m == j) continue;
      const float v = row[m * inner];
      const bool above = largest ? hone_nan_greater(v, u) : hone_nan_greater(u, v);
      const bool below = largest ? hone_nan_greater(u, v) : hone_nan_greater(v, u);
      if (above || (!below && m < j)) ++rank;
    }
    if (rank < k) {
      const long long at = (o * k + rank) * inner + c;
      if (vals) vals[at] = u;  // null: that output is not read
      if (idx) idx[at] = j;
    }
  }
}

// GatherND (ops_select.cpp) over 4-byte words (an element is `w` words:
// slice, batch_block and s.src count words): output word i is word i % slice
// of the slice that tuple t = i / slice picks, from batch t / tuples. The
// tuple's s.rank indices (i64 when is64, else i32; negative ones count from
// the end) run along dims s.dims with strides s.src. An index out of range
// gives NaN words and sets the run's error word to `code` (hone_flag): the
// reference refuses it, and so does the call.
extern "C" __global__ void hone_gather_nd(const unsigned* x, const void* idx, unsigned* y,
                                          long long total, long long tuples, long long slice,
                                          long long batch_block, HoneShape s, int is64,
                                          unsigned long long* err, unsigned long long code) {
  HONE_FOR(i, total) {
    const long long e = i % slice, t = i / slice;
    bool inside;
    const long long off = (t / tuples) * batch_block + hone_tuple_offset(idx, t, s, is64, inside);
    if (!inside) hone_flag(err, code);
    y[i] = inside ? x[off + e] : 0x7fc00000u;
  }
}

// ConvTranspose (ops_conv_transpose.cpp), 1-D or 2-D (H = 1), one thread per
// output element: y[n, m, oh, ow] = bias[m] + the sum over the group's input
// channels c and kernel taps (kh, kw) of x[n, c, ih, iw] * w[c, m % mg, kh,
// kw], where oh = ih * sh + kh * dh - ph (and so for w) lands on an input
// row: the reference's scatter read as a gather, summed in f32.
extern "C" __global__ void hone_conv_transpose(const float* x, const float* w, const float* bias,
                                               float* y, long long N, long long C, long long M,
                                               long long G, long long H, long long W,
                                               long long OH, long long OW, long long KH,
                                               long long KW, long long sh, long long sw,
                                               long long dh, long long dw, long long ph,
                                               long long pw) {
  const long long cg = C / G, mg = M / G;
  HONE_FOR(i, N * M * OH * OW) {
    const long long ow = i % OW, oh = (i / OW) % OH, m = (i / (OW * OH)) % M,
                    n = i / (OW * OH * M);
    const long long g = m / mg, ml = m % mg;
    float acc = bias ? bias[m] : 0.0f;
    for (long long kh = 0; kh < KH; ++kh) {
      const long long th = oh + ph - kh * dh;
      if (th < 0 || th % sh != 0) continue;
      const long long ih = th / sh;
      if (ih >= H) continue;
      for (long long kw = 0; kw < KW; ++kw) {
        const long long tw = ow + pw - kw * dw;
        if (tw < 0 || tw % sw != 0) continue;
        const long long iw = tw / sw;
        if (iw >= W) continue;
        for (long long c = 0; c < cg; ++c) {
          const long long ci = g * cg + c;
          acc += x[((n * C + ci) * H + ih) * W + iw] * w[((ci * mg + ml) * KH + kh) * KW + kw];
        }
      }
    }
    y[i] = acc;
  }
}

// Integer Add (op 0), Sub (1) or Mul (2) of two i64 (is64) or i32 operands
// with broadcasting (ops_select.cpp): index arithmetic, a row offset added
// to TopK's indices. Wraps as the reference's unsigned arithmetic does.
extern "C" __global__ void hone_int_binary(void* y, HoneEw p, long long n, int op, int is64) {
  HONE_FOR(i, n) {
    const unsigned long long a = (unsigned long long)hone_ld_int(p.in[0], hone_at(p, 0, i), is64);
    const unsigned long long b = (unsigned long long)hone_ld_int(p.in[1], hone_at(p, 1, i), is64);
    const unsigned long long r = op == 0 ? a + b : op == 1 ? a - b : a * b;
    if (is64)
      ((long long*)y)[i] = (long long)r;
    else
      ((int*)y)[i] = (int)(unsigned)r;
  }
}

// --- integer and bool tensors made at run time (ops_int.cpp, ops_tensor.cpp) ---
// Element codes of the kernels below: 0 f32, 1 i64, 2 i32, 3 bool (one byte,
// 0 or 1), 4 f16, 5 bf16. A bool known when the plan is built reaches the
// device as 0/1 floats (cuda_block.cpp): such an operand is read as f32.

// y[dst] = x[src] over s for elements of `bytes` bytes (1, 2, 4 or 8): the
// copies of bool bytes and of i64 values too wide for hone_strided_copy's
// word trick (ops_int.cpp, strided_copy_of).
extern "C" __global__ void hone_strided_copy_sized(const void* x, void* y, HoneShape s,
                                                   long long n, int bytes) {
  HONE_FOR(i, n) {
    const long long a = hone_offset(i, s.rank, s.dims, s.src);
    const long long b = hone_offset(i, s.rank, s.dims, s.dst);
    hone_copy_elem(x, a, y, b, bytes);
  }
}

// Element `at` of operand k as a float: f32, f16, bf16 (exact), or a bool
// known when planned (0/1 floats).
__device__ __forceinline__ float hone_ld_float(const void* x, long long at, int code) {
  if (code == 4 || code == 5) return hone_half_value(((const unsigned short*)x)[at], code == 5);
  return ((const float*)x)[at];
}

// A float to i64 (is64) or i32 as the reference's saturate_cast: truncated
// toward zero, NaN gives 0, out of range the nearest limit (the limits are
// exact as doubles: -2^63, 2^63, -2^31, 2^31).
__device__ __forceinline__ long long hone_float_to_int(float f, int is64) {
  if (f != f) return 0;
  const double d = (double)f;
  if (d <= (is64 ? -9223372036854775808.0 : -2147483648.0))
    return is64 ? -9223372036854775807LL - 1 : -2147483648LL;
  if (d >= (is64 ? 9223372036854775808.0 : 2147483648.0))
    return is64 ? 9223372036854775807LL : 2147483647LL;
  return (long long)d;
}

// y = Cast(x) for n elements, x of element code `from`, y of `to`, as the
// reference's Cast (eval/ops_elementwise_cast.cpp): anything to bool is
// x != 0 (NaN is true); a float to an integer truncates toward zero
// (hone_float_to_int: saturating, NaN gives 0);
// integer to integer wraps; an integer to f32 rounds once; floats to
// f16/bf16 round to nearest even.
extern "C" __global__ void hone_cast(const void* x, void* y, long long n, int from, int to) {
  const bool int_from = from == 1 || from == 2 || from == 3;
  HONE_FOR(i, n) {
    long long iv = 0;
    float fv = 0.0f;
    if (from == 1)
      iv = ((const long long*)x)[i];
    else if (from == 2)
      iv = ((const int*)x)[i];
    else if (from == 3)
      iv = ((const unsigned char*)x)[i] != 0 ? 1 : 0;
    else
      fv = hone_ld_float(x, i, from);
    if (to == 3) {
      ((unsigned char*)y)[i] = (int_from ? iv != 0 : fv != 0.0f) ? 1 : 0;
    } else if (to == 1) {
      ((long long*)y)[i] = int_from ? iv : hone_float_to_int(fv, 1);
    } else if (to == 2) {
      ((int*)y)[i] = int_from ? (int)(unsigned)(unsigned long long)iv : (int)hone_float_to_int(fv, 0);
    } else {
      const float f = int_from ? (float)iv : fv;
      if (to == 0)
        ((float*)y)[i] = f;
      else
        ((unsigned short*)y)[i] = hone_half_bits(f, to == 5);
    }
  }
}

// y (bool bytes) = a <op> b of two integer operands (i64 when is64, else
// i32) with broadcasting: hone_compare's codes, compared exactly as i64.
extern "C" __global__ void hone_compare_int(unsigned char* y, HoneEw p, long long n, int op,
                                            int is64) {
  HONE_FOR(i, n) {
    const long long a = hone_ld_int(p.in[0], hone_at(p, 0, i), is64);
    const long long b = hone_ld_int(p.in[1], hone_at(p, 1, i), is64);
    const bool r = op == 0 ? a == b : op == 1 ? a < b : op == 2 ? a > b : op == 3 ? a <= b : a >= b;
    y[i] = r ? 1 : 0;
  }
}

// Operand k of p as a bool: bool bytes, or (bit k of `floats` set) a bool
// known when planned, uploaded as 0/1 floats.
__device__ __forceinline__ bool hone_ld_bool(const HoneEw& p, int k, long long i, int floats) {
  if ((floats >> k) & 1) return p.in[k][hone_at(p, k, i)] != 0.0f;
  return hone_ldb(p, k, i);
}

// y (bool bytes) from bool operands with broadcasting: 0 Not (operand 0
// only), 1 And, 2 Or, 3 Xor; `floats` as hone_ld_bool's.
extern "C" __global__ void hone_logic(unsigned char* y, HoneEw p, long long n, int op,
                                            int floats) {
  HONE_FOR(i, n) {
    const bool a = hone_ld_bool(p, 0, i, floats);
    bool r = !a;
    if (op != 0) {
      const bool b = hone_ld_bool(p, 1, i, floats);
      r = op == 1 ? (a && b) : op == 2 ? (a || b) : (a != b);
    }
    y[i] = r ? 1 : 0;
  }
}

// Where with branches of `bytes`-byte elements (4: f32 or i32, 8: i64, 1:
// bool bytes made at run time), copied bit for bit; the condition (operand
// 0) is bool bytes, or 0/1 floats when bit 0 of `floats` is set (a
// condition known when planned).
extern "C" __global__ void hone_where_sized(void* y, HoneEw p, long long n, int floats,
                                            int bytes) {
  HONE_FOR(i, n) {
    const int k = hone_ld_bool(p, 0, i, floats) ? 1 : 2;
    hone_copy_elem(p.in[k], hone_at(p, k, i), y, i, bytes);
  }
}

// Clip of x (operand 0; code 0 f32, 1 i64, 2 i32) by the one-element bounds
// min (operand 1, when bit 0 of `have` is set) and max (operand 2, bit 1),
// as the reference: y = min(max(x, lo), hi), so lo > hi gives hi; a NaN x
// stays NaN. The bounds have x's dtype (ONNX requires it).
extern "C" __global__ void hone_clip_typed(void* y, HoneEw p, long long n, int code, int have) {
  HONE_FOR(i, n) {
    if (code == 0) {
      float v = hone_ld(p, 0, i);
      if (have & 1) {
        const float lo = hone_ld(p, 1, i);
        v = v < lo ? lo : v;
      }
      if (have & 2) {
        const float hi = hone_ld(p, 2, i);
        v = v > hi ? hi : v;
      }
      ((float*)y)[i] = v;
    } else {
      const int is64 = code == 1;
      long long v = hone_ld_int(p.in[0], hone_at(p, 0, i), is64);
      if (have & 1) {
        const long long lo = hone_ld_int(p.in[1], hone_at(p, 1, i), is64);
        v = v < lo ? lo : v;
      }
      if (have & 2) {
        const long long hi = hone_ld_int(p.in[2], hone_at(p, 2, i), is64);
        v = v > hi ? hi : v;
      }
      if (is64)
        ((long long*)y)[i] = v;
      else
        ((int*)y)[i] = (int)v;
    }
  }
}
