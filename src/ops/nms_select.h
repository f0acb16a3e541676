/* ONNX NonMaxSuppression's selection, in the common subset of C99 and C++,
 * written once: the reference (eval/ops_nn_vision.cpp) and onednn's own step
 * call it, and the aot backend embeds this file as text into every library
 * with a NonMaxSuppression step (CMakeLists.txt's HONE_AOT_RT_FILES), so
 * compiled code selects exactly the boxes the reference does, in double; the
 * cuda backend compiles the box and the IoU test into its NVRTC kernels
 * (kernels/nms.cu), its functions device functions (HONE_NMS_FN).
 * Nothing here allocates: the caller hands hone_nms_run scratch of
 * hone_nms_scratch_words(boxes) 8-byte words (aot's arena has no malloc).
 *
 *   int64_t* work = ...;  (hone_nms_scratch_words(nb) words)
 *   int64_t* out = ...;   (batches * classes * nb * 3 i64 at most)
 *   int64_t n = hone_nms_run(boxes, scores, f64, batches, classes, nb, center,
 *                            max_out, iou, has_thr, thr, work, out);  (n rows of b, c, i)
 */
#ifndef HONE_OPS_NMS_SELECT_H
#define HONE_OPS_NMS_SELECT_H

#ifdef __CUDACC_RTC__
typedef long long int64_t;
#define HONE_NMS_FN static __device__ __forceinline__
/* A product NVRTC never fuses into a multiply-add (it contracts by default),
 * so the device computes the doubles the host does. */
#define HONE_NMS_MUL(a, b) __dmul_rn((a), (b))
#else
#include <math.h>
#include <stdint.h>
#define HONE_NMS_FN static inline
#define HONE_NMS_MUL(a, b) ((a) * (b))
#endif

/* A decoded box (corners sorted) and its area. */
typedef struct hone_nms_box {
  double y1, x1, y2, x2, area;
} hone_nms_box;

/* The box at `b` (4 coordinates): [y1, x1, y2, x2] in either corner order,
 * or [x_center, y_center, width, height] when `center`. */
HONE_NMS_FN hone_nms_box hone_nms_box_of(const double* b, int center) {
  hone_nms_box r;
  if (center) {
    const double xc = b[0], yc = b[1], w = b[2], h = b[3];
    r.y1 = yc - h / 2, r.x1 = xc - w / 2, r.y2 = yc + h / 2, r.x2 = xc + w / 2;
  } else {
    r.y1 = b[2] < b[0] ? b[2] : b[0], r.y2 = b[0] < b[2] ? b[2] : b[0];
    r.x1 = b[3] < b[1] ? b[3] : b[1], r.x2 = b[1] < b[3] ? b[3] : b[1];
  }
  r.area = HONE_NMS_MUL(r.y2 - r.y1, r.x2 - r.x1);
  return r;
}

/* (The min and max below pick as std::min and std::max do.) Whether candidate `a` is suppressed by
 * kept box `b`: their IoU is above `threshold` (in [0, 1]). Boxes with no positive height or width
 * in common have IoU 0 and never suppress: the early exit changes no answer. (`inter` is read
 * twice, so no host compiler contracts the union into a fused multiply-add, and NVRTC, which
 * would, is given HONE_NMS_MUL: every caller computes the same doubles.) */
HONE_NMS_FN int hone_nms_suppresses(const hone_nms_box* a, const hone_nms_box* b,
                                    double threshold) {
  const double ih = (b->y2 < a->y2 ? b->y2 : a->y2) - (a->y1 < b->y1 ? b->y1 : a->y1);
  double iw, inter, uni;
  if (!(ih > 0)) return 0;
  iw = (b->x2 < a->x2 ? b->x2 : a->x2) - (a->x1 < b->x1 ? b->x1 : a->x1);
  if (!(iw > 0)) return 0;
  inter = HONE_NMS_MUL(ih, iw);
  uni = a->area + b->area - inter;
  return uni > 0 && inter / uni > threshold;
}

/* The rest is the host's: the cuda backend's kernel (kernels/nms.cu) keeps
 * boxes its own way, in parallel, with the box and the test above. */
#ifndef __CUDACC_RTC__

/* The boxes already kept for one class, found by where they lie: a uniform
 * grid over the candidates' extent, each kept box listed in the cells it
 * covers (one too wide for that goes to a list every query reads). A box can
 * only be suppressed by a kept box it overlaps, which shares a cell with it
 * (the cell of any point of their overlap), so querying the candidate's cells
 * finds every box that can suppress it: the same answer as comparing with
 * every kept box, at a fraction of the pairs when the candidates spread out
 * (a detector's per-class boxes offset apart, as torchvision's batched NMS
 * does, or thousands of small boxes). Cells are lists linked through `pool`;
 * the order a query visits them in changes no answer. */
#define HONE_NMS_MAX_CELLS 512 /* a side */
#define HONE_NMS_MAX_SPAN 16   /* cells a kept box is listed in */
#define HONE_NMS_GRID_FROM 64  /* below this many candidates a class is scanned linearly */

