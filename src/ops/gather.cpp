#include "ops/gather.h"

#include <string>

#include "ops/axis.h"

namespace hone::ops {

Result<GatherRows> gather_rows(const std::vector<int64_t>& x, int64_t axis,
                               std::vector<int64_t> idx, const std::vector<int64_t>& idx_shape) {
  const auto rank = static_cast<int64_t>(x.size());
  if (rank == 0) return fail(ErrorCode::kInvalidArgument, "Gather of a scalar");
  GatherRows g;
  HONE_TRY(g.axis, normalize_axis(axis, rank, "Gather axis"));
  const auto a = static_cast<size_t>(g.axis);
  g.dim = x[a];
  for (int64_t& i : idx) {
    if (i < -g.dim || i >= g.dim)
      return fail(ErrorCode::kInvalidArgument,
                  "Gather index " + std::to_string(i) + " is out of range for dim " +
                      std::to_string(g.dim) + " (axis " + std::to_string(g.axis) + ")");
    if (i < 0) i += g.dim;
  }
  g.idx = std::move(idx);
  for (size_t i = 0; i < a; ++i) g.outer *= x[i];
  for (size_t i = a + 1; i < x.size(); ++i) g.inner *= x[i];
  g.out.assign(x.begin(), x.begin() + g.axis);
  g.out.insert(g.out.end(), idx_shape.begin(), idx_shape.end());
  g.out.insert(g.out.end(), x.begin() + g.axis + 1, x.end());
  return g;
}

}  // namespace hone::ops
