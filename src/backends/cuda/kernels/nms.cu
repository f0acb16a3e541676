// NonMaxSuppression (ops_nms.cpp): the boxes each (batch, class) keeps,
// exactly as the reference's hone_nms_run (src/ops/nms_select.h, compiled
// into this module ahead of this file) keeps them: the same decoded boxes and
// IoU test in double, the candidates scoring above the threshold ordered by
// descending score, ties by lower box index, and each kept unless a box kept
// before it suppresses it, at most max_out of them.
//
// hone_nms_select runs one block per pair (batch b, class c), pair = b *
// classes + c, in its own part of `work` (pair_bytes each, laid out below;
// the counts of every pair follow the last part): it gathers the candidates,
// sorts them by a bitonic sort over (score desc, index asc), a total order
// that equals the reference's stable sort, decodes their boxes in that order,
// then walks them: each candidate not yet suppressed is kept, and all
// threads mark the later ones it suppresses. A candidate is marked only by a
// kept box before it, so the kept set is the reference's. hone_nms_rows then
// writes the [count, 3] rows in (batch, class) order and the count last.

#define HONE_NMS_THREADS 512

// Whether candidate (score sa, box ia) comes before (sb, ib): higher score
// first, ties by lower index (the reference's stable sort keeps box order).
// Indices of nb and above are the padding of the sort, last.
__device__ __forceinline__ int hone_nms_before(float sa, int ia, float sb, int ib, long long nb) {
  if (ia >= nb || ib >= nb) return ia < ib;
  if (sa > sb) return 1;
  if (sb > sa) return 0;
  return ia < ib;
}

// One pair's part of `work`: the sort's scores (float[p2]) and box indices
// (int[p2]), the sorted candidates' decoded boxes (hone_nms_box[nb]), their
// suppressed flags (int[nb], rounded to even) and the kept box indices
// (long long[keep_max]); nms_layout.h mirrors it on the host. boxes are
// [batches, nb, 4] and scores [batches, classes, nb] of f32; the grid has
// batches * classes blocks.
extern "C" __global__ void __launch_bounds__(HONE_NMS_THREADS)
    hone_nms_select(const float* boxes, const float* scores, unsigned char* work,
                    long long pair_bytes, long long nb, long long classes, long long p2,
                    long long keep_max, int center, double iou, int has_thr, double thr) {
  const long long pair = blockIdx.x;
  const int t = threadIdx.x, step = blockDim.x;  // at most HONE_NMS_THREADS
  unsigned char* w = work + pair * pair_bytes;
  float* key = (float*)w;
  int* idx = (int*)(w + 4 * p2);
  hone_nms_box* box = (hone_nms_box*)(w + 8 * p2);
  volatile int* supp = (volatile int*)(w + 8 * p2 + 40 * nb);
  long long* keep = (long long*)(w + 8 * p2 + 40 * nb + 4 * ((nb + 1) / 2 * 2));
  long long* counts = (long long*)(work + (long long)gridDim.x * pair_bytes);
  __shared__ int found;
  if (t == 0) found = 0;
  __syncthreads();
  // The candidates, in any order: the sort's key decides theirs.
  const float* sc = scores + pair * nb;
  for (long long i = t; i < nb; i += step) {
    const float s = sc[i];
    if (!has_thr || (double)s > thr) {
      const int at = atomicAdd(&found, 1);
      key[at] = s;
      idx[at] = (int)i;
    }
  }
  __syncthreads();
  const long long n = found;
  long long m = 1;
  while (m < n) m *= 2;
  for (long long i = n + t; i < m; i += step) {
    key[i] = 0.0f;
    idx[i] = (int)(nb + i);
  }
  __syncthreads();
  // Bitonic sort of the m keys into hone_nms_before's order.
  for (long long k = 2; k <= m; k *= 2)
    for (long long j = k / 2; j > 0; j /= 2) {
      for (long long i = t; i < m; i += step) {
        const long long l = i ^ j;
        if (l <= i) continue;
        const float si = key[i], sl = key[l];
        const int ii = idx[i], il = idx[l];
        const int up = (i & k) == 0;
        if (up ? hone_nms_before(sl, il, si, ii, nb) : hone_nms_before(si, ii, sl, il, nb)) {
          key[i] = sl, key[l] = si;
          idx[i] = il, idx[l] = ii;
        }
      }
      __syncthreads();
    }
  // The candidates' boxes in sorted order, decoded in double as the reference does.
  const float* bb = boxes + (pair / classes) * nb * 4;
  for (long long i = t; i < n; i += step) {
    const float* q = bb + 4 * (long long)idx[i];
    const double v[4] = {(double)q[0], (double)q[1], (double)q[2], (double)q[3]};
    box[i] = hone_nms_box_of(v, center);
    supp[i] = 0;
  }
  // The greedy walk. After each barrier every thread skips the same
  // suppressed candidates to the same next one: the flags it reads (up to
  // that one) were set before the barrier, and this round marks only later
  // ones.
  long long kept = 0, i = 0;
  for (;;) {
    __syncthreads();
    while (i < n && supp[i]) ++i;
    if (i >= n || kept >= keep_max) break;
    if (t == 0) keep[kept] = idx[i];
    ++kept;
    const hone_nms_box bi = box[i];
    for (long long j = i + 1 + t; j < n; j += step)
      if (!supp[j] && hone_nms_suppresses(&box[j], &bi, iou)) supp[j] = 1;
    ++i;
  }
  if (t == 0) counts[pair] = kept;
}

// y (room for every pair's rows, then one i64) = the rows (batch, class, box)
// each pair kept, pair after pair, then their count at y[capacity], which the
// block's run reads back. One block; `work` as hone_nms_select left it.
extern "C" __global__ void hone_nms_rows(const unsigned char* work, long long* y,
                                         long long pairs, long long classes,
                                         long long pair_bytes, long long p2, long long nb,
                                         long long capacity) {
  const long long* counts = (const long long*)(work + pairs * pair_bytes);
  const long long keep_at = 8 * p2 + 40 * nb + 4 * ((nb + 1) / 2 * 2);
  long long base = 0;
  for (long long p = 0; p < pairs; ++p) {
    const long long count = counts[p];
    const long long* keep = (const long long*)(work + p * pair_bytes + keep_at);
    for (long long k = threadIdx.x; k < count; k += blockDim.x) {
      long long* row = y + 3 * (base + k);
      row[0] = p / classes, row[1] = p % classes, row[2] = keep[k];
    }
    base += count;
  }
  if (threadIdx.x == 0) y[capacity] = base;
}
