#include "ops/slice.h"

#include <algorithm>
#include <limits>

#include "hone/shape.h"
#include "ops/axis.h"
#include "ops/broadcast.h"
#include "ops/sym_int.h"

namespace hone::ops {

Result<SliceWindow> slice_window(const std::vector<int64_t>& shape, std::vector<int64_t> starts,
                                 std::vector<int64_t> ends, const std::vector<int64_t>* axes_in,
                                 const std::vector<int64_t>* steps_in) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const size_t n = starts.size();
  std::vector<int64_t> axes, steps;
  if (axes_in != nullptr) {
    axes = *axes_in;
  } else {
    axes.resize(n);
    for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  }
  if (steps_in != nullptr)
    steps = *steps_in;
  else
    steps.assign(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    return fail(ErrorCode::kInvalidArgument,
                "Slice starts " + shape_to_string(starts) + ", ends " + shape_to_string(ends) +
                    ", axes " + shape_to_string(axes) + " and steps " + shape_to_string(steps) +
                    " must have the same length");
  HONE_TRY(axes, normalize_axes(axes, rank, "Slice axes"));
  SliceWindow w;
  w.out = shape;
  w.strides = strides_of(shape);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = axes[i];
    const int64_t d = shape[static_cast<size_t>(a)];
    const int64_t step = steps[i];
    if (step == 0)
      return fail(ErrorCode::kInvalidArgument, "Slice step on axis " + std::to_string(a) + " is 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += d;
    if (e < 0) e += d;
    int64_t len = 0;
    if (d == 0) {
      len = 0;
      s = 0;
    } else if (step > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      len = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      const int64_t abs_step =
          step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
      len = s > e ? (s - e - 1) / abs_step + 1 : 0;
    }
    w.out[static_cast<size_t>(a)] = len;
    if (len > 0) w.base += s * w.strides[static_cast<size_t>(a)];
    w.strides[static_cast<size_t>(a)] *=
        len > 1 ? step : 1;  // one element needs no step (no overflow)
  }
  return w;
}

std::optional<RuntimeSlice> runtime_slice(int64_t start, int64_t end, int64_t step) {
  constexpr int64_t kAll = std::numeric_limits<int32_t>::max();
  if (step != 1 || start >= kAll || end <= -kAll) return std::nullopt;
  RuntimeSlice r;
  if (start <= -kAll) start = 0;  // clamped to the front
  r.start = start;
  r.start_from_end = start < 0;
  if (start >= 0) {
    if (start == 0 && end == 1) {  // x[:1], the first: one, as d is at least 1
      r.length = r.least = 1;
      return r;
    }
    if (end >= 0 && end < kAll) return std::nullopt;  // min(end, d)
    // From `start` to d, or to d + end.
    const int64_t cut = end >= kAll ? 0 : end;
    r.length = cut - start;
    r.length_plus_dim = true;
    r.least = start - cut;
    return r;
  }
  // From d + start: to the end, or to d + end.
  if (end >= 0 && end < kAll) return std::nullopt;
  const int64_t stop = end >= kAll ? 0 : end;
  if (stop <= start) return std::nullopt;  // empty
  r.length = stop - start;
  r.least = -start;
  return r;
}

Result<std::vector<Dim>> slice_shape(const std::vector<Dim>& shape,
                                     const std::vector<int64_t>& starts,
                                     const std::vector<int64_t>& ends,
                                     const std::vector<int64_t>* axes_in,
                                     const std::vector<int64_t>* steps_in) {
  // Each listed axis alone, by slice_window's rule; the checks on the lists
  // are its too (a symbolic dim stands in as 1 for them).
  std::vector<int64_t> stand_in;
  for (const Dim& d : shape) stand_in.push_back(d.is_static() ? d.value() : 1);
  HONE_TRY(const SliceWindow all, slice_window(stand_in, starts, ends, axes_in, steps_in));
  (void)all;
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> axes;
  if (axes_in != nullptr) {
    HONE_TRY(axes, normalize_axes(*axes_in, rank, "Slice axes"));
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  constexpr int64_t kAll = std::numeric_limits<int32_t>::max();
  std::vector<Dim> out = shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto a = static_cast<size_t>(axes[i]);
    const int64_t step = steps_in != nullptr ? (*steps_in)[i] : 1;
    const Dim& d = shape[a];
    if (d.is_static()) {
      const std::vector<int64_t> one_step{step};
      HONE_TRY(const SliceWindow w,
               slice_window({d.value()}, {starts[i]}, {ends[i]}, nullptr, &one_step));
      out[a] = w.out[0];
      continue;
    }
    const bool forward = step == 1 && starts[i] == 0 && ends[i] >= kAll;
    const bool reversed = step == -1 && starts[i] >= kAll - 1 && ends[i] <= -kAll;
    const std::optional<RuntimeSlice> r =
        d.is_symbolic() ? runtime_slice(starts[i], ends[i], step) : std::nullopt;
    if (forward || reversed)
      out[a] = d;
    else if (r && r->length_plus_dim)
      out[a] = (SymInt::of(d) + SymInt(r->length)).dim();
    else
      out[a] = r ? Dim(r->length) : Dim::unknown();
  }
  return out;
}

}  // namespace hone::ops
