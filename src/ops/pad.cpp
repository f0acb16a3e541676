#include "ops/pad.h"

#include <algorithm>
#include <string>

#include "hone/shape.h"
#include "ops/axis.h"

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
    else
      out.push_back(w.begin[a] == 0 && w.end[a] == 0 ? shape[a] : Dim::unknown());
  }
  return out;
}

}  // namespace hone::ops
