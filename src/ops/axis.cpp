#include "ops/axis.h"

#include <string>

namespace hone::ops {

std::optional<int64_t> try_normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis > rank - 1) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (auto a = try_normalize_axis(axis, rank)) return *a;
  return fail(ErrorCode::kInvalidArgument, std::string(what) + " " + std::to_string(axis) +
                                               " is out of range for rank " + std::to_string(rank));
}

Result<std::vector<int64_t>> normalize_axes(std::vector<int64_t> axes, int64_t rank,
                                            const char* what) {
  for (int64_t& a : axes) {
    HONE_TRY(a, normalize_axis(a, rank, what));
  }
  return axes;
}

}  // namespace hone::ops
