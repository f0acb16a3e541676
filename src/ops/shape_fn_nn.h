// Shape functions of the newer and rarer network ops, written once over the
// dim type like those of shape_fn.h (whose DimTraits<D> they use): Attention
// (opset 23), DeformConv, MaxRoiPool, Col2Im, CenterCropPad, AffineGrid.
// What the op reads from constant inputs (Col2Im's image and block shapes,
// CenterCropPad's target, AffineGrid's size) the caller hands over as numbers.
//
//   HONE_TRY(auto y, ops::attention_shape<Dim>(ops::attention_heads(n), 0, {q, k, v, past}));
//   HONE_TRY(auto img, ops::col2im_shape<int64_t>({1, 12, 9}, {4, 4}, {2, 2}));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hone/error.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/shape_fn.h"
#include "ops/window.h"

namespace hone::ops {

/// Attention's output `index` (0 Y, 1 present_key, 2 present_value, 3
/// qk_matmul_output) from inputs Q, K, V and, when given, past_key (null
/// entries are absent inputs). Inputs are 4-D [B, heads, seq, size], or 3-D
/// [B, seq, heads * size] with the heads from the attributes.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> attention_shape(const AttentionHeads& heads, size_t index,
                                                     const std::vector<D>& q,
                                                     const std::vector<D>& k,
                                                     const std::vector<D>& v,
                                                     const std::vector<D>* past_key = nullptr) {
  using T = DimTraits<D>;
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    return fail(ErrorCode::kInvalidArgument, "Attention: inputs Q " + dims_string(q) + ", K " +
                                                 dims_string(k) + " and V " + dims_string(v) +
                                                 " must all be 3-D or all 4-D");
  const bool four = q.size() == 4;
  if (!four && (heads.q_num_heads <= 0 || heads.kv_num_heads <= 0))
    return fail(ErrorCode::kInvalidArgument,
                "Attention: 3-D inputs need attributes q_num_heads and kv_num_heads");
  auto head_size = [&](const D& d, const char* input) -> Result<D> {
    const D kvh(heads.kv_num_heads);
    const std::optional<int64_t> n = T::known(d);
    std::optional<D> per = n && *n % heads.kv_num_heads != 0 ? std::nullopt : T::div(d, kvh);
    if (!per)
      return fail(n ? ErrorCode::kInvalidArgument : ErrorCode::kUnsupported,
                  "Attention: input " + std::string(input) + "'s last dim " + T::str(d) +
                      " does not divide into " + std::to_string(heads.kv_num_heads) + " heads");
    return *per;
  };
  const D& b = q[0];
  const D& sq = four ? q[2] : q[1];
  const D hq = four ? q[1] : D(heads.q_num_heads);
  const D hkv = four ? k[1] : D(heads.kv_num_heads);
  HONE_TRY(const D dk, four ? Result<D>(k[3]) : head_size(k[2], "K"));
  HONE_TRY(const D dv, four ? Result<D>(v[3]) : head_size(v[2], "V"));
  D total = four ? k[2] : k[1];
  if (past_key && past_key->size() == 4) {
    std::optional<D> sum = T::add((*past_key)[2], total);
    if (!sum)
      return fail(ErrorCode::kUnsupported, "Attention: the past and new sequence lengths " +
                                               T::str((*past_key)[2]) + " and " + T::str(total) +
                                               " cannot be added");
    total = std::move(*sum);
  }
  switch (index) {
    case 0:
      if (four) return std::vector<D>{b, hq, sq, dv};
      return std::vector<D>{b, sq, T::mul(D(heads.q_num_heads), dv)};
    case 1:
      return std::vector<D>{b, hkv, total, dk};
    case 2:
      return std::vector<D>{b, hkv, total, dv};
    case 3:
      return std::vector<D>{b, hq, sq, total};
    default:
      return fail(ErrorCode::kInvalidArgument, "Attention: has no output " + std::to_string(index));
  }
}

/// DeformConv: [N, M, offset's spatial dims] for X [N, C, ...], W [M, ...].
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> deform_conv_shape(const std::vector<D>& x,
                                                       const std::vector<D>& w,
                                                       const std::vector<D>& offset) {
  if (x.size() < 3 || offset.size() != x.size() || w.empty())
    return fail(ErrorCode::kInvalidArgument, "DeformConv: input X " + dims_string(x) +
                                                 " and input offset " + dims_string(offset) +
                                                 " must have one rank, at least 3");
  std::vector<D> out{x[0], w[0]};
  out.insert(out.end(), offset.begin() + 2, offset.end());
  return out;
}

/// MaxRoiPool: [num_rois, C, pooled_shape...] for X [N, C, H, W], rois [num_rois, 5].
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> max_roi_pool_shape(const std::vector<D>& x,
                                                        const std::vector<D>& rois,
                                                        const std::vector<int64_t>& pooled_shape) {
  if (x.size() != 4 || rois.size() != 2 || pooled_shape.size() != 2)
    return fail(ErrorCode::kInvalidArgument, "MaxRoiPool: input X " + dims_string(x) +
                                                 " must be 4-D, input rois " + dims_string(rois) +
                                                 " 2-D and pooled_shape " +
                                                 list_to_string(pooled_shape) + " two values");
  return std::vector<D>{rois[0], x[1], D(pooled_shape[0]), D(pooled_shape[1])};
}

