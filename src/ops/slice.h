// Where ONNX Slice reads its input, written once: starts, ends, axes and
// steps clamped the ONNX way into the output dims and a strided view of the
// input. The reference kernel and backends that plan Slice themselves (cuda)
// both take it from here.
//
//   HONE_TRY(ops::SliceWindow w, ops::slice_window({5, 4}, {1}, {-1}, nullptr, nullptr));
//   // w.out == {3, 4}, w.base == 4, w.strides == {4, 1}
#pragma once

#include <cstdint>
#include <vector>

#include "hone/error.h"

namespace hone::ops {

/// The output dims, and the element offset and per-dim strides (in elements
/// of the input, negative for a reversed axis) of the first output element.
struct SliceWindow {
  std::vector<int64_t> out;
  int64_t base = 0;
  std::vector<int64_t> strides;
};

/// Slice of a row-major tensor of `shape`. `axes` and `steps` may be null
/// (their defaults: 0..n-1 and ones). Invalid argument: lists of different
/// lengths, an axis out of range or named twice, a step of 0.
[[nodiscard]] Result<SliceWindow> slice_window(const std::vector<int64_t>& shape,
                                               std::vector<int64_t> starts,
                                               std::vector<int64_t> ends,
                                               const std::vector<int64_t>* axes,
                                               const std::vector<int64_t>* steps);

}  // namespace hone::ops
