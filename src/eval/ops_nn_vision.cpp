// Vision ops: RoiAlign, MaxRoiPool, GridSample, AffineGrid, NonMaxSuppression.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "eval/kernel_util.h"
#include "eval/ops_nn_internal.h"
#include "ops/grid_sample.h"
#include "ops/roi_align.h"

namespace hone::eval::nn {
namespace {

// --- RoiAlign -------------------------------------------------------------------

// The sampling (roi transform, bins, bilinear points, avg or max) is
// ops/roi_align.h's, which onednn's own step shares.
Result<void> roi_align(KernelContext& ctx) {
  const std::string op = "RoiAlign";
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* rois_t, ctx.tensor(1));
  HONE_TRY(const Tensor* batch_t, ctx.tensor(2));
  if (x->rank() != 4)
    return fail(ErrorCode::kInvalidArgument,
                op + " input X must be [N, C, H, W], got " + x->describe());
  if (rois_t->rank() != 2 || rois_t->dim(1) != 4)
    return fail(ErrorCode::kInvalidArgument,
                op + " rois must be [num_rois, 4], got " + rois_t->describe());
  const int64_t num = rois_t->dim(0);
  if (batch_t->rank() != 1 || batch_t->dim(0) != num || !is_integer(batch_t->dtype()))
    return fail(ErrorCode::kInvalidArgument, op + " batch_indices " + batch_t->describe() +
                                                 " must be an integer [" + std::to_string(num) +
                                                 "]");
  if (!is_floating(x->dtype()))
    return fail(unsupported_dtype(x->dtype(), "a float X").add_context(op));
  HONE_TRY(const ops::RoiAlignAttrs a, ops::roi_align_attrs(ctx.node(), ctx.opset()));
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
  const HostVector<double> xs = to_doubles(*x), rois = to_doubles(*rois_t);
  const std::vector<int64_t> batch = to_int64s(*batch_t);
  HONE_CHECK_OK(ops::check_roi_batches(batch.data(), num, n));
  HostVector<double> out(static_cast<size_t>(num * c * a.out_h * a.out_w), 0.0);
  ctx.pool().parallel_for(num, [&](int64_t b, int64_t e) {
    ops::roi_align_rois(a, c, h, w, xs.data(), rois.data(), batch.data(), out.data(), b, e);
  });
  ctx.set_output(0, from_doubles(x->dtype(), {num, c, a.out_h, a.out_w}, out));
  return {};
}

// --- GridSample -----------------------------------------------------------------

// The sampling (coordinates, padding, nearest/linear/cubic taps over any number
// of spatial dims) is ops/grid_sample.h's, which onednn's own step shares.
Result<void> grid_sample(KernelContext& ctx) {
  const std::string op = "GridSample";
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* grid_t, ctx.tensor(1));
  HONE_CHECK_OK(check_nc_input(*x, 3, op));
  const size_t r = x->rank() - 2;
  if (grid_t->rank() != x->rank() || grid_t->dim(0) != x->dim(0) ||
      grid_t->dim(grid_t->rank() - 1) != static_cast<int64_t>(r))
    return fail(ErrorCode::kInvalidArgument, op + " grid " + grid_t->describe() +
                                                 " must be [N, out..., " + std::to_string(r) +
                                                 "] for X " + x->describe());
  if (!is_floating(x->dtype()))
    return fail(unsupported_dtype(x->dtype(), "a float X").add_context(op));
  HONE_TRY(const ops::GridSampleAttrs attrs, ops::grid_sample_attrs(ctx.node(), ctx.opset()));
  const std::vector<int64_t> dims(x->shape().begin() + 2, x->shape().end());
  const ops::GridSampler s(attrs, dims);
  const int64_t n = x->dim(0), c = x->dim(1), in_plane = product(dims);
  std::vector<int64_t> out_shape{n, c};
  out_shape.insert(out_shape.end(), grid_t->shape().begin() + 1, grid_t->shape().end() - 1);
  const int64_t out_plane = product(out_shape, 2);
  const HostVector<double> xs = to_doubles(*x), grid = to_doubles(*grid_t);
  HostVector<double> out(static_cast<size_t>(n * c * out_plane), 0.0);
  ctx.pool().parallel_for(n * out_plane, [&](int64_t b, int64_t e) {
    ops::grid_sample_points(s, c, in_plane, out_plane, xs.data(), grid.data(), out.data(), b, e);
  });
  ctx.set_output(0, from_doubles(x->dtype(), out_shape, out));
  return {};
}

