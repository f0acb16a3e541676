// The cuda backend's fixed kernels for CumSum, OneHot, GatherElements,
// ScatterElements, ScatterND (ops_elements.cpp) and Pad in reflect, edge and wrap mode
// (ops_pad_norm.cpp); compiled into the fixed module after prelude.cu,
// fixed.cu and tensor_ops.cu, whose helpers (hone_offset, hone_flag,
// hone_ld_int, hone_copy_elem, hone_tuple_offset) they use. Element codes as
// tensor_ops.cu's: 0 f32, 1 i64, 2 i32.
// Each kernel follows the reference's loop (eval/) as plainly as it can, so
// its result is the reference's bit for bit: a line that the reference walks
// in order is one thread's sequential loop here.
#include "tensor_ops.cu"

// CumSum of x viewed as [outer, len, inner] along len, one thread per
// (outer, inner) line walking it in order, as the reference: f32 (code 0)
// summed in double and rounded once per output, i64 (1) and i32 (2) in
// wrapping 64-bit arithmetic. exclusive: each output leaves its own element
// out; reverse: the line is walked from its end.
extern "C" __global__ void hone_cumsum(const void* x, void* y, long long outer, long long len,
                                       long long inner, int code, int exclusive, int reverse) {
  HONE_FOR(t, outer * inner) {
    const long long base = (t / inner) * len * inner + t % inner;
    double fs = 0.0;
    unsigned long long is = 0ull;
    for (long long j = 0; j < len; ++j) {
      const long long at = base + (reverse ? len - 1 - j : j) * inner;
      if (code == 0) {
        const double v = (double)((const float*)x)[at];
        if (!exclusive) fs += v;
        ((float*)y)[at] = (float)fs;
        if (exclusive) fs += v;
      } else {
        const unsigned long long v = (unsigned long long)hone_ld_int(x, at, code == 1);
        if (!exclusive) is += v;
        if (code == 1)
          ((long long*)y)[at] = (long long)is;
        else
          ((int*)y)[at] = (int)(unsigned)is;
        if (exclusive) is += v;
      }
    }
  }
}

// OneHot: y viewed as [outer, depth, inner] (the new axis in the middle);
// idx [outer, inner] (i64 when is64, else i32; a negative index counts from
// the end of depth). Element (o, d, k) is values[1] (on) where idx[o, k]
// names d, else values[0] (off); an index out of range leaves its row off,
// as the reference. values: two elements of `bytes` bytes.
extern "C" __global__ void hone_one_hot(const void* idx, const void* values, void* y,
                                        long long outer, long long depth, long long inner,
                                        int is64, int bytes) {
  HONE_FOR(i, outer * depth * inner) {
    const long long k = i % inner, d = (i / inner) % depth, o = i / (inner * depth);
    long long v = hone_ld_int(idx, o * inner + k, is64);
    if (v < 0) v += depth;
    hone_copy_elem(values, v == d ? 1 : 0, y, i, bytes);
  }
}

// GatherElements: y has the indices' dims s.dims (row-major, as idx); s.src
// holds the data's strides with 0 on `axis`, whose own stride is
// axis_stride and extent dim. y[i] = x[the offset of i off the axis + k *
// axis_stride], k = idx[i] (negative from the end). An index out of range
// gives NaN bits (0 for integers) and sets the run's error word to `code`.
extern "C" __global__ void hone_gather_elements(const void* x, const void* idx, void* y,
                                                HoneShape s, long long n, long long dim,
                                                long long axis_stride, int is64, int bytes,
                                                unsigned long long* err,
                                                unsigned long long code) {
  HONE_FOR(i, n) {
    long long k = hone_ld_int(idx, i, is64);
    if (k < 0) k += dim;
    if (k < 0 || k >= dim) {
      hone_flag(err, code);
      if (bytes == 4)
        ((unsigned*)y)[i] = 0x7fc00000u;
      else if (bytes == 8)
        ((unsigned long long*)y)[i] = 0ull;
      else
        ((unsigned char*)y)[i] = 0;
      continue;
    }
    hone_copy_elem(x, hone_offset(i, s.rank, s.dims, s.src) + k * axis_stride, y, i, bytes);
  }
}

