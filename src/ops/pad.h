// Where ONNX Pad puts its input, written once: the pads (and, from opset 18,
// the axes they name) resolved into per-axis counts before and after, the
// output dims, and the part of the input that survives negative pads (crops).
// The reference kernel and the backends that plan Pad themselves (onednn,
// cuda) all take it from here.
//
//   HONE_TRY(ops::PadWindow w, ops::pad_window({2, 3}, {0, 1, 0, -1}, nullptr));
//   // w.out == {2, 3}: one column added before, one cropped after
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/shape.h"

namespace hone::ops {

struct PadWindow {
  std::vector<int64_t> begin, end;  ///< per axis; negative: that many elements cropped
  std::vector<int64_t> out;         ///< the output dims
  std::vector<int64_t> kept_from;   ///< per axis, the first input element kept (crops)
  std::vector<int64_t> kept;        ///< per axis, how many input elements are kept
  /// Some output element is a pad value rather than an input element.
  bool pads_any() const {
    for (size_t a = 0; a < begin.size(); ++a)
      if (begin[a] > 0 || end[a] > 0) return true;
    return false;
  }
};

/// Pad of a tensor of `shape`: `pads` holds the counts before each padded
/// axis, then those after; `axes` (null: every axis in order) names the axes
/// they are for, negative counting from the end. Invalid argument, naming the
/// values: an axis out of range or named twice, a pads list of the wrong
/// length, a crop larger than the axis, an output of more than 2^40 elements
/// on an axis.
[[nodiscard]] Result<PadWindow> pad_window(const std::vector<int64_t>& shape,
                                           const std::vector<int64_t>& pads,
                                           const std::vector<int64_t>* axes);

/// The output dims of the same Pad of an input of symbolic dims `shape` (the
/// graph passes' propagation): a static axis by pad_window, a symbolic one
/// kept where its pads sum to 0 and an expression of it otherwise
/// (`(seq+2)`; unknown for an unknown dim). The same errors
/// as pad_window (a symbolic dim stands in as 2^30).
[[nodiscard]] Result<std::vector<Dim>> pad_shape(const std::vector<Dim>& shape,
                                                 const std::vector<int64_t>& pads,
                                                 const std::vector<int64_t>* axes);

/// Per axis of the output of a Pad of a tensor of `shape` by window `w`,
/// the input element each output position reads, as an offset in elements
/// (the input's row-major strides; the crop's start included), or -1 where
/// the pad value goes (constant mode only). `mode`: constant, reflect (mirror
/// without repeating the edge, periodically where a pad exceeds the axis),
/// edge (the nearest element), wrap (periodic). Invalid argument: another
/// mode, or a mode other than constant padding an axis the crop left empty.
[[nodiscard]] Result<std::vector<std::vector<int64_t>>> pad_source_offsets(
    const std::vector<int64_t>& shape, const PadWindow& w, const std::string& mode);

}  // namespace hone::ops
