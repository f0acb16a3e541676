// Private to the shape family of reference kernels (ops_shape*.cpp): the
// per-part registration functions and the small helpers the parts share.
//
//   register_shape_ops(r) calls register_shape_basic_ops(r), ...;
//   HONE_TRY(auto axes, shape_detail::input_ints(ctx, 1, "Squeeze axes"));
//   shape_detail::strided_copy(x, base, strides, out);   // any dtype, byte-wise
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval/kernel.h"
#include "hone/tensor.h"
#include "ops/axis.h"
#include "ops/slice.h"

namespace hone::eval {

void register_shape_basic_ops(
    OpRegistry& r);  // Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split, Shape, Size,
                     // Expand, Tile, Constant, ConstantOfShape, Range
void register_shape_index_ops(
    OpRegistry& r);  // Slice, Gather, GatherElements, GatherND, Compress, NonZero, OneHot
void register_shape_scatter_ops(OpRegistry& r);  // ScatterElements, Scatter, ScatterND
void register_shape_layout_ops(
    OpRegistry& r);  // Pad, DepthToSpace, SpaceToDepth, Trilu, ReverseSequence, EyeLike
void register_shape_misc_ops(OpRegistry& r);  // Unique, TfIdfVectorizer

namespace shape_detail {

/// "[1,2,3]" for a list of ints (attribute values, perms, axes).
std::string ints_to_string(const std::vector<int64_t>& v);

/// Input i read as a list of ints (1-D or scalar integer tensor); `what`
/// names it in errors ("Reshape shape").
[[nodiscard]] Result<std::vector<int64_t>> input_ints(const KernelContext& ctx, size_t i,
                                                      const char* what);

/// Reads a scalar (or one-element) integer input.
[[nodiscard]] Result<int64_t> input_scalar_int(const KernelContext& ctx, size_t i,
                                               const char* what);

/// Maps an index in [-dim, dim) to [0, dim); anything else is an error
/// naming `what`, the index and the dim.
[[nodiscard]] Result<int64_t> normalize_index(int64_t index, int64_t dim, const char* what);

/// Axes lists are normalised by ops/axis.h (duplicates rejected).
using ops::normalize_axes;

/// Fills `out` (already allocated, contiguous) with elements of `in` read at
/// `base + sum(idx[a] * in_strides[a])` for every index of out's shape; strides
/// are in elements and may be zero (broadcast) or negative (reversal). The
/// caller guarantees every read is in bounds. Works for any dtype.
void strided_copy(const Tensor& in, int64_t base, const std::vector<int64_t>& in_strides,
                  Tensor& out);  // on the pool's threads from 1 MiB up

/// Where Slice reads its input (ops/slice.h): the reference kernel and cuda share it.
using ops::slice_window;
using ops::SliceWindow;

/// memcpy, on the pool's threads from 1 MiB up.
void copy_bytes(void* dst, const void* src, size_t bytes);

/// Copies `count` elements (of size es) from src[src_off] to dst[dst_off]
/// (copy_bytes).
void copy_elements(const void* src, int64_t src_off, void* dst, int64_t dst_off, int64_t count,
                   size_t es);

/// Output index i as wanted: sets it only if the node connects it.
inline void set_if_wanted(KernelContext& ctx, size_t i, Tensor t) {
  if (ctx.wants_output(i)) ctx.set_output(i, std::move(t));
}

}  // namespace shape_detail
}  // namespace hone::eval
