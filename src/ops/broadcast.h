// ONNX multidirectional (NumPy) broadcasting, written once: shapes align at
// their last axis; along each axis equal dims stay, a 1 takes the other dim,
// and two different dims that are not 1 do not broadcast. The rule is a
// template over the dim type, so concrete shapes, the passes' symbolic Dims
// and aot's dim expressions all go through the same code.
//
//   HONE_TRY(auto out, ops::broadcast_shapes({a.shape(), b.shape()}));
//   std::vector<int64_t> st = ops::broadcast_strides(a.shape(), out);  // 0 on broadcast axes
//   auto dims = ops::broadcast_dims<Dim>(shapes, Dim(1), match, on_undecided);  // symbolic
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "hone/error.h"

namespace hone::ops {

/// How two dims of one axis relate under broadcasting.
enum class DimMatch {
  kSame,         // equal: the result is either
  kFirstIsOne,   // the first is 1: the result is the second
  kSecondIsOne,  // the second is 1: the result is the first
  kClash,        // different, neither 1: the shapes do not broadcast
  kUndecided,    // nobody can tell (symbols that cannot be compared)
};

/// The broadcast of `shapes` over any dim type D. `match(a, b)` relates two
/// dims; `undecided(a, b)` gives the result dim where match says kUndecided,
/// or nullopt to give up. nullopt when the shapes clash or `undecided` gave up.
template <class D, class Match, class Undecided>
std::optional<std::vector<D>> broadcast_dims(const std::vector<std::vector<D>>& shapes,
                                             const D& one, Match match, Undecided undecided) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<D> out(rank, one);
  for (const auto& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      D& o = out[off + i];
      switch (match(o, s[i])) {
        case DimMatch::kSame:
        case DimMatch::kSecondIsOne:
          break;
        case DimMatch::kFirstIsOne:
          o = s[i];
          break;
        case DimMatch::kClash:
          return std::nullopt;
        case DimMatch::kUndecided: {
          std::optional<D> d = undecided(o, s[i]);
          if (!d) return std::nullopt;
          o = std::move(*d);
          break;
        }
      }
    }
  }
  return out;
}

/// The relation of two concrete dims.
DimMatch match_dims(int64_t a, int64_t b);

/// The broadcast of concrete shapes; an invalid-argument error listing them
/// when they do not broadcast.
[[nodiscard]] Result<std::vector<int64_t>> broadcast_shapes(
    const std::vector<std::vector<int64_t>>& shapes);

/// Row-major strides of `shape`, in elements.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);

/// Whether a Transpose by `perm` of a row-major `shape` leaves its elements in
/// the order they are stored (it moves only axes of extent 1, as [S, 1, E] to
/// [1, S, E]): its output is then its input's bytes, a view.
bool transpose_keeps_order(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm);

/// Per-axis strides of `in_shape` aligned to `out_shape` (0 on broadcast
/// axes). `in_shape` must broadcast to `out_shape`.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_shape,
                                       const std::vector<int64_t>& out_shape);

}  // namespace hone::ops