// --- NonMaxSuppression ------------------------------------------------------------

struct Box {
  double y1, x1, y2, x2;
};

Box make_box(const double* b, bool center) {
  if (center) {
    const double xc = b[0], yc = b[1], w = b[2], h = b[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

/// Whether candidate `a` is suppressed by kept box `b`: their IoU is above
/// `threshold` (in [0, 1]). Boxes that do not overlap (no positive height or
/// width in common) have IoU 0 and never suppress: the early exit changes
/// no answer. The areas are the boxes' own, computed once.
bool suppresses(const Box& a, double area_a, const Box& b, double area_b, double threshold) {
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  if (!(ih > 0)) return false;
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (!(iw > 0)) return false;
  const double inter = ih * iw;
  const double uni = area_a + area_b - inter;
  return uni > 0 && inter / uni > threshold;
}

/// The boxes already kept for one class, found by where they lie: a uniform
/// grid over the candidates' extent, each kept box listed in the cells it
/// covers (one too wide for that goes to a list every query reads). A box
/// can only be suppressed by a kept box it overlaps, which shares a cell
/// with it (the cell of any point of their overlap), so querying the
/// candidate's cells finds every box that can suppress it: the same answer
/// as comparing with every kept box, at a fraction of the pairs when the
/// candidates spread out (a detector's per-class boxes offset apart, as
/// torchvision's batched NMS does, or thousands of small boxes).
class KeptGrid {
 public:
  /// Cells about the candidates' mean size, at most kMaxCells a side and
  /// four per candidate. False (use a linear scan) when a coordinate is not
  /// finite.
  bool reset(const std::vector<Box>& boxes, const std::vector<int64_t>& candidates) {
    wide_.clear();
    double x0 = std::numeric_limits<double>::infinity(), y0 = x0, x1 = -x0, y1 = -x0;
    double w_sum = 0, h_sum = 0;
    for (int64_t i : candidates) {
      const Box& b = boxes[static_cast<size_t>(i)];
      if (!std::isfinite(b.x1) || !std::isfinite(b.x2) || !std::isfinite(b.y1) ||
          !std::isfinite(b.y2))
        return false;
      x0 = std::min(x0, b.x1), y0 = std::min(y0, b.y1);
      x1 = std::max(x1, b.x2), y1 = std::max(y1, b.y2);
      w_sum += b.x2 - b.x1, h_sum += b.y2 - b.y1;
    }
    const double n = static_cast<double>(candidates.size());
    auto side = [&](double extent, double mean) {
      const double cells = mean > 0 ? extent / mean : kMaxCells;
      return std::clamp<int64_t>(static_cast<int64_t>(cells), 1, kMaxCells);
    };
    nx_ = side(x1 - x0, w_sum / n);
    ny_ = side(y1 - y0, h_sum / n);
    if (const double over = static_cast<double>(nx_ * ny_) / (4 * n); over > 1) {
      const double shrink = std::sqrt(over);
      nx_ = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(nx_) / shrink));
      ny_ = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(ny_) / shrink));
    }
    x0_ = x0, y0_ = y0;
    cw_ = x1 > x0 ? (x1 - x0) / static_cast<double>(nx_) : 1.0;
    ch_ = y1 > y0 ? (y1 - y0) / static_cast<double>(ny_) : 1.0;
    cells_.resize(static_cast<size_t>(nx_ * ny_));
    for (auto& c : cells_) c.clear();  // keeps their capacity for the next class
    return true;
  }

  void add(const Box& b, int64_t k) {
    const Span s = span(b);
    if ((s.cx1 - s.cx0 + 1) * (s.cy1 - s.cy0 + 1) > kMaxSpan) {
      wide_.push_back(k);
      return;
    }
    for (int64_t cy = s.cy0; cy <= s.cy1; ++cy)
      for (int64_t cx = s.cx0; cx <= s.cx1; ++cx)
        cells_[static_cast<size_t>(cy * nx_ + cx)].push_back(k);
  }

  /// Whether `pred(k)` holds for some kept box `k` sharing a cell with `b`
  /// (or too wide for the cells); a box may be visited twice.
  template <class Pred>
  bool any_near(const Box& b, Pred&& pred) const {
    for (int64_t k : wide_)
      if (pred(k)) return true;
    const Span s = span(b);
    for (int64_t cy = s.cy0; cy <= s.cy1; ++cy)
      for (int64_t cx = s.cx0; cx <= s.cx1; ++cx)
        for (int64_t k : cells_[static_cast<size_t>(cy * nx_ + cx)])
          if (pred(k)) return true;
    return false;
  }

 private:
  static constexpr int64_t kMaxCells = 512;  // a side
  static constexpr int64_t kMaxSpan = 16;    // cells a kept box is listed in
  struct Span {
    int64_t cx0, cy0, cx1, cy1;
  };
  /// The cells `b` covers (a candidate's box: inside the extent).
  Span span(const Box& b) const {
    auto cell = [](double v, double origin, double size, int64_t count) {
      return std::clamp<int64_t>(static_cast<int64_t>((v - origin) / size), 0, count - 1);
    };
    return {cell(b.x1, x0_, cw_, nx_), cell(b.y1, y0_, ch_, ny_), cell(b.x2, x0_, cw_, nx_),
            cell(b.y2, y0_, ch_, ny_)};
  }

  int64_t nx_ = 1, ny_ = 1;
  double x0_ = 0, y0_ = 0, cw_ = 1, ch_ = 1;
  std::vector<std::vector<int64_t>> cells_;
  std::vector<int64_t> wide_;
};

