#include "ops/depth_space.h"

#include "hone/shape.h"

namespace hone::ops {

Result<DepthSpaceLayout> depth_space_layout(const std::string& op, const DepthSpaceAttrs& a,
                                            const std::vector<int64_t>& dims) {
  if (dims.size() != 4)
    return fail(ErrorCode::kInvalidArgument,
                op + " input must be 4-D (N,C,H,W), got " + shape_to_string(dims));
  const int64_t n = dims[0], c = dims[1], h = dims[2], w = dims[3], b = a.blocksize;
  if (op == "DepthToSpace") {
    if (c % (b * b) != 0)
      return fail(ErrorCode::kInvalidArgument,
                  "DepthToSpace channels of " + shape_to_string(dims) +
                      " are not divisible by blocksize^2 = " + std::to_string(b * b));
    const int64_t c2 = c / (b * b);
    if (a.crd)
      return DepthSpaceLayout{{n, c2, b, b, h, w}, {0, 1, 4, 2, 5, 3}, {n, c2, h * b, w * b}};
    return DepthSpaceLayout{{n, b, b, c2, h, w}, {0, 3, 4, 1, 5, 2}, {n, c2, h * b, w * b}};
  }
  if (h % b != 0 || w % b != 0)
    return fail(ErrorCode::kInvalidArgument,
                "SpaceToDepth spatial dims of " + shape_to_string(dims) +
                    " are not divisible by blocksize " + std::to_string(b));
  return DepthSpaceLayout{
      {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, {n, c * b * b, h / b, w / b}};
}

std::vector<int64_t> permuted(const std::vector<int64_t>& v, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(v[static_cast<size_t>(p)]);
  return out;
}

}  // namespace hone::ops
