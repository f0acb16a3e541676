#include "ops/broadcast.h"

#include <string>

#include "hone/shape.h"

namespace hone::ops {

DimMatch match_dims(int64_t a, int64_t b) {
  if (a == b) return DimMatch::kSame;
  if (b == 1) return DimMatch::kSecondIsOne;
  if (a == 1) return DimMatch::kFirstIsOne;
  return DimMatch::kClash;
}

Result<std::vector<int64_t>> broadcast_shapes(const std::vector<std::vector<int64_t>>& shapes) {
  auto out = broadcast_dims<int64_t>(shapes, 1, match_dims,
                                     [](int64_t, int64_t) { return std::optional<int64_t>(); });
  if (out) return *out;
  std::string msg = "shapes cannot be broadcast together:";
  for (const auto& s : shapes) msg += " " + shape_to_string(s);
  return fail(ErrorCode::kInvalidArgument, msg);
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

bool transpose_keeps_order(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= shape.size()) return false;
    if (shape[static_cast<size_t>(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_shape,
                                       const std::vector<int64_t>& out_shape) {
  const size_t rank = out_shape.size();
  const size_t off = rank - in_shape.size();
  const std::vector<int64_t> in_strides = strides_of(in_shape);
  std::vector<int64_t> s(rank, 0);
  for (size_t i = 0; i < in_shape.size(); ++i) s[off + i] = in_shape[i] == 1 ? 0 : in_strides[i];
  return s;
}

}  // namespace hone::ops