/// Below this many candidates a class is scanned linearly (the grid costs more).
constexpr size_t kGridFrom = 64;

Result<void> non_max_suppression(KernelContext& ctx) {
  const std::string op = "NonMaxSuppression";
  HONE_TRY(const Tensor* boxes_t, ctx.tensor(0));
  HONE_TRY(const Tensor* scores_t, ctx.tensor(1));
  if (boxes_t->rank() != 3 || boxes_t->dim(2) != 4)
    return fail(ErrorCode::kInvalidArgument,
                op + " boxes must be [batches, boxes, 4], got " + boxes_t->describe());
  if (scores_t->rank() != 3 || scores_t->dim(0) != boxes_t->dim(0) ||
      scores_t->dim(2) != boxes_t->dim(1))
    return fail(ErrorCode::kInvalidArgument, op + " scores " + scores_t->describe() +
                                                 " must be [batches, classes, boxes] for boxes " +
                                                 boxes_t->describe());
  int64_t max_out = 0;
  if (ctx.has_input(2) && ctx.input(2).numel() > 0) max_out = to_int64s(ctx.input(2))[0];
  double iou_threshold = 0.0;
  if (ctx.has_input(3) && ctx.input(3).numel() > 0) iou_threshold = to_doubles(ctx.input(3))[0];
  bool has_score_threshold = ctx.has_input(4) && ctx.input(4).numel() > 0;
  const double score_threshold = has_score_threshold ? to_doubles(ctx.input(4))[0] : 0.0;
  if (iou_threshold < 0.0 || iou_threshold > 1.0)
    return fail(ErrorCode::kInvalidArgument,
                op + " iou_threshold " + std::to_string(iou_threshold) + " must be in [0, 1]");
  const int64_t center = ctx.node().attr_int("center_point_box", 0);
  if (center != 0 && center != 1)
    return fail(ErrorCode::kInvalidArgument, op + " center_point_box must be 0 or 1");
  const int64_t batches = boxes_t->dim(0), nb = boxes_t->dim(1), classes = scores_t->dim(1);
  const HostVector<double> boxes = to_doubles(*boxes_t), scores = to_doubles(*scores_t);
  std::vector<int64_t> selected;
  std::vector<Box> all(static_cast<size_t>(nb));
  std::vector<double> area(static_cast<size_t>(nb));
  std::vector<int64_t> order, kept;
  KeptGrid grid;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < nb; ++i) {
      const Box& x = all[i] = make_box(boxes.data() + (b * nb + i) * 4, center == 1);
      area[i] = (x.y2 - x.y1) * (x.x2 - x.x1);
    }
    for (int64_t c = 0; c < classes; ++c) {
      if (max_out <= 0) break;
      const double* sc = scores.data() + (b * classes + c) * nb;
      order.clear();
      for (int64_t i = 0; i < nb; ++i)
        if (!has_score_threshold || sc[i] > score_threshold) order.push_back(i);
      // Sorted once; ties keep the boxes' order (the selection order is part of the output).
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t l, int64_t r) { return sc[l] > sc[r]; });
      kept.clear();
      const bool gridded = order.size() >= kGridFrom && grid.reset(all, order);
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        const Box& box = all[i];
        const double a = area[i];
        auto by = [&](int64_t k) { return suppresses(box, a, all[k], area[k], iou_threshold); };
        if (gridded ? grid.any_near(box, by) : std::any_of(kept.begin(), kept.end(), by)) continue;
        kept.push_back(i);
        if (gridded) grid.add(box, i);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  const int64_t count = static_cast<int64_t>(selected.size() / 3);
  ctx.set_output(0, Tensor::from<int64_t>({count, 3}, selected));
  return {};
}

