#include "ops/pad.h"

#include <algorithm>
#include <string>

#include "hone/shape.h"
#include "ops/axis.h"
#include "ops/sym_int.h"

namespace hone::ops {

Result<PadWindow> pad_window(const std::vector<int64_t>& shape, const std::vector<int64_t>& pads,
                             const std::vector<int64_t>* axes_in) {
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> axes;
  if (axes_in != nullptr) {
    HONE_TRY(axes, normalize_axes(*axes_in, rank, "Pad axes"));
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  const size_t na = axes.size();
  if (pads.size() != 2 * na)
    return fail(ErrorCode::kInvalidArgument,
                "Pad pads " + shape_to_string(pads) + " must have " + std::to_string(2 * na) +
                    " entries (before and after each of " + std::to_string(na) +
                    " axes) for input shape " + shape_to_string(shape));
  PadWindow w;
  w.begin.assign(shape.size(), 0);
  w.end.assign(shape.size(), 0);
  for (size_t i = 0; i < na; ++i) {
    w.begin[static_cast<size_t>(axes[i])] = pads[i];
    w.end[static_cast<size_t>(axes[i])] = pads[na + i];
  }
  for (size_t a = 0; a < shape.size(); ++a) {
    const int64_t from = std::max<int64_t>(0, -w.begin[a]);
    const int64_t kept = shape[a] - from - std::max<int64_t>(0, -w.end[a]);
    if (kept < 0)
      return fail(ErrorCode::kInvalidArgument, "Pad pads " + shape_to_string(pads) + " crop axis " +
                                                   std::to_string(a) + " of input shape " +
                                                   shape_to_string(shape) + " below zero");
    const int64_t out = kept + std::max<int64_t>(0, w.begin[a]) + std::max<int64_t>(0, w.end[a]);
    if (out > (int64_t{1} << 40))
      return fail(ErrorCode::kInvalidArgument, "Pad pads " + shape_to_string(pads) + " make axis " +
                                                   std::to_string(a) + " too large (" +
                                                   std::to_string(out) + ")");
    w.kept_from.push_back(from);
    w.kept.push_back(kept);
    w.out.push_back(out);
  }
  return w;
}

Result<std::vector<Dim>> pad_shape(const std::vector<Dim>& shape, const std::vector<int64_t>& pads,
                                   const std::vector<int64_t>* axes) {
  std::vector<int64_t> stand_in;
  for (const Dim& d : shape) stand_in.push_back(d.is_static() ? d.value() : int64_t{1} << 30);
  HONE_TRY(const PadWindow w, pad_window(stand_in, pads, axes));
  std::vector<Dim> out;
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a].is_static())
      out.emplace_back(w.out[a]);
    else if (w.begin[a] + w.end[a] == 0)  // unpadded, or a shift (ZeroPad2d((0, 0, 1, -1)))
      out.push_back(shape[a]);
    else  // the dim plus its pads, as an expression ((seq+2))
      out.push_back((SymInt::of(shape[a]) + SymInt(w.begin[a] + w.end[a])).dim());
  }
  return out;
}

Result<std::vector<std::vector<int64_t>>> pad_source_offsets(const std::vector<int64_t>& shape,
                                                             const PadWindow& w,
                                                             const std::string& mode) {
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return fail(ErrorCode::kInvalidArgument,
                "Pad mode '" + mode + "' is not one of constant, reflect, edge, wrap");
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t a = rank; a-- > 1;) strides[a - 1] = strides[a] * shape[a];
  std::vector<std::vector<int64_t>> offs(rank);
  for (size_t a = 0; a < rank; ++a) {
    // Negative pads crop first; the other modes then read the cropped range.
    const int64_t lo = w.kept_from[a], len = w.kept[a];
    const int64_t pb = std::max<int64_t>(0, w.begin[a]);
    if (len == 0 && mode != "constant" && w.out[a] > 0)
      return fail(ErrorCode::kInvalidArgument, "Pad mode '" + mode + "' cannot pad axis " +
                                                   std::to_string(a) + " of " +
                                                   shape_to_string(shape) + ", which is empty");
    offs[a].resize(static_cast<size_t>(w.out[a]));
    for (int64_t i = 0; i < w.out[a]; ++i) {
      int64_t j = i - pb;
      if (j < 0 || j >= len) {
        if (mode == "constant") {
          j = -1;
        } else if (mode == "edge") {
          j = std::clamp<int64_t>(j, 0, len - 1);
        } else if (mode == "wrap") {
          j = ((j % len) + len) % len;
        } else if (len == 1) {
          j = 0;
        } else {
          const int64_t period = 2 * (len - 1);
          j = ((j % period) + period) % period;
          if (j >= len) j = period - j;
        }
      }
      offs[a][static_cast<size_t>(i)] = j < 0 ? -1 : (lo + j) * strides[a];
    }
  }
  return offs;
}

}  // namespace hone::ops
