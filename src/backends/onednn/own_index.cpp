// GatherND and the Concat of integer or bool values as hone's own steps in a
// oneDNN block (oneDNN 2.6 has no gather and no 64-bit integers): the
// argmax-pooled token of a text encoder (GatherND of the hidden states by
// indices that a Concat of a batch Range and an ArgMax made) and the kNN
// features of a point-cloud net stay in the block instead of splitting it
// around reference nodes. Both move plain bytes; GatherND reads its tuples
// through ops::gather_nd_layout, checks each index when it reads it and
// fails the run naming it, as the reference does. GridSample of f32 (RAFT's
// correlation lookup, spatial transformers) and RoiAlign (an R-CNN's box
// head) sample with the reference's taps (ops/grid_sample.h, ops/roi_align.h).
#include "backends/onednn/own_index.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/common/node_query.h"
#include "ops/axis.h"
#include "ops/gather.h"
#include "ops/grid_sample.h"
#include "ops/grid_sample_taps.h"
#include "ops/roi_align.h"

namespace hone::onednn {
namespace {

using node_query::val;

bool own_bytes_dtype(DType t) {
  return t == DType::kF32 || t == DType::kI64 || t == DType::kI32 || t == DType::kBool;
}

std::string text(DType t) {
  return std::string(dtype_name(t));
}

template <class I>
Result<void> gather_nd_loop(const std::string& node, const ops::GatherNdLayout& l,
                            const std::byte* data, const I* idx, std::byte* out, size_t elem) {
  const size_t slice = static_cast<size_t>(l.slice) * elem;
  for (int64_t bi = 0; bi < l.batch; ++bi)
    for (int64_t t = 0; t < l.tuples; ++t) {
      const I* tuple = idx + (bi * l.tuples + t) * l.k;
      int64_t off = bi * l.batch_block;
      for (int64_t j = 0; j < l.k; ++j) {
        const auto uj = static_cast<size_t>(j);
        auto v = static_cast<int64_t>(tuple[j]);
        if (v < -l.dims[uj] || v >= l.dims[uj])
          return fail(ErrorCode::kInvalidArgument,
                      "GatherND " + node + ": index " + std::to_string(v) + " (tuple " +
                          std::to_string(bi * l.tuples + t) + ", position " + std::to_string(j) +
                          ") is out of range for a dim of " + std::to_string(l.dims[uj]));
        if (v < 0) v += l.dims[uj];
        off += v * l.strides[uj];
      }
      std::memcpy(out + static_cast<size_t>(bi * l.tuples + t) * slice,
                  data + static_cast<size_t>(off) * elem, slice);
    }
  return {};
}

}  // namespace

std::optional<std::string> own_index_why_not(const Graph& g, const Node& n) {
  if (n.op_type == "GridSample") {
    const Value* x = val(g, n, 0);
    const Value* grid = val(g, n, 1);
    if (x == nullptr || grid == nullptr) return "needs X and a grid";
    for (const Value* v : {x, grid})
      if (v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
        return "input is " + text(v->dtype) + "; f32 only";
    if (auto a = ops::grid_sample_attrs(n, g.opset()); !a) return a.error().message();
    return "";
  }
  if (n.op_type == "RoiAlign") {
    const Value* x = val(g, n, 0);
    const Value* rois = val(g, n, 1);
    const Value* batch = val(g, n, 2);
    if (x == nullptr || rois == nullptr || batch == nullptr)
      return "needs X, rois and batch indices";
    for (const Value* v : {x, rois})
      if (v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
        return "input is " + text(v->dtype) + "; f32 only";
    if (batch->dtype != DType::kI64 && batch->dtype != DType::kI32 &&
        batch->dtype != DType::kUndefined)
      return "batch indices are " + text(batch->dtype) + "; i64 or i32 only";
    if (auto a = ops::roi_align_attrs(n, g.opset()); !a) return a.error().message();
    return "";
  }
  if (n.op_type == "GatherND") {
    const Value* x = val(g, n, 0);
    const Value* idx = val(g, n, 1);
    if (x == nullptr || idx == nullptr) return "needs data and indices";
    if (!own_bytes_dtype(x->dtype) && x->dtype != DType::kUndefined)
      return "data is " + text(x->dtype) + " (onednn gathers f32, i64, i32 and bool)";
    if (idx->dtype != DType::kI64 && idx->dtype != DType::kI32 && idx->dtype != DType::kUndefined)
      return "indices are " + text(idx->dtype) + "; i64 or i32 only";
    if (n.attr_int("batch_dims", 0) < 0) return "a negative batch_dims";
    return "";
  }
  if (n.op_type != "Concat") return std::nullopt;
  // Concat of f32 values is oneDNN's concat (lower_shape.cpp); of integer or
  // bool values (indices assembled at run time) hone's own copies.
  DType t = DType::kUndefined;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value* v = val(g, n, i);
    if (v == nullptr || v->dtype == DType::kF32 || v->dtype == DType::kUndefined) continue;
    if (!own_bytes_dtype(v->dtype))
      return "input " + std::to_string(i) + " is " + text(v->dtype) +
             " (onednn joins f32, i64, i32 and bool)";
    if (t != DType::kUndefined && v->dtype != t)
      return "inputs of " + text(t) + " and " + text(v->dtype);
    t = v->dtype;
  }
  if (t == DType::kUndefined) return std::nullopt;  // f32: the primitive's
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (const Value* v = val(g, n, i); v != nullptr && v->dtype == DType::kF32)
      return "inputs of f32 and " + text(t);
  return "";
}

bool lowers_own_index(const PlanBuilder& b, const Node& n) {
  if (n.op_type == "GatherND" || n.op_type == "GridSample" || n.op_type == "RoiAlign") return true;
  if (n.op_type != "Concat") return false;
  for (ValueId v : n.inputs)
    if (v >= 0 && b.dtype(v) != DType::kF32 && b.dtype(v) != DType::kUndefined) return true;
  return false;
}

namespace {

Result<void> lower_gather_nd(PlanBuilder& b, const Node& n) {
  const DType data_t = b.dtype(n.inputs[0]), index_t = b.dtype(n.inputs[1]);
  if (index_t != DType::kI64 && index_t != DType::kI32)
    return fail(ErrorCode::kUnsupported, "GatherND indices are " + text(index_t));
  if (!own_bytes_dtype(data_t))
    return fail(ErrorCode::kUnsupported, "GatherND of " + text(data_t) + " data");
  HONE_TRY(const ops::GatherNdLayout l,
           ops::gather_nd_layout(value_dims(b, n.inputs[0]), value_dims(b, n.inputs[1]),
                                 n.attr_int("batch_dims", 0)));
  if (shape_numel(l.out) == 0)
    return fail(ErrorCode::kUnsupported, "GatherND with an empty result");
  const BufferRef data = b.data(n.inputs[0]), indices = b.data(n.inputs[1]);
  const BufferRef dst = new_plain_value(b, l.out, data_t);
  const std::string node = n.describe();
  const size_t elem = dtype_size(data_t);
  const auto layout = std::make_shared<const ops::GatherNdLayout>(l);
  OwnFn fn;
  if (index_t == DType::kI64)
    fn = [=](void* const* p) {
      return gather_nd_loop(node, *layout, static_cast<const std::byte*>(p[0]),
                            static_cast<const int64_t*>(p[1]), static_cast<std::byte*>(p[2]), elem);
    };
  else
    fn = [=](void* const* p) {
      return gather_nd_loop(node, *layout, static_cast<const std::byte*>(p[0]),
                            static_cast<const int32_t*>(p[1]), static_cast<std::byte*>(p[2]), elem);
    };
  b.add_own_step("gather_nd", std::move(fn),
                 {{DNNL_ARG_SRC_0, data}, {DNNL_ARG_SRC_1, indices}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{l.out, dst, data_t});
  return {};
}

/// GridSample over two spatial dims [h, w] (RAFT's correlation lookup: 256
/// planes of one channel, 49 points each, 8 times a run): each point's taps
/// from its two axes' (hone_grid_axis_taps), in hone_grid_taps's order (the
/// H tap fastest) and with its weights (wy * wx), summed in double as
/// ops::grid_sample_points sums them, so every value is the reference's to
/// the bit, without the general path's per-point tap vectors and loops.
void grid_sample_2d(const ops::GridSampleAttrs& a, int64_t h, int64_t w, int64_t c,
                    int64_t out_plane, const float* x, const float* grid, float* y,
                    int64_t points) {
  const int mode = static_cast<int>(a.mode), padding = static_cast<int>(a.padding);
  const int align = a.align_corners ? 1 : 0;
  for (int64_t p = 0; p < points; ++p) {
    const int64_t bn = p / out_plane, o = p % out_plane;
    int64_t ix[4], iy[4], off[16];
    double wx[4], wy[4], wt[16];
    const int nx = hone_grid_axis_taps(grid[2 * p], w, mode, padding, align, ix, wx);
    const int ny = hone_grid_axis_taps(grid[2 * p + 1], h, mode, padding, align, iy, wy);
    int n = 0;
    for (int i = 0; i < nx; ++i)
      for (int j = 0; j < ny; ++j)
        if (ix[i] >= 0 && iy[j] >= 0) {
          off[n] = iy[j] * w + ix[i];
          wt[n++] = wy[j] * wx[i];
        }
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* plane = x + (bn * c + ch) * h * w;
      double acc = 0.0;
      for (int k = 0; k < n; ++k) acc += wt[k] * static_cast<double>(plane[off[k]]);
      y[(bn * c + ch) * out_plane + o] = static_cast<float>(acc);
    }
  }
}

/// GridSample of x [N, C, spatial...] by grid [N, out..., r] into [N, C, out...].
Result<void> lower_grid_sample(PlanBuilder& b, const Node& n) {
  if (b.dtype(n.inputs[0]) != DType::kF32 || b.dtype(n.inputs[1]) != DType::kF32)
    return fail(ErrorCode::kUnsupported, "GridSample of " + text(b.dtype(n.inputs[0])) + " by " +
                                             text(b.dtype(n.inputs[1])) + "; f32 only");
  const dims_t x = value_dims(b, n.inputs[0]), grid = value_dims(b, n.inputs[1]);
  if (x.size() < 3 || grid.size() != x.size() || grid[0] != x[0] ||
      grid.back() != static_cast<int64_t>(x.size() - 2))
    return fail(ErrorCode::kInvalidArgument,
                "GridSample grid " + shape_to_string(grid) + " must be [N, out..., " +
                    std::to_string(x.size() - 2) + "] for X " + shape_to_string(x));
  HONE_TRY(const ops::GridSampleAttrs attrs, ops::grid_sample_attrs(n, b.graph().opset()));
  dims_t out{x[0], x[1]};
  out.insert(out.end(), grid.begin() + 1, grid.end() - 1);
  if (shape_numel(out) == 0)
    return fail(ErrorCode::kUnsupported, "GridSample with an empty result");
  const auto sampler =
      std::make_shared<const ops::GridSampler>(attrs, std::vector<int64_t>(x.begin() + 2, x.end()));
  const int64_t c = x[1], in_plane = shape_numel(x) / (x[0] * x[1]);
  const int64_t out_plane = shape_numel(out) / (x[0] * x[1]), points = x[0] * out_plane;
  const BufferRef src = b.data(n.inputs[0]), coords = b.data(n.inputs[1]);
  const BufferRef dst = new_plain_value(b, out, DType::kF32);
  if (x.size() == 4) {
    const int64_t h = x[2], w = x[3];
    b.add_own_step("grid_sample",
                   [=](void* const* p) -> Result<void> {
                     grid_sample_2d(attrs, h, w, c, out_plane, static_cast<const float*>(p[0]),
                                    static_cast<const float*>(p[1]), static_cast<float*>(p[2]),
                                    points);
                     return {};
                   },
                   {{DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, coords}, {DNNL_ARG_DST, dst}});
    b.set(n.outputs[0], PValue{out, dst, DType::kF32});
    return {};
  }
  b.add_own_step("grid_sample",
                 [=](void* const* p) -> Result<void> {
                   ops::grid_sample_points(
                       *sampler, c, in_plane, out_plane, static_cast<const float*>(p[0]),
                       static_cast<const float*>(p[1]), static_cast<float*>(p[2]), 0, points);
                   return {};
                 },
                 {{DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, coords}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, DType::kF32});
  return {};
}

/// RoiAlign of x [N, C, H, W] by rois [num, 4] and their batch indices into
/// [num, C, out_h, out_w]; a batch index outside [0, N) fails the run.
Result<void> lower_roi_align(PlanBuilder& b, const Node& n) {
  const DType index_t = b.dtype(n.inputs[2]);
  if (b.dtype(n.inputs[0]) != DType::kF32 || b.dtype(n.inputs[1]) != DType::kF32 ||
      (index_t != DType::kI64 && index_t != DType::kI32))
    return fail(ErrorCode::kUnsupported, "RoiAlign of " + text(b.dtype(n.inputs[0])) + " by " +
                                             text(b.dtype(n.inputs[1])) + " rois and " +
                                             text(index_t) + " batch indices");
  const dims_t x = value_dims(b, n.inputs[0]), rois = value_dims(b, n.inputs[1]),
               batch = value_dims(b, n.inputs[2]);
  if (x.size() != 4 || rois.size() != 2 || rois[1] != 4 || batch != dims_t{rois[0]})
    return fail(ErrorCode::kInvalidArgument, "RoiAlign of X " + shape_to_string(x) + ", rois " +
                                                 shape_to_string(rois) + ", batch indices " +
                                                 shape_to_string(batch));
  HONE_TRY(const ops::RoiAlignAttrs a, ops::roi_align_attrs(n, b.graph().opset()));
  const dims_t out{rois[0], x[1], a.out_h, a.out_w};
  if (shape_numel(out) == 0) return fail(ErrorCode::kUnsupported, "RoiAlign with an empty result");
  const BufferRef src = b.data(n.inputs[0]), boxes = b.data(n.inputs[1]), idx = b.data(n.inputs[2]);
  const BufferRef dst = new_plain_value(b, out, DType::kF32);
  const int64_t num = rois[0], batches = x[0], c = x[1], h = x[2], w = x[3];
  auto run = [=](const auto* bi, void* const* p) -> Result<void> {
    HONE_CHECK_OK(ops::check_roi_batches(bi, num, batches));
    ops::roi_align_rois(a, c, h, w, static_cast<const float*>(p[0]),
                        static_cast<const float*>(p[1]), bi, static_cast<float*>(p[3]), 0, num);
    return {};
  };
  OwnFn fn;
  if (index_t == DType::kI64)
    fn = [=](void* const* p) { return run(static_cast<const int64_t*>(p[2]), p); };
  else
    fn = [=](void* const* p) { return run(static_cast<const int32_t*>(p[2]), p); };
  b.add_own_step(
      "roi_align", std::move(fn),
      {{DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, boxes}, {DNNL_ARG_SRC_2, idx}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, DType::kF32});
  return {};
}

/// One own step per source, each copying its rows into its columns of the
/// output (a buffer written again by a later step stays live: place_temps).
Result<void> lower_concat_bytes(PlanBuilder& b, const Node& n) {
  std::vector<ValueId> srcs;
  for (ValueId v : n.inputs)
    if (v >= 0) srcs.push_back(v);
  if (srcs.empty()) return fail(ErrorCode::kInvalidArgument, "Concat without inputs");
  const DType t = b.dtype(srcs[0]);
  for (ValueId v : srcs)
    if (b.dtype(v) != t || !own_bytes_dtype(t) || t == DType::kF32)
      return fail(ErrorCode::kUnsupported,
                  "Concat of " + text(t) + " and " + text(b.dtype(v)) + " values");
  const dims_t first = value_dims(b, srcs[0]);
  HONE_TRY(
      const int64_t axis,
      ops::normalize_axis(ops::axis_attr(n), static_cast<int64_t>(first.size()), "Concat axis"));
  const auto ax = static_cast<size_t>(axis);
  dims_t out = first;
  out[ax] = 0;
  for (ValueId v : srcs) {
    const dims_t d = value_dims(b, v);
    for (size_t i = 0; i < d.size(); ++i)
      if (d.size() != first.size() || (i != ax && d[i] != first[i]))
        return fail(ErrorCode::kInvalidArgument, "Concat of " + shape_to_string(first) + " and " +
                                                     shape_to_string(d) + " on axis " +
                                                     std::to_string(axis));
    out[ax] += d[ax];
  }
  if (shape_numel(out) == 0) return fail(ErrorCode::kUnsupported, "Concat with an empty result");
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < ax; ++i) outer *= out[i];
  for (size_t i = ax + 1; i < out.size(); ++i) inner *= out[i];
  const size_t elem = dtype_size(t);
  const size_t out_row = static_cast<size_t>(out[ax] * inner) * elem;
  const BufferRef dst = new_plain_value(b, out, t);
  size_t at = 0;  // bytes into an output row where this source's part starts
  for (ValueId v : srcs) {
    const size_t row = static_cast<size_t>(value_dims(b, v)[ax] * inner) * elem;
    if (row == 0) continue;
    const BufferRef src = b.data(v);
    b.add_own_step("concat_bytes",
                   [=](void* const* p) -> Result<void> {
                     const auto* x = static_cast<const std::byte*>(p[0]);
                     auto* y = static_cast<std::byte*>(p[1]);
                     for (int64_t o = 0; o < outer; ++o)
                       std::memcpy(y + static_cast<size_t>(o) * out_row + at,
                                   x + static_cast<size_t>(o) * row, row);
                     return {};
                   },
                   {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    at += row;
  }
  b.set(n.outputs[0], PValue{out, dst, t});
  return {};
}

}  // namespace

Result<void> lower_own_index(PlanBuilder& b, const Node& n) {
  if (n.op_type == "GridSample") return lower_grid_sample(b, n);
  if (n.op_type == "RoiAlign") return lower_roi_align(b, n);
  return n.op_type == "GatherND" ? lower_gather_nd(b, n) : lower_concat_bytes(b, n);
}

}  // namespace hone::onednn