// --- MaxRoiPool -------------------------------------------------------------------

/// MaxRoiPool (Fast R-CNN RoI pooling): each RoI [batch, x1, y1, x2, y2],
/// scaled and rounded to pixels, is split into pooled_shape bins and each bin
/// gives its maximum (0 for an empty bin), as ONNX Runtime computes it.
Result<void> max_roi_pool(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* rois_t, ctx.tensor(1));
  const Node& node = ctx.node();
  if (x->rank() != 4 || rois_t->rank() != 2 || rois_t->dim(1) != 5)
    return fail(ErrorCode::kInvalidArgument,
                "MaxRoiPool needs X [N, C, H, W] and rois [R, 5], got " + x->describe() + " and " +
                    rois_t->describe());
  const std::vector<int64_t> pooled = node.attr_ints("pooled_shape");
  if (pooled.size() != 2 || pooled[0] <= 0 || pooled[1] <= 0)
    return fail(
        ErrorCode::kInvalidArgument,
        "MaxRoiPool needs pooled_shape of two positive values, got " + list_to_string(pooled));
  const double scale = node.attr_float("spatial_scale", 1.0f);
  const int64_t N = x->dim(0), C = x->dim(1), H = x->dim(2), W = x->dim(3), R = rois_t->dim(0);
  const int64_t ph_n = pooled[0], pw_n = pooled[1];
  HONE_CHECK_OK(check_result_size({R, C, ph_n, pw_n}, "MaxRoiPool output"));
  const HostVector<double> xv = to_doubles(*x), rois = to_doubles(*rois_t);
  HostVector<double> out(static_cast<size_t>(R * C * ph_n * pw_n), 0.0);
  for (int64_t r = 0; r < R; ++r) {
    const double* roi = rois.data() + r * 5;
    const int64_t b = static_cast<int64_t>(roi[0]);
    if (b < 0 || b >= N)
      return fail(ErrorCode::kInvalidArgument, "MaxRoiPool RoI " + std::to_string(r) +
                                                   " has batch index " + std::to_string(b) +
                                                   " outside [0, " + std::to_string(N) + ")");
    const int64_t x1 = static_cast<int64_t>(std::round(roi[1] * scale));
    const int64_t y1 = static_cast<int64_t>(std::round(roi[2] * scale));
    const int64_t x2 = static_cast<int64_t>(std::round(roi[3] * scale));
    const int64_t y2 = static_cast<int64_t>(std::round(roi[4] * scale));
    const double bin_h =
        static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<double>(ph_n);
    const double bin_w =
        static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<double>(pw_n);
    for (int64_t c = 0; c < C; ++c) {
      const double* plane = xv.data() + (b * C + c) * H * W;
      for (int64_t ph = 0; ph < ph_n; ++ph)
        for (int64_t pw = 0; pw < pw_n; ++pw) {
          auto clamp_to = [](int64_t v, int64_t hi) {
            return std::min(std::max<int64_t>(v, 0), hi);
          };
          const int64_t hs = clamp_to(static_cast<int64_t>(std::floor(ph * bin_h)) + y1, H);
          const int64_t he = clamp_to(static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + y1, H);
          const int64_t ws = clamp_to(static_cast<int64_t>(std::floor(pw * bin_w)) + x1, W);
          const int64_t we = clamp_to(static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + x1, W);
          double m = 0.0;
          if (he > hs && we > ws) {
            m = -std::numeric_limits<double>::infinity();
            for (int64_t h = hs; h < he; ++h)
              for (int64_t w = ws; w < we; ++w) m = std::max(m, plane[h * W + w]);
          }
          out[static_cast<size_t>(((r * C + c) * ph_n + ph) * pw_n + pw)] = m;
        }
    }
  }
  ctx.set_output(0, from_doubles(x->dtype(), {R, C, ph_n, pw_n}, out));
  return {};
}