typedef struct hone_nms_grid {
  int64_t nx, ny;
  double x0, y0, cw, ch;
  int64_t* heads; /* per cell: its first entry in pool, or -1 */
  int64_t* pool;  /* entries (box, next) */
  int64_t used;   /* entries in pool */
  int64_t* wide;  /* kept boxes too wide for the cells */
  int64_t nwide;
} hone_nms_grid;

HONE_NMS_FN int64_t hone_nms_clamp(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

HONE_NMS_FN int64_t hone_nms_side(double extent, double mean) {
  const double cells = mean > 0 ? extent / mean : (double)HONE_NMS_MAX_CELLS;
  return cells >= HONE_NMS_MAX_CELLS ? HONE_NMS_MAX_CELLS : cells < 1 ? 1 : (int64_t)cells;
}

/* Cells about the candidates' mean size, at most HONE_NMS_MAX_CELLS a side
 * and four per candidate (so at most max(4 n, HONE_NMS_MAX_CELLS) cells).
 * 0 (scan linearly) when a coordinate is not finite. */
HONE_NMS_FN int hone_nms_grid_reset(hone_nms_grid* g, const hone_nms_box* boxes,
                                    const int64_t* cand, int64_t n) {
  double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY, w_sum = 0, h_sum = 0, over;
  int64_t i;
  for (i = 0; i < n; ++i) {
    const hone_nms_box* b = &boxes[cand[i]];
    if (!isfinite(b->x1) || !isfinite(b->x2) || !isfinite(b->y1) || !isfinite(b->y2)) return 0;
    x0 = x0 < b->x1 ? x0 : b->x1, y0 = y0 < b->y1 ? y0 : b->y1;
    x1 = x1 > b->x2 ? x1 : b->x2, y1 = y1 > b->y2 ? y1 : b->y2;
    w_sum += b->x2 - b->x1, h_sum += b->y2 - b->y1;
  }
  g->nx = hone_nms_side(x1 - x0, w_sum / (double)n);
  g->ny = hone_nms_side(y1 - y0, h_sum / (double)n);
  over = (double)(g->nx * g->ny) / (4 * (double)n);
  if (over > 1) {
    const double shrink = sqrt(over);
    const int64_t nx = (int64_t)((double)g->nx / shrink), ny = (int64_t)((double)g->ny / shrink);
    g->nx = nx > 1 ? nx : 1, g->ny = ny > 1 ? ny : 1;
  }
  g->x0 = x0, g->y0 = y0;
  g->cw = x1 > x0 ? (x1 - x0) / (double)g->nx : 1.0;
  g->ch = y1 > y0 ? (y1 - y0) / (double)g->ny : 1.0;
  for (i = 0; i < g->nx * g->ny; ++i) g->heads[i] = -1;
  g->used = 0, g->nwide = 0;
  return 1;
}

/* The cells `b` covers (a candidate's box: inside the extent): x0, y0, x1, y1. */
HONE_NMS_FN void hone_nms_span(const hone_nms_grid* g, const hone_nms_box* b, int64_t* s) {
  s[0] = hone_nms_clamp((int64_t)((b->x1 - g->x0) / g->cw), 0, g->nx - 1);
  s[1] = hone_nms_clamp((int64_t)((b->y1 - g->y0) / g->ch), 0, g->ny - 1);
  s[2] = hone_nms_clamp((int64_t)((b->x2 - g->x0) / g->cw), 0, g->nx - 1);
  s[3] = hone_nms_clamp((int64_t)((b->y2 - g->y0) / g->ch), 0, g->ny - 1);
}

HONE_NMS_FN void hone_nms_grid_add(hone_nms_grid* g, const hone_nms_box* boxes, int64_t k) {
  int64_t s[4], cx, cy;
  hone_nms_span(g, &boxes[k], s);
  if ((s[2] - s[0] + 1) * (s[3] - s[1] + 1) > HONE_NMS_MAX_SPAN) {
    g->wide[g->nwide++] = k;
    return;
  }
  for (cy = s[1]; cy <= s[3]; ++cy)
    for (cx = s[0]; cx <= s[2]; ++cx) {
      int64_t* e = g->pool + 2 * g->used;
      e[0] = k, e[1] = g->heads[cy * g->nx + cx];
      g->heads[cy * g->nx + cx] = g->used++;
    }
}

/* Whether a kept box sharing a cell with candidate `i` (or too wide for the
 * cells) suppresses it. */
HONE_NMS_FN int hone_nms_grid_suppressed(const hone_nms_grid* g, const hone_nms_box* boxes,
                                         int64_t i, double threshold) {
  int64_t s[4], cx, cy, k, e;
  for (k = 0; k < g->nwide; ++k)
    if (hone_nms_suppresses(&boxes[i], &boxes[g->wide[k]], threshold)) return 1;
  hone_nms_span(g, &boxes[i], s);
  for (cy = s[1]; cy <= s[3]; ++cy)
    for (cx = s[0]; cx <= s[2]; ++cx)
      for (e = g->heads[cy * g->nx + cx]; e >= 0; e = g->pool[2 * e + 1])
        if (hone_nms_suppresses(&boxes[i], &boxes[g->pool[2 * e]], threshold)) return 1;
  return 0;
}

/* `order` (n box indices) sorted by descending score, ties in their given
 * order (a stable bottom-up merge sort through `tmp`, n words). */
HONE_NMS_FN void hone_nms_sort(int64_t* order, int64_t* tmp, int64_t n, const double* sc) {
  int64_t width, lo, i;
  for (width = 1; width < n; width *= 2) {
    for (lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = lo + width < n ? lo + width : n;
      const int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t l = lo, r = mid, o = lo;
      while (l < mid && r < hi) tmp[o++] = sc[order[r]] > sc[order[l]] ? order[r++] : order[l++];
      while (l < mid) tmp[o++] = order[l++];
      while (r < hi) tmp[o++] = order[r++];
    }
    for (i = 0; i < n; ++i) order[i] = tmp[i];
  }
}

/* The scratch hone_nms_run needs for `nb` boxes a batch, in 8-byte words:
 * boxes (5 nb), scores, order, its merge buffer, kept, wide (nb each), the
 * grid's cell heads (at most max(4 nb, HONE_NMS_MAX_CELLS)) and its entries
 * (2 words, at most HONE_NMS_MAX_SPAN per kept box). */
HONE_NMS_FN int64_t hone_nms_scratch_words(int64_t nb) {
  const int64_t cells = 4 * nb > HONE_NMS_MAX_CELLS ? 4 * nb : HONE_NMS_MAX_CELLS;
  return 10 * nb + cells + 2 * HONE_NMS_MAX_SPAN * nb;
}

/* A coordinate or score: f64 or f32 data. */
HONE_NMS_FN double hone_nms_read(const void* p, int f64, int64_t i) {
  return f64 ? ((const double*)p)[i] : (double)((const float*)p)[i];
}

/* NonMaxSuppression of `boxes` [batches, nb, 4] and `scores` [batches,
 * classes, nb] (f64 when `f64`, else f32): per batch and class, the boxes
 * scoring above `thr` (every box unless `has_thr`) by descending score, ties
 * in box order, each kept unless a kept box's IoU with it is above `iou`, at
 * most `max_out` of them. Writes (batch, class, box) rows to `out` (room for
 * batches * classes * min(nb, max_out) rows) and returns how many;
 * `work` holds hone_nms_scratch_words(nb) words. */
HONE_NMS_FN int64_t hone_nms_run(const void* boxes, const void* scores, int f64, int64_t batches,
                                 int64_t classes, int64_t nb, int center, int64_t max_out,
                                 double iou, int has_thr, double thr, int64_t* work, int64_t* out) {
  hone_nms_box* box = (hone_nms_box*)(void*)work;
  double* sc = (double*)(void*)(work + 5 * nb);
  int64_t* order = work + 6 * nb;
  int64_t* tmp = work + 7 * nb;
  int64_t* kept = work + 8 * nb;
  hone_nms_grid g;
  int64_t count = 0, b, c, i, j;
  g.nx = g.ny = 1, g.used = g.nwide = 0;
  g.x0 = g.y0 = 0.0, g.cw = g.ch = 1.0;
  g.wide = work + 9 * nb;
  g.heads = work + 10 * nb;
  g.pool = g.heads + (4 * nb > HONE_NMS_MAX_CELLS ? 4 * nb : HONE_NMS_MAX_CELLS);
  if (max_out <= 0) return 0;
  for (b = 0; b < batches; ++b) {
    for (i = 0; i < nb; ++i) {
      double v[4];
      for (j = 0; j < 4; ++j) v[j] = hone_nms_read(boxes, f64, (b * nb + i) * 4 + j);
      box[i] = hone_nms_box_of(v, center);
    }
    for (c = 0; c < classes; ++c) {
      int64_t n = 0, nk = 0, gridded;
      for (i = 0; i < nb; ++i) {
        sc[i] = hone_nms_read(scores, f64, (b * classes + c) * nb + i);
        if (!has_thr || sc[i] > thr) order[n++] = i;
      }
      hone_nms_sort(order, tmp, n, sc);
      gridded = n >= HONE_NMS_GRID_FROM && hone_nms_grid_reset(&g, box, order, n);
      for (j = 0; j < n && nk < max_out; ++j) {
        const int64_t at = order[j];
        int suppressed = 0;
        if (gridded) {
          suppressed = hone_nms_grid_suppressed(&g, box, at, iou);
        } else {
          for (i = 0; i < nk && !suppressed; ++i)
            suppressed = hone_nms_suppresses(&box[at], &box[kept[i]], iou);
        }
        if (suppressed) continue;
        kept[nk++] = at;
        if (gridded) hone_nms_grid_add(&g, box, at);
        out[3 * count] = b, out[3 * count + 1] = c, out[3 * count + 2] = at;
        ++count;
      }
    }
  }
  return count;
}

#endif /* !__CUDACC_RTC__ */

#endif /* HONE_OPS_NMS_SELECT_H */
