// The cuda backend's GridSample: nearest, linear and cubic over 1 to 3
// spatial dims, every padding mode, align_corners or not (RAFT's correlation
// lookup and flow warping, spatial transformers). hone_grid_sample
// (kernels/sample_ops.cu) takes each point's taps from hone_grid_taps, the C
// the reference and aot share (ops/grid_sample_taps.h), so the three read the
// same points with the same weights and sum them in double in the same order.
#include <string>

#include "backends/cuda/op.h"
#include "ops/grid_sample.h"

namespace hone::cuda {

namespace {

Result<OpPlan> plan_grid_sample(const ops::GridSampleAttrs& a, const std::vector<dims_t>& in) {
  const dims_t& x = in[0];
  const dims_t& grid = in[1];
  const size_t rank = x.size() < 3 ? 0 : x.size() - 2;
  if (rank < 1 || rank > 3)
    return fail(ErrorCode::kUnsupported, "GridSample of input " + shape_to_string(x) +
                                             " (cuda samples 1 to 3 spatial dims)");
  if (grid.size() != x.size() || grid[0] != x[0] || grid.back() != static_cast<int64_t>(rank))
    return fail(ErrorCode::kInvalidArgument,
                "GridSample grid " + shape_to_string(grid) + " does not fit input " +
                    shape_to_string(x) + ": expected [N, out..., " + std::to_string(rank) + "]");
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
  dims_t out = {x[0], x[1]};
  out.insert(out.end(), grid.begin() + 1, grid.end() - 1);
  p.outputs = {out};
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

}  // namespace

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