// --- AffineGrid -------------------------------------------------------------------

/// AffineGrid-20: the sampling grid GridSample reads, theta (N, 2, 3) or
/// (N, 3, 4) applied to the normalized coordinates of each output pixel;
/// grid[..., 0] is x (the last spatial dim), as GridSample expects.
Result<void> affine_grid(KernelContext& ctx) {
  HONE_TRY(const Tensor* theta_t, ctx.tensor(0));
  HONE_TRY(const Tensor* size_t_, ctx.tensor(1));
  HONE_TRY(const std::vector<int64_t> size, read_int_list(*size_t_, "AffineGrid size"));
  const bool align = ctx.node().attr_int("align_corners", 0) != 0;
  if (size.size() != 4 && size.size() != 5)
    return fail(ErrorCode::kInvalidArgument,
                "AffineGrid size " + size_t_->describe() +
                    " must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) values");
  const int64_t sp = static_cast<int64_t>(size.size()) - 2;  // 2 or 3 spatial dims
  const int64_t n = size[0];
  if (theta_t->rank() != 3 || theta_t->dim(0) != n || theta_t->dim(1) != sp ||
      theta_t->dim(2) != sp + 1)
    return fail(ErrorCode::kInvalidArgument,
                "AffineGrid theta " + theta_t->describe() + " must be [" + std::to_string(n) +
                    ", " + std::to_string(sp) + ", " + std::to_string(sp + 1) + "]");
  if (!is_floating(theta_t->dtype()))
    return fail(unsupported_dtype(theta_t->dtype(), "a floating-point type")
                    .add_context("AffineGrid theta"));
  // Normalized coordinate of index i along a dim of `len` pixels.
  auto coord = [&](int64_t i, int64_t len) {
    if (align)
      return len > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(len - 1) : -1.0;
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(len);
  };
  const std::vector<int64_t> dims(size.begin() + 2, size.end());  // (D,) H, W
  for (int64_t d : dims)
    if (d < 0)
      return fail(ErrorCode::kInvalidArgument,
                  "AffineGrid size " + size_t_->describe() + " has a negative dim");
  std::vector<int64_t> shape{n};
  shape.insert(shape.end(), dims.begin(), dims.end());
  shape.push_back(sp);
  HONE_CHECK_OK(check_result_size(shape, "AffineGrid grid"));
  const int64_t points = product(dims);
  const HostVector<double> theta = to_doubles(*theta_t);
  HostVector<double> out(static_cast<size_t>(n * points * sp));
  std::vector<double> p(static_cast<size_t>(sp) + 1, 1.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t pt = 0; pt < points; ++pt) {
      // p = (x, y[, z], 1): x from the last dim, y the one before, ...
      int64_t r = pt;
      for (int64_t d = sp - 1; d >= 0; --d) {
        p[static_cast<size_t>(sp - 1 - d)] =
            coord(r % dims[static_cast<size_t>(d)], dims[static_cast<size_t>(d)]);
        r /= dims[static_cast<size_t>(d)];
      }
      for (int64_t row = 0; row < sp; ++row) {
        double v = 0.0;
        for (int64_t k = 0; k <= sp; ++k)
          v +=
              theta[static_cast<size_t>((b * sp + row) * (sp + 1) + k)] * p[static_cast<size_t>(k)];
        out[static_cast<size_t>((b * points + pt) * sp + row)] = v;
      }
    }
  ctx.set_output(0, from_doubles(theta_t->dtype(), shape, out));
  return {};
}

}  // namespace

void register_vision_ops(OpRegistry& r) {
  r.add("AffineGrid", affine_grid);
  r.add("MaxRoiPool", max_roi_pool);
  r.add("RoiAlign", roi_align);
  r.add("GridSample", grid_sample);
  r.add("NonMaxSuppression", non_max_suppression);
}

}  // namespace hone::eval::nn
