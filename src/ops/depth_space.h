// DepthToSpace's and SpaceToDepth's rearrangement, written once: the input
// [N, C, H, W] viewed as a 6-D `split`, transposed by `perm`, is the output
// `out`. The reference copies through the permuted strides, onednn reorders
// a strided view, and the lower_depth_to_space pass writes Reshape,
// Transpose, Reshape from the same three lists.
//
//   HONE_TRY(auto a, ops::depth_space_attrs(node));
//   HONE_TRY(auto l, ops::depth_space_layout(node.op_type, a, {n, c, h, w}));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hone/error.h"
#include "ops/attrs.h"

namespace hone::ops {

struct DepthSpaceLayout {
  std::vector<int64_t> split;  ///< the input's dims as 6
  std::vector<int64_t> perm;   ///< the transpose of `split`
  std::vector<int64_t> out;    ///< the output's 4 dims
};

/// `op` (DepthToSpace or SpaceToDepth) on an input of `dims` (rank 4):
/// DCR: [N, bs, bs, C', H, W] by (0, 3, 4, 1, 5, 2); CRD: [N, C', bs, bs, H, W]
/// by (0, 1, 4, 2, 5, 3); SpaceToDepth: [N, C, H', bs, W', bs] by
/// (0, 3, 5, 1, 2, 4). kInvalidArgument when the rank is not 4 or the block
/// size does not divide the channels (DepthToSpace) or H and W (SpaceToDepth).
[[nodiscard]] Result<DepthSpaceLayout> depth_space_layout(const std::string& op,
                                                          const DepthSpaceAttrs& a,
                                                          const std::vector<int64_t>& dims);

/// `v` permuted: element i is v[perm[i]].
std::vector<int64_t> permuted(const std::vector<int64_t>& v, const std::vector<int64_t>& perm);

}  // namespace hone::ops
