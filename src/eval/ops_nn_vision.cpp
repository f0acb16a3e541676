// Vision ops: RoiAlign, MaxRoiPool, GridSample, AffineGrid, NonMaxSuppression.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "eval/kernel_util.h"
#include "eval/ops_nn_internal.h"
#include "ops/grid_sample.h"
#include "ops/nms.h"
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

/// NonMaxSuppression: the selection is ops/nms_select.h's (the C that onednn
/// and aot's generated code run too), over the inputs read as doubles.
Result<void> non_max_suppression(KernelContext& ctx) {
  HONE_TRY(const Tensor* boxes_t, ctx.tensor(0));
  HONE_TRY(const Tensor* scores_t, ctx.tensor(1));
  HONE_TRY(const ops::NmsDims d, ops::nms_dims(boxes_t->shape(), scores_t->shape()));
  auto optional = [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
  HONE_TRY(const ops::NmsParams p,
           ops::nms_params(ctx.node(), optional(2), optional(3), optional(4)));
  const HostVector<double> boxes = to_doubles(*boxes_t), scores = to_doubles(*scores_t);
  std::vector<int64_t> work(static_cast<size_t>(d.scratch_words()));
  std::vector<int64_t> selected(static_cast<size_t>(d.rows_max(p.max_out) * 3));
  const int64_t count =
      ops::nms_select(p, d, boxes.data(), scores.data(), true, work.data(), selected.data());
  selected.resize(static_cast<size_t>(count * 3));
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
