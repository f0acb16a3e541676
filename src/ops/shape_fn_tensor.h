// Shape functions of the ops that reshape, index and reduce tensors, written
// once over the dim type like those of shape_fn.h (whose DimTraits<D> they
// use): Reshape, Flatten, Squeeze, Unsqueeze, the reductions and
// ArgMax/ArgMin, Gather, GatherElements, GatherND, Range, Shape. The caller reads
// what the op takes from constant inputs (Reshape's shape, the axes lists):
// where those live is the table's business, the rule is not.
//
//   HONE_TRY(auto out, ops::reshape_shape<Dim>(x.dims(), {0, -1}, false));
//   HONE_TRY(auto sq, ops::squeeze_shape<int64_t>({1, 3, 1}, {0}));
//   HONE_TRY(auto r, ops::reduce_shape<DimExpr>("ReduceSum", attrs, x, &axes));
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hone/error.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/shape_fn.h"
#include "ops/window.h"

namespace hone::ops {

/// Reshape to `shape` (input 'shape''s values): 0 copies the input's dim
/// unless `allowzero`, one -1 takes what is left of the element count. A dim
/// copied from a symbol cancels against itself, so [batch, 4, 8] to [0, -1]
/// gives [batch, 32]; a -1 the dim type cannot divide exactly is unknown()
/// or kUnsupported.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> reshape_shape(const std::vector<D>& x,
                                                   const std::vector<int64_t>& shape,
                                                   bool allowzero) {
  using T = DimTraits<D>;
  const std::string what = "Reshape: input shape " + list_to_string(shape);
  std::vector<D> out;
  std::optional<size_t> infer;
  std::vector<bool> cancels(shape.size(), false);  // a copied symbol: left out of both counts
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[i];
    if (s == -1) {
      if (infer) return fail(ErrorCode::kInvalidArgument, what + " has two -1 dims");
      infer = i;
      out.emplace_back(int64_t{1});
    } else if (s == 0 && !allowzero) {
      if (i >= x.size())
        return fail(ErrorCode::kInvalidArgument, what + " copies dim " + std::to_string(i) +
                                                     " that input data " + dims_string(x) +
                                                     " lacks");
      out.push_back(x[i]);
      cancels[i] = !T::known(x[i]);
    } else if (s < 0) {
      return fail(ErrorCode::kInvalidArgument, what + " has a negative dim");
    } else {
      out.emplace_back(s);
    }
  }
  D total(int64_t{1}), known(int64_t{1});
  for (size_t i = 0; i < x.size(); ++i)
    if (i >= cancels.size() || !cancels[i]) total = T::mul(total, x[i]);
  for (size_t i = 0; i < out.size(); ++i)
    if (!cancels[i] && i != infer) known = T::mul(known, out[i]);
  const std::optional<int64_t> t = T::known(total), k = T::known(known);
  if (!infer) {
    if (t && k && *t != *k)
      return fail(ErrorCode::kInvalidArgument,
                  what + " and input data " + dims_string(x) + " differ in element count");
    return out;
  }
  if (t && k) {
    if (*k == 0 || *t % *k != 0)
      return fail(ErrorCode::kInvalidArgument,
                  what + " leaves no whole -1 for input data " + dims_string(x));
    out[*infer] = D(*t / *k);
    return out;
  }
  std::optional<D> q = T::div(total, known);
  if (!q)
    return fail(ErrorCode::kUnsupported, what + ": the -1 of input data " + dims_string(x) +
                                             " is " + T::str(total) + " / " + T::str(known) +
                                             ", not a division known to be exact");
  out[*infer] = std::move(*q);
  return out;
}

/// Flatten at `axis` (in [-rank, rank]): [prod(dims before), prod(the rest)].
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> flatten_shape(int64_t axis, const std::vector<D>& x) {
  const std::optional<int64_t> a = try_normalize_boundary(axis, static_cast<int64_t>(x.size()));
  if (!a)
    return fail(ErrorCode::kInvalidArgument, "Flatten: axis " + std::to_string(axis) +
                                                 " is out of range for input 'input' " +
                                                 dims_string(x));
  const auto at = static_cast<size_t>(*a);
  return std::vector<D>{dims_product(x, 0, at), dims_product(x, at, x.size())};
}

