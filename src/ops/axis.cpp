#include "ops/axis.h"

#include <set>
#include <string>

#include "hone/shape.h"

namespace hone::ops {

std::optional<int64_t> try_normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis > rank - 1) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<int64_t> try_normalize_boundary(int64_t axis, int64_t rank) {
  if (axis < -rank || axis > rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (auto a = try_normalize_axis(axis, rank)) return *a;
  return fail(ErrorCode::kInvalidArgument, std::string(what) + " " + std::to_string(axis) +
                                               " is out of range for rank " + std::to_string(rank));
}

Result<std::vector<int64_t>> normalize_axes(std::vector<int64_t> axes, int64_t rank,
                                            const char* what) {
  const std::vector<int64_t> given = axes;
  std::set<int64_t> seen;
  for (int64_t& a : axes) {
    HONE_TRY(a, normalize_axis(a, rank, what));
    if (!seen.insert(a).second)
      return fail(ErrorCode::kInvalidArgument, std::string(what) + " " + shape_to_string(given) +
                                                   " names axis " + std::to_string(a) + " twice");
  }
  return axes;
}

}  // namespace hone::ops
