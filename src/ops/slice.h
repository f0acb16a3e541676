// Where ONNX Slice reads its input, written once: starts, ends, axes and
// steps clamped the ONNX way into the output dims and a strided view of the
// input. The reference kernel and backends that plan Slice themselves (cuda)
// both take it from here.
//
//   HONE_TRY(ops::SliceWindow w, ops::slice_window({5, 4}, {1}, {-1}, nullptr, nullptr));
//   // w.out == {3, 4}, w.base == 4, w.strides == {4, 1}
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hone/error.h"
#include "hone/shape.h"

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

/// One axis of a dim `d` known only at run time, sliced with constant bounds
/// and step 1 where the bounds count from either end and none is clamped:
/// the kept part starts at `start` (at d + start when `start_from_end`) and
/// is `length` long (d + length when `length_plus_dim`), which holds for
/// every d of at least `least` (x[:, :-1], x[:, 2:], x[:, -3:]).
struct RuntimeSlice {
  int64_t start = 0;
  bool start_from_end = false;
  int64_t length = 0;
  bool length_plus_dim = false;
  int64_t least = 0;
};
/// Nothing where the slice's length depends on how d compares with a bound
/// (an end counted from the front, x[:, :128], but x[:1], which is one row
/// of any d of at least 1), or the step is not 1.
std::optional<RuntimeSlice> runtime_slice(int64_t start, int64_t end, int64_t step);

/// The output dims of the same Slice of an input of symbolic dims `shape`
/// (the graph passes' propagation): a static axis by slice_window; a
/// symbolic axis keeps its symbol where the slice takes all of it, whatever
/// it is (step 1 from start 0 to an end of at least INT32_MAX, or step -1 over
/// the whole of it reversed), is named by runtime_slice's expression of it
/// where that rule applies ("(seq-1)", taking the dim to be at least
/// `least`, as a backend running it checks), and is unknown otherwise. The
/// same errors as slice_window.
[[nodiscard]] Result<std::vector<Dim>> slice_shape(const std::vector<Dim>& shape,
                                                   const std::vector<int64_t>& starts,
                                                   const std::vector<int64_t>& ends,
                                                   const std::vector<int64_t>* axes,
                                                   const std::vector<int64_t>* steps);

}  // namespace hone::ops