/// Squeeze of `axes` (empty: every dim that is 1). A listed dim must be 1; a
/// listed dim nobody knows is taken to be 1 where the dim type has unknown()
/// (ONNX's own inference does so) and refused where it has not. Without axes
/// every dim must be known, or the rank is unknown.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> squeeze_shape(const std::vector<D>& x,
                                                   const std::vector<int64_t>& axes) {
  using T = DimTraits<D>;
  std::vector<D> out;
  if (axes.empty()) {
    for (const D& d : x) {
      const std::optional<int64_t> k = T::known(d);
      if (!k)
        return fail(ErrorCode::kUnsupported,
                    "Squeeze: without axes, the rank of its output from "
                    "input data " +
                        dims_string(x) + " is unknown");
      if (*k != 1) out.push_back(d);
    }
    return out;
  }
  HONE_TRY(const std::vector<int64_t> norm,
           normalize_axes(axes, static_cast<int64_t>(x.size()), "Squeeze: axes"));
  for (int64_t a : norm) {
    const std::optional<int64_t> k = T::known(x[static_cast<size_t>(a)]);
    if (k ? *k != 1 : !T::unknown())
      return fail(k ? ErrorCode::kInvalidArgument : ErrorCode::kUnsupported,
                  "Squeeze: dim " + std::to_string(a) + " of input data " + dims_string(x) +
                      (k ? " is not 1" : " is not known to be 1"));
  }
  for (size_t i = 0; i < x.size(); ++i)
    if (std::find(norm.begin(), norm.end(), static_cast<int64_t>(i)) == norm.end())
      out.push_back(x[i]);
  return out;
}

/// Unsqueeze: dims of 1 inserted at `axes`, which count in the output's rank.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> unsqueeze_shape(const std::vector<D>& x,
                                                     const std::vector<int64_t>& axes) {
  const auto rank = static_cast<int64_t>(x.size() + axes.size());
  HONE_TRY(const std::vector<int64_t> norm, normalize_axes(axes, rank, "Unsqueeze: axes"));
  std::vector<D> out;
  size_t src = 0;
  for (int64_t i = 0; i < rank; ++i)
    if (std::find(norm.begin(), norm.end(), i) != norm.end())
      out.emplace_back(int64_t{1});
    else
      out.push_back(x[src++]);
  return out;
}

/// Reduce* and ArgMax/ArgMin (`op` names it in errors) over `axes`, the
/// attribute's or input 'axes''s values, or nullptr when that input is not a
/// constant. Empty axes reduce every dim, or none with noop_with_empty_axes.
/// Unknown axes keep the rank under keepdims (each dim unknown() unless it
/// is 1) and leave it unknown otherwise (kUnsupported).
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> reduce_shape(std::string_view op, const ReduceAttrs& attrs,
                                                  const std::vector<D>& x,
                                                  const std::vector<int64_t>* axes) {
  using T = DimTraits<D>;
  const auto rank = static_cast<int64_t>(x.size());
  if (!axes) {
    const std::optional<D> unknown = T::unknown();
    if (!attrs.keepdims || !unknown)
      return fail(ErrorCode::kUnsupported,
                  std::string(op) + ": input axes is not a constant, so its output's " +
                      (attrs.keepdims ? "dims" : "rank") + " cannot be said");
    std::vector<D> out;
    for (const D& d : x) out.push_back(T::known(d) == 1 ? d : *unknown);
    return out;
  }
  if (axes->empty() && attrs.noop_with_empty_axes) return x;
  std::vector<int64_t> norm;
  if (axes->empty()) {
    for (int64_t i = 0; i < rank; ++i) norm.push_back(i);
  } else {
    const std::string what = std::string(op) + ": axes";
    HONE_TRY(norm, normalize_axes(*axes, rank, what.c_str()));
  }
  std::vector<D> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(norm.begin(), norm.end(), i) == norm.end())
      out.push_back(x[static_cast<size_t>(i)]);
    else if (attrs.keepdims)
      out.emplace_back(int64_t{1});
  }
  return out;
}

/// Gather along `axis`: data's dims with the axis replaced by indices' dims.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> gather_shape(int64_t axis, const std::vector<D>& data,
                                                  const std::vector<D>& indices) {
  const std::optional<int64_t> a = try_normalize_axis(axis, static_cast<int64_t>(data.size()));
  if (!a)
    return fail(ErrorCode::kInvalidArgument, "Gather: axis " + std::to_string(axis) +
                                                 " is out of range for input data " +
                                                 dims_string(data));
  std::vector<D> out(data.begin(), data.begin() + *a);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + *a + 1, data.end());
  return out;
}

