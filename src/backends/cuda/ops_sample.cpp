// The cuda backend's GridSample and RoiAlign. GridSample: nearest, linear and
// cubic over 1 to 3 spatial dims, every padding mode, align_corners or not
// (RAFT's correlation lookup and flow warping, spatial transformers);
// hone_grid_sample (kernels/sample_ops.cu) takes each point's taps from
// hone_grid_taps (ops/grid_sample_taps.h). RoiAlign: avg and max, half_pixel
// and output_half_pixel (the R-CNN box heads' MultiScaleRoIAlign);
// hone_roi_align samples by ops/roi_align_points.h. Both headers are the C the
// reference and aot share, so the backends read the same points with the
// same weights and sum them in double in the same order.
#include <string>

#include "backends/cuda/op.h"
#include "backends/cuda/run_errors.h"
#include "ops/grid_sample.h"
#include "ops/roi_align.h"
#include "ops/shape_fn_nn.h"

namespace hone::cuda {

namespace {

Result<OpPlan> plan_grid_sample(const ops::GridSampleAttrs& a, const std::vector<dims_t>& in) {
  const dims_t& x = in[0];
  const dims_t& grid = in[1];
  HONE_TRY(dims_t out, ops::grid_sample_shape(x, grid));
  const size_t rank = x.size() - 2;
  if (rank > 3)
    return fail(ErrorCode::kUnsupported, "GridSample of input " + shape_to_string(x) +
                                             " (cuda samples 1 to 3 spatial dims)");
  long long in_plane = 1, out_plane = 1;
  long long d[3] = {1, 1, 1};
  for (size_t i = 0; i < rank; ++i) {
    d[i] = x[2 + i];
    in_plane *= x[2 + i];
    out_plane *= grid[1 + i];
  }
  if (in_plane == 0 && out_plane > 0 && x[0] * x[1] > 0)
    return fail(ErrorCode::kInvalidArgument,
                "GridSample of an empty input plane " + shape_to_string(x));
  OpPlan p;
  p.outputs = {std::move(out)};
  static const char* const kModes[] = {"nearest", "linear", "cubic"};
  p.kernel = std::string("grid_sample.f32.cuda.") + kModes[static_cast<int>(a.mode)];
  const long long points = x[0] * out_plane, c = x[1];
  const int r = static_cast<int>(rank), mode = static_cast<int>(a.mode),
            padding = static_cast<int>(a.padding), align = a.align_corners ? 1 : 0;
  p.run = [=](const ExecCtx& ctx, const Bind& b) -> Result<void> {
    if (points == 0 || c == 0) return {};
    HONE_TRY(CUfunction f, ctx.fixed.function("hone_grid_sample"));
    CUdeviceptr xp = b.in[0], gp = b.in[1], yp = b.out[0];
    long long n = points, ch = c, ip = in_plane, op = out_plane, d0 = d[0], d1 = d[1], d2 = d[2];
    int rk = r, m = mode, pad = padding, al = align;
    return launch_1d(ctx.d, f, ctx.stream, points,
                     {&xp, &gp, &yp, &n, &ch, &ip, &op, &rk, &d0, &d1, &d2, &m, &pad, &al});
  };
  return p;
}

Result<OpPlan> plan_roi_align(const ops::RoiAlignAttrs& a, const std::vector<dims_t>& in) {
  const dims_t& x = in[0];
  const dims_t& rois = in[1];
  const dims_t& batch = in[2];
  HONE_TRY(dims_t out, ops::roi_align_shape(x, rois, a.out_h, a.out_w));
  if (rois[1] != 4)
    return fail(ErrorCode::kInvalidArgument,
                "RoiAlign rois " + shape_to_string(rois) + " are not [num_rois, 4]");
  if (batch.size() != 1 || batch[0] != rois[0])
    return fail(ErrorCode::kInvalidArgument, "RoiAlign batch_indices " + shape_to_string(batch) +
                                                 " do not match rois " + shape_to_string(rois));
  const long long num = rois[0], c = x[1], h = x[2], w = x[3], n = x[0];
  if (num > 0 && c > 0 && (h == 0 || w == 0))
    return fail(ErrorCode::kInvalidArgument,
                "RoiAlign of an empty feature map " + shape_to_string(x));
  OpPlan p;
  p.outputs = {std::move(out)};
  p.kernel = std::string("roi_align.f32.cuda.") + (a.max_mode ? "max" : "avg");
  const long long oh = a.out_h, ow = a.out_w, sampling = a.sampling;
  const double scale = a.spatial_scale;
  const int half = a.half_pixel ? 1 : 0, max_mode = a.max_mode ? 1 : 0;
  const long long total = num * c * oh * ow;
  p.run = [=](const ExecCtx& ctx, const Bind& b) -> Result<void> {
    if (total == 0) return {};
    HONE_TRY(CUfunction f, ctx.fixed.function("hone_roi_align"));
    CUdeviceptr xp = b.in[0], rp = b.in[1], bp = b.in[2], yp = b.out[0], err = ctx.errors;
    long long nr = num, ch = c, hh = h, ww = w, nn = n, o_h = oh, o_w = ow, s = sampling;
    double sc = scale;
    int hp = half, mx = max_mode;
    unsigned long long code = run_error_code(kRunErrorIndex, b.step);
    return launch_1d(
        ctx.d, f, ctx.stream, total,
        {&xp, &rp, &bp, &yp, &nr, &ch, &hh, &ww, &nn, &o_h, &o_w, &s, &sc, &hp, &mx, &err, &code});
  };
  return p;
}

}  // namespace

Result<Unit> create_roi_align(const BlockInfo& b, const Node& n) {
  HONE_TRY(const ops::RoiAlignAttrs a, ops::roi_align_attrs(n, b.g.opset()));
  Unit u;
  u.label = n.describe();
  u.inputs = {n.inputs[0], n.inputs[1], n.inputs[2]};
  u.outputs = {n.outputs[0]};
  u.op = std::make_unique<FnOp>(
      [a](const std::vector<dims_t>& in, const PlanEnv&) { return plan_roi_align(a, in); });
  return u;
}

Result<Unit> create_grid_sample(const BlockInfo& b, const Node& n) {
  HONE_TRY(const ops::GridSampleAttrs a, ops::grid_sample_attrs(n, b.g.opset()));
  Unit u;
  u.label = n.describe();
  u.inputs = {n.inputs[0], n.inputs[1]};
  u.outputs = {n.outputs[0]};
  u.op = std::make_unique<FnOp>(
      [a](const std::vector<dims_t>& in, const PlanEnv&) { return plan_grid_sample(a, in); });
  return u;
}

}  // namespace hone::cuda
