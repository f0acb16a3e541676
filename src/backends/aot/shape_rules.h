// Private to the aot backend: what lower() knows about each op: output dims
// (as expressions), the operands the generated code reads, workspace sizes,
// and the window and axis arithmetic emit shares with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/aot/program.h"
#include "ops/resize.h"

namespace hone::aot {

/// Sets the dims of `id`'s outputs and p.operands[id]; kUnsupported names
/// what aot cannot express (symbolic spatial dims, non-constant weights, ...).
[[nodiscard]] Result<void> infer_node(Program& p, NodeId id);
/// Workspace the node needs (im2col columns), in floats.
DimExpr scratch_floats(const Program& p, NodeId id);

/// A 2-D window (1-D ops use height 1; a 3-D Conv's depth, its first
/// spatial axis, is the `*d`/pf/pk fields, else 1).
struct Window2d {
  int64_t ih = 1, iw = 1, kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0, oh = 1, ow = 1;
  int64_t id = 1, kd = 1, sd = 1, dd = 1, pf = 0, pk = 0, od = 1;  // depth: pads front, back
  /// The input and output extents as expressions: the numbers above, or where
  /// the input's spatial dim is known only at run time (an audio model's time
  /// axis) expressions of it; `dynamic` is then set and ih, iw, oh and ow
  /// mean nothing.
  DimExpr ih_e = 1, iw_e = 1, oh_e = 1, ow_e = 1;
  bool dynamic = false;
};
/// The window of a Conv or pool over input dims `x` ([N, C, spatial...]) with
/// kernel `k` (spatial sizes), from ops::make_window. Spatial dims known only
/// at run time take explicit pads (auto_pad NOTSET or VALID) and no ceil_mode,
/// else kUnsupported: their output extent is then (in + pads - window) /
/// stride + 1, which the code checks is not negative (Emitter::window_check).
[[nodiscard]] Result<Window2d> window_of(const Node& n, const DimExprs& x,
                                         const std::vector<int64_t>& k, bool ceil_mode);
/// [N, channels, out...] of window `w` over `x` (rank 3 or 4), as expressions.
DimExprs window_out_dims(const Window2d& w, const DimExprs& x, const DimExpr& channels);
/// Sorted, non-negative reduce axes of a Reduce* node; empty means "identity"
/// only when noop_with_empty_axes is set (otherwise every axis is listed).
[[nodiscard]] Result<std::vector<int64_t>> reduce_axes(const Program& p, const Node& n);
/// Softmax/LogSoftmax reduce dims [begin, end) of the input (opset < 13 coerces to 2-D).
[[nodiscard]] Result<std::pair<int64_t, int64_t>> softmax_range(const Program& p, const Node& n);

/// Slice, Gather by one constant index, Expand: their output dims, and the
/// strided copy each is (Program::copies; copy_rules.cpp).
[[nodiscard]] Result<DimExprs> copy_dims(Program& p, NodeId id, const Node& n);
/// CumSum (a constant axis), GatherElements and ScatterElements (indices of
/// the data's rank), OneHot (constant depth and values): their output dims
/// (elements.cpp).
[[nodiscard]] Result<DimExprs> cumsum_dims(Program& p, NodeId id, const Node& n);
[[nodiscard]] Result<DimExprs> elements_dims(Program& p, NodeId id, const Node& n);
[[nodiscard]] Result<DimExprs> one_hot_dims(Program& p, NodeId id, const Node& n);
/// GridSample: [N, C, the grid's out dims...] (grid_sample.cpp).
[[nodiscard]] Result<DimExprs> grid_sample_dims(Program& p, NodeId id, const Node& n);
/// RoiAlign: [num_rois, C, output_height, output_width] (roi_align.cpp).
[[nodiscard]] Result<DimExprs> roi_align_dims(Program& p, NodeId id, const Node& n);
/// Slice whose starts or ends are host values: the output dims from shape
/// inference, the starts read when the code runs (slice_bounds.cpp).
[[nodiscard]] Result<DimExprs> run_time_slice(Program& p, NodeId id, const Node& n);
/// Slice whose length along an axis is known only when it runs
/// (ops::slice_length_at_run_time): that length a symbol the run sets
/// (slice_bounds.cpp).
[[nodiscard]] Result<DimExprs> run_length_slice(Program& p, NodeId id, const Node& n);
/// NonZero: [rank, its length], a symbol the run sets (nonzero.cpp).
[[nodiscard]] Result<DimExprs> nonzero_dims(Program& p, NodeId id, const Node& n);
/// ArgMax and ArgMin: the output dims (arg_extreme.cpp).
[[nodiscard]] Result<DimExprs> arg_extreme_dims(Program& p, NodeId id, const Node& n);
/// TopK's outputs (values f32, indices i64) and operands (topk.cpp).
[[nodiscard]] Result<void> infer_topk(Program& p, NodeId id);
/// Gather by one constant index along a static dim: a strided copy
/// (copy_dims); by any other indices, read when the code runs: gather_dims
/// (gather.cpp).
bool gathers_one_constant(const Program& p, const Node& n);
[[nodiscard]] Result<DimExprs> gather_dims(Program& p, NodeId id, const Node& n);
/// GatherND (any batch_dims, i64 or i32 index tuples of a known length):
/// its output dims from ops::gather_nd_shape (gather_nd.cpp).
[[nodiscard]] Result<DimExprs> gather_nd_dims(Program& p, NodeId id, const Node& n);
/// ScatterND (reduction none/add/mul/max/min, index tuples as GatherND's at
/// batch_dims 0, updates of that GatherND's output dims): the data's dims.
[[nodiscard]] Result<DimExprs> scatter_nd_dims(Program& p, NodeId id, const Node& n);
/// The output dims of a Reshape or Expand whose shape is computed from dims,
/// from shape inference, each symbol read as the same dim of its input 0.
[[nodiscard]] Result<DimExprs> inferred_dims(const Program& p, const Node& n);

/// Resize (opset 11 on, N and C not resized, static spatial dims; nearest,
/// linear or cubic): its output dims, and the taps of each spatial axis
/// from ops::resize_axis_taps (resize_rules.cpp).
[[nodiscard]] Result<DimExprs> resize_dims(Program& p, NodeId id, const Node& n);
[[nodiscard]] Result<std::vector<ops::AxisTaps>> resize_taps(const Program& p, const Node& n,
                                                             const DimExprs& x,
                                                             const DimExprs& out);

/// ConvTranspose (1-D or 2-D, static, explicit pads): its output dims, and
/// the columns it makes before col2im, in floats (conv_transpose.cpp).
[[nodiscard]] Result<DimExprs> conv_transpose_dims(Program& p, NodeId id, const Node& n);
DimExpr conv_transpose_scratch(const Program& p, NodeId id);

/// A kUnsupported error: what aot cannot build (the node then falls back).
Error unsupported(std::string what);
bool has_input(const Node& n, size_t i);
/// Input `i` of `n`, which must be there and f32.
[[nodiscard]] Result<ValueId> data_input(const Program& p, const Node& n, size_t i);
/// Input `i` of `n` as indices (Gather's, GatherND's): there, and i64 or i32.
[[nodiscard]] Result<ValueId> index_input(const Program& p, const Node& n, size_t i);
/// A shared shape function's result (ops/shape_fn.h), with any refusal
/// made kUnsupported: a shape aot cannot work out is one it cannot build, and
/// the partitioner sends the node elsewhere.
template <class T>
Result<T> refused(Result<T> r) {
  if (!r && r.error().code() != ErrorCode::kUnsupported)
    return fail(unsupported(r.error().message()));
  return r;
}

/// The i64 values of a constant input, or kUnsupported.
[[nodiscard]] Result<std::vector<int64_t>> const_ints(const Program& p, const Node& n,
                                                      size_t input);
const DimExprs& dims_of(const Program& p, ValueId v);
/// A constant made at lowering (folded BatchNorm, packed LSTM weights) as a
/// weight value of the program; its blob offset is assigned with the others.
ValueId add_synthetic(Program& p, const std::string& name, Tensor t);

}  // namespace hone::aot