/// GridSample: [N, C, out...] for X [N, C, in...] sampled at grid [N, out..., r],
/// r = the number of spatial dims (RAFT's correlation lookup).
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> grid_sample_shape(const std::vector<D>& x,
                                                       const std::vector<D>& grid) {
  const auto r = static_cast<int64_t>(x.size()) - 2;
  auto differ = [](const D& a, int64_t b) {
    const std::optional<int64_t> k = DimTraits<D>::known(a);
    return k && *k != b;
  };
  const std::optional<int64_t> batch = x.empty() ? std::nullopt : DimTraits<D>::known(x[0]);
  if (r < 1 || grid.size() != x.size() || differ(grid.back(), r) ||
      (batch && differ(grid[0], *batch)))
    return fail(ErrorCode::kInvalidArgument, "GridSample: grid " + dims_string(grid) +
                                                 " must be [N, out..., " + std::to_string(r) +
                                                 "] for X " + dims_string(x));
  std::vector<D> out{x[0], x[1]};
  out.insert(out.end(), grid.begin() + 1, grid.end() - 1);
  return out;
}

/// RoiAlign: [num_rois, C, output_height, output_width] for X [N, C, H, W] and
/// rois [num_rois, 4].
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> roi_align_shape(const std::vector<D>& x,
                                                     const std::vector<D>& rois, int64_t out_h,
                                                     int64_t out_w) {
  if (x.size() != 4 || rois.size() != 2 || out_h < 1 || out_w < 1)
    return fail(ErrorCode::kInvalidArgument, "RoiAlign: input X " + dims_string(x) +
                                                 " must be 4-D, rois " + dims_string(rois) +
                                                 " 2-D and the output size positive");
  return std::vector<D>{rois[0], x[1], D(out_h), D(out_w)};
}

/// Col2Im: [N, C / prod(block_shape), image_shape...] for input [N, C * prod, L].
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> col2im_shape(const std::vector<D>& x,
                                                  const std::vector<int64_t>& image_shape,
                                                  const std::vector<int64_t>& block_shape) {
  if (x.size() != 3 || image_shape.size() != block_shape.size() || image_shape.empty())
    return fail(ErrorCode::kInvalidArgument, "Col2Im: input 'input' " + dims_string(x) +
                                                 " must be 3-D and inputs image_shape " +
                                                 list_to_string(image_shape) + " and block_shape " +
                                                 list_to_string(block_shape) + " of one length");
  int64_t block = 1;
  for (int64_t s : block_shape) block *= s;
  const std::optional<int64_t> c = DimTraits<D>::known(x[1]);
  std::optional<D> channels =
      c && (block <= 0 || *c % block != 0) ? std::nullopt : DimTraits<D>::div(x[1], D(block));
  if (!channels)
    return fail(c ? ErrorCode::kInvalidArgument : ErrorCode::kUnsupported,
                "Col2Im: dim 1 of input 'input' " + dims_string(x) + " does not divide by " +
                    std::to_string(block) + ", the product of block_shape");
  std::vector<D> out{x[0], std::move(*channels)};
  for (int64_t s : image_shape) out.emplace_back(s);
  return out;
}

/// CenterCropPad: the input's dims with those of `axes` (all when empty, in
/// order) set to input shape's values.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> center_crop_pad_shape(const std::vector<D>& x,
                                                           const std::vector<int64_t>& shape,
                                                           std::vector<int64_t> axes) {
  const auto rank = static_cast<int64_t>(x.size());
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  if (axes.size() != shape.size())
    return fail(ErrorCode::kInvalidArgument,
                "CenterCropPad: input shape " + list_to_string(shape) + " has a value for " +
                    std::to_string(shape.size()) + " axes, not " + std::to_string(axes.size()));
  HONE_TRY(const std::vector<int64_t> norm, normalize_axes(axes, rank, "CenterCropPad: axes"));
  std::vector<D> out = x;
  for (size_t i = 0; i < norm.size(); ++i) out[static_cast<size_t>(norm[i])] = D(shape[i]);
  return out;
}

/// AffineGrid: size (N, C, [D,] H, W) gives [N, [D,] H, W, spatial rank].
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> affine_grid_shape(const std::vector<int64_t>& size) {
  if (size.size() != 4 && size.size() != 5)
    return fail(ErrorCode::kInvalidArgument,
                "AffineGrid: input size " + list_to_string(size) + " must have 4 or 5 values");
  std::vector<D> out{D(size[0])};
  for (size_t i = 2; i < size.size(); ++i) out.emplace_back(size[i]);
  out.emplace_back(static_cast<int64_t>(size.size()) - 2);
  return out;
}

}  // namespace hone::ops