// One ScatterElements step: out[at] = u under reduction r (0 none, 1 add,
// 2 mul, 3 max, 4 min) of element code `code`, as the reference's
// combine(): f32 in double, rounded once; integers wrap (add, mul).
__device__ __forceinline__ void hone_scatter_one(void* out, long long at, const void* upd,
                                                 long long from, int code, int r) {
  if (code == 0) {
    float* o = (float*)out;
    const double a = (double)o[at], b = (double)((const float*)upd)[from];
    // max and min as std::max and std::min: the first operand on a tie.
    o[at] = (float)(r == 0   ? b
                    : r == 1 ? a + b
                    : r == 2 ? a * b
                    : r == 3 ? (a < b ? b : a)
                             : (b < a ? b : a));
    return;
  }
  const int is64 = code == 1;
  const long long a = hone_ld_int(out, at, is64), b = hone_ld_int(upd, from, is64);
  long long v;
  if (r == 0)
    v = b;
  else if (r == 1)
    v = (long long)((unsigned long long)a + (unsigned long long)b);
  else if (r == 2)
    v = (long long)((unsigned long long)a * (unsigned long long)b);
  else if (r == 3)
    v = a < b ? b : a;
  else
    v = b < a ? b : a;
  if (is64)
    ((long long*)out)[at] = v;
  else
    ((int*)out)[at] = (int)(unsigned)(unsigned long long)v;
}

// ScatterElements into y, which already holds a copy of the data. Updates
// of one line (every index coordinate but `axis` fixed) can only meet each
// other, so one thread walks one line in the reference's order: duplicates
// combine in that order (the last wins under reduction none), and the
// result is the reference's bit for bit. s.dims: the indices' dims with 1 on
// `axis`; s.src: the indices' (and updates', of the same dims) strides;
// s.dst: the output's, both with 0 on `axis`. count: the indices' extent on
// `axis`, istride its stride there; dim and ostride: the output's. An index
// out of range is skipped and sets the run's error word to `code`.
extern "C" __global__ void hone_scatter_elements(const void* idx, const void* upd, void* y,
                                                 HoneShape s, long long lines, long long count,
                                                 long long istride, long long dim,
                                                 long long ostride, int is64, int dcode, int r,
                                                 unsigned long long* err,
                                                 unsigned long long code) {
  HONE_FOR(t, lines) {
    const long long ib = hone_offset(t, s.rank, s.dims, s.src);
    const long long ob = hone_offset(t, s.rank, s.dims, s.dst);
    for (long long j = 0; j < count; ++j) {
      const long long at = ib + j * istride;
      long long k = hone_ld_int(idx, at, is64);
      if (k < 0) k += dim;
      if (k < 0 || k >= dim) {
        hone_flag(err, code);
        continue;
      }
      hone_scatter_one(y, ob + k * ostride, upd, at, dcode, r);
    }
  }
}

// ScatterND into y, which already holds a copy of the data: tuples of s.rank
// indices (i64 when is64, else i32; negative from the end of s.dims) pick
// slices of `slice` elements at offsets sum(index * s.src); update t's
// slice is upd[t * slice ...]. Any two tuples may name one slice, so one
// thread per slice element walks every tuple in the reference's order:
// duplicates combine as there (the last wins under reduction none). An index
// out of range is skipped and sets the run's error word to `code`.
extern "C" __global__ void hone_scatter_nd(const void* idx, const void* upd, void* y,
                                           HoneShape s, long long tuples, long long slice,
                                           int is64, int dcode, int r, unsigned long long* err,
                                           unsigned long long code) {
  HONE_FOR(e, slice) {
    for (long long t = 0; t < tuples; ++t) {
      bool inside;
      const long long off = hone_tuple_offset(idx, t, s, is64, inside);
      if (!inside) {
        hone_flag(err, code);
        continue;
      }
      hone_scatter_one(y, off + e, upd, t * slice + e, dcode, r);
    }
  }
}