/// GatherElements: indices' shape; data and indices share a rank.
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> gather_elements_shape(int64_t axis, const std::vector<D>& data,
                                                           const std::vector<D>& indices) {
  if (data.size() != indices.size())
    return fail(ErrorCode::kInvalidArgument, "GatherElements: input indices " +
                                                 dims_string(indices) + " and input data " +
                                                 dims_string(data) + " differ in rank");
  if (!try_normalize_axis(axis, static_cast<int64_t>(data.size())))
    return fail(ErrorCode::kInvalidArgument, "GatherElements: axis " + std::to_string(axis) +
                                                 " is out of range for input data " +
                                                 dims_string(data));
  return indices;
}

/// GatherND with `batch_dims`: indices' dims but the last, then data's dims
/// after batch_dims + k, k being indices' last dim (the tuple length, a
/// number in [1, rank(data) - batch_dims]). The first batch_dims dims of
/// data and indices must be equal: two numbers that differ are an invalid
/// argument; dims the type cannot compare are kUnsupported where it has no
/// unknown() (aot, which must know every extent), else accepted. An unknown
/// k is kUnsupported (the output's rank depends on it). The index values are
/// checked where they are read (ops/gather.h's gather_nd_layout names the
/// same limits for known dims).
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> gather_nd_shape(int64_t batch_dims, const std::vector<D>& data,
                                                     const std::vector<D>& indices) {
  using T = DimTraits<D>;
  const auto r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(indices.size());
  if (r < 1 || q < 1 || batch_dims < 0 || batch_dims >= std::min(r, q))
    return fail(ErrorCode::kInvalidArgument, "GatherND: batch_dims " + std::to_string(batch_dims) +
                                                 " must be below the ranks of data " +
                                                 dims_string(data) + " and indices " +
                                                 dims_string(indices) + " (each at least 1)");
  const std::optional<int64_t> k = T::known(indices.back());
  if (!k)
    return fail(ErrorCode::kUnsupported, "GatherND: the tuple length (last dim of indices " +
                                             dims_string(indices) + ") is not known");
  if (*k < 1 || *k > r - batch_dims)
    return fail(ErrorCode::kInvalidArgument,
                "GatherND: indices " + dims_string(indices) + " have a last dim outside [1, " +
                    std::to_string(r - batch_dims) + "] for data " + dims_string(data));
  for (size_t a = 0; a < static_cast<size_t>(batch_dims); ++a) {
    const DimMatch m = T::match(data[a], indices[a]);
    if (m == DimMatch::kSame) continue;
    const std::string why = "GatherND: batch dim " + std::to_string(a) + " of data " +
                            dims_string(data) + " and of indices " + dims_string(indices);
    if (T::known(data[a]) && T::known(indices[a]))
      return fail(ErrorCode::kInvalidArgument, why + " differ");
    if (!T::unknown()) return fail(ErrorCode::kUnsupported, why + " cannot be shown equal");
  }
  std::vector<D> out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), data.begin() + batch_dims + *k, data.end());
  return out;
}

/// Range's length from its scalar inputs: `start` and `delta` when constant
/// integers, `limit` as a dim (a constant, or a dim of a tensor the graph
/// reads through Shape). Known numbers give the count; counting from 0 by 1
/// gives the limit itself (positions over a sequence); else unknown().
template <ShapeDim D>
[[nodiscard]] Result<std::vector<D>> range_shape(std::optional<int64_t> start, const D& limit,
                                                 std::optional<int64_t> delta) {
  if (delta == 0) return fail(ErrorCode::kInvalidArgument, "Range: input delta is 0");
  const std::optional<int64_t> l = DimTraits<D>::known(limit);
  if (start && delta && l) {
    const int64_t span = *l - *start, d = *delta;
    const int64_t count = span / d + (span % d != 0 && (span > 0) == (d > 0) ? 1 : 0);
    return std::vector<D>{D(std::max<int64_t>(count, 0))};
  }
  if (start == 0 && delta == 1) return std::vector<D>{limit};
  const std::optional<D> unknown = DimTraits<D>::unknown();
  if (!unknown)
    return fail(ErrorCode::kUnsupported,
                "Range: inputs start and delta must be constants for a length to be said");
  return std::vector<D>{*unknown};
}

/// Shape: a 1-D tensor of the dims in [start, end) (attrs.h's shape_range).
template <ShapeDim D>
[[nodiscard]] std::vector<D> shape_shape(const ShapeRange& range) {
  return {D(std::max<int64_t>(0, range.end - range.start))};
}

}  // namespace hone::ops
