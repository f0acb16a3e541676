// Where ONNX Gather reads its input when the indices are known, written once:
// the indices checked against the axis and made non-negative, the output
// dims, and the [outer, dim, inner] view of the data around the axis that a
// kernel copies rows through. The backends that plan Gather of known indices
// themselves (blas, cuda) take it from here. GatherND's view (gather_nd_layout)
// is here too: the reference, onednn's own step and cuda's kernel read
// their tuples through it, and blas plans tuples known before the run by
// gather_nd_offsets.
//
//   HONE_TRY(ops::GatherRows g, ops::gather_rows({3, 4}, 0, {-1}, {1}));
//   // g.idx == {2}, g.out == {1, 4}, g.outer == 1, g.dim == 3, g.inner == 4
#pragma once

#include <cstdint>
#include <vector>

#include "hone/error.h"

namespace hone::ops {

struct GatherRows {
  int64_t axis = 0, outer = 1, dim = 0, inner = 1;
  std::vector<int64_t> idx;  ///< each in [0, dim)
  std::vector<int64_t> out;  ///< the output dims
};

/// Gather along `axis` (negative counts from the end) of data of dims `x`
/// with indices `idx` of dims `idx_shape`. Invalid argument: scalar data, an
/// axis out of range, an index outside [-dim, dim - 1] (naming it).
[[nodiscard]] Result<GatherRows> gather_rows(const std::vector<int64_t>& x, int64_t axis,
                                             std::vector<int64_t> idx,
                                             const std::vector<int64_t>& idx_shape);

/// GatherND of data of dims `x` by indices of dims `idx` with `batch_dims`:
/// the output is [batch, tuples] slices of `slice` elements; tuple t of batch
/// b is the `k` indices at idx[(b * tuples + t) * k ...], index j of it counts
/// along data axis batch_dims + j (stride `strides[j]`, length `dims[j]`),
/// from the batch's start b * batch_block.
struct GatherNdLayout {
  int64_t batch = 1, tuples = 1, k = 0, slice = 1, batch_block = 0;
  std::vector<int64_t> strides, dims;  ///< k each
  std::vector<int64_t> out;            ///< the output dims
};

/// Invalid argument (naming the dims): a rank below 1, batch_dims outside
/// [0, min(ranks)), a tuple length outside [1, rank - batch_dims], batch dims
/// that differ. The indices themselves are checked where they are read.
[[nodiscard]] Result<GatherNdLayout> gather_nd_layout(const std::vector<int64_t>& x,
                                                      const std::vector<int64_t>& idx,
                                                      int64_t batch_dims);

/// Where in the data each of the batch * tuples slices of GatherND with
/// layout `l` starts (element offsets, in output order), from its index
/// tuples `idx` (every index, in order) known before it runs. Invalid
/// argument for a short `idx` or an index outside [-dim, dim) (naming it,
/// its tuple and its position in the tuple); a negative one counts from the end.
[[nodiscard]] Result<std::vector<int64_t>> gather_nd_offsets(const GatherNdLayout& l,
                                                             const std::vector<int64_t>& idx);

}  // namespace hone::ops