// Pad in reflect (mode 1), edge (2) or wrap (3) mode, as ops::pad_source_offsets:
// per axis a of the output, position o reads element j = o - begin[a] of the
// kept part of the input (len[a] elements from x + base, stride[a] apart),
// j folded into [0, len) by the mode. Every len is at least 1 (the planner
// refuses padding an empty axis, as the reference).
struct HonePad {
  int rank;
  int mode;
  long long out[HONE_MAX_RANK];
  long long begin[HONE_MAX_RANK];
  long long len[HONE_MAX_RANK];
  long long stride[HONE_MAX_RANK];
};

__device__ __forceinline__ long long hone_pad_fold(long long j, long long len, int mode) {
  if (j >= 0 && j < len) return j;
  if (mode == 2) return j < 0 ? 0 : len - 1;
  if (mode == 3) return ((j % len) + len) % len;
  if (len == 1) return 0;
  const long long period = 2 * (len - 1);
  j = ((j % period) + period) % period;
  return j >= len ? period - j : j;
}

extern "C" __global__ void hone_pad_modes(const void* x, void* y, HonePad p, long long n,
                                          int bytes) {
  HONE_FOR(i, n) {
    long long rest = i, off = 0;
    for (int a = p.rank - 1; a >= 0; --a) {
      const long long o = rest % p.out[a];
      rest /= p.out[a];
      off += hone_pad_fold(o - p.begin[a], p.len[a], p.mode) * p.stride[a];
    }
    hone_copy_elem(x, off, y, i, bytes);
  }
}

// NonZero (ops_elements.cpp): whether element k of x is non-zero, x of
// element code 0 f32, 1 i64, 2 i32 or 3 bool bytes.
__device__ __forceinline__ int hone_nonzero_at(const void* x, long long k, int code) {
  if (code == 0) return ((const float*)x)[k] != 0.0f;
  if (code == 3) return ((const unsigned char*)x)[k] != 0;
  return hone_ld_int(x, k, code == 1) != 0;
}

// y ([rank, count] of i64, packed at its start) = the coordinates of x's
// non-zero elements in row-major order, as the reference writes them, and
// y[capacity] = count, which the block's run reads back. One block of
// HONE_NONZERO_THREADS threads: they count, then walk x in chunks of that
// many elements, each hit placed by a prefix sum over its chunk, so the
// order is the elements'.
#define HONE_NONZERO_THREADS 1024
extern "C" __global__ void hone_nonzero(const void* x, long long* y, long long n, int code,
                                        HoneShape s, long long capacity) {
  __shared__ long long part[HONE_NONZERO_THREADS];
  const int t = threadIdx.x;
  long long mine = 0;
  for (long long k = t; k < n; k += HONE_NONZERO_THREADS) mine += hone_nonzero_at(x, k, code);
  part[t] = mine;
  __syncthreads();
  for (int w = HONE_NONZERO_THREADS / 2; w > 0; w /= 2) {
    if (t < w) part[t] += part[t + w];
    __syncthreads();
  }
  const long long count = part[0];
  __syncthreads();
  long long base = 0;
  for (long long c0 = 0; c0 < n; c0 += HONE_NONZERO_THREADS) {
    const long long k = c0 + t;
    const int hit = k < n ? hone_nonzero_at(x, k, code) : 0;
    part[t] = hit;
    __syncthreads();
    for (int w = 1; w < HONE_NONZERO_THREADS; w *= 2) {  // inclusive scan
      const long long v = t >= w ? part[t - w] : 0;
      __syncthreads();
      part[t] += v;
      __syncthreads();
    }
    if (hit) {
      const long long j = base + part[t] - 1;
      long long at = k;
      for (int a = s.rank - 1; a >= 0; --a) {
        y[a * count + j] = at % s.dims[a];
        at /= s.dims[a];
      }
    }
    base += part[HONE_NONZERO_THREADS - 1];
    __syncthreads();
  }
  if (t == 0) y[capacity] = count;
}
