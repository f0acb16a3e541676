#include "ops/gather.h"

#include <algorithm>
#include <string>

#include "hone/shape.h"

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

Result<GatherNdLayout> gather_nd_layout(const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& idx, int64_t batch_dims) {
  const auto r = static_cast<int64_t>(x.size()), q = static_cast<int64_t>(idx.size());
  const int64_t b = batch_dims;
  if (r < 1 || q < 1 || b < 0 || b >= std::min(r, q))
    return fail(ErrorCode::kInvalidArgument,
                "GatherND needs data and indices of rank >= 1 and batch_dims < both ranks; got "
                "data " +
                    shape_to_string(x) + ", indices " + shape_to_string(idx) + ", batch_dims " +
                    std::to_string(b));
  GatherNdLayout l;
  l.k = idx.back();
  if (l.k < 1 || l.k > r - b)
    return fail(ErrorCode::kInvalidArgument,
                "GatherND indices " + shape_to_string(idx) + " have a last dim outside [1, " +
                    std::to_string(r - b) + "] for data " + shape_to_string(x));
  for (int64_t a = 0; a < b; ++a)
    if (x[static_cast<size_t>(a)] != idx[static_cast<size_t>(a)])
      return fail(ErrorCode::kInvalidArgument, "GatherND batch dim " + std::to_string(a) +
                                                   " differs between data " + shape_to_string(x) +
                                                   " and indices " + shape_to_string(idx));
  std::vector<int64_t> st(x.size(), 1);
  for (size_t a = x.size() - 1; a-- > 0;) st[a] = st[a + 1] * x[a + 1];
  for (int64_t a = 0; a < b; ++a) l.batch *= x[static_cast<size_t>(a)];
  for (int64_t a = b; a < q - 1; ++a) l.tuples *= idx[static_cast<size_t>(a)];
  for (int64_t a = b + l.k; a < r; ++a) l.slice *= x[static_cast<size_t>(a)];
  l.batch_block = b == 0 ? shape_numel(x) : st[static_cast<size_t>(b - 1)];
  for (int64_t j = 0; j < l.k; ++j) {
    l.strides.push_back(st[static_cast<size_t>(b + j)]);
    l.dims.push_back(x[static_cast<size_t>(b + j)]);
  }
  l.out.assign(idx.begin(), idx.end() - 1);
  l.out.insert(l.out.end(), x.begin() + b + l.k, x.end());
  return l;
}

Result<std::vector<int64_t>> gather_nd_offsets(const GatherNdLayout& l,
                                               const std::vector<int64_t>& idx) {
  const int64_t rows = l.batch * l.tuples;
  if (static_cast<int64_t>(idx.size()) < rows * l.k)
    return fail(ErrorCode::kInvalidArgument, "GatherND has " + std::to_string(idx.size()) +
                                                 " indices for " + std::to_string(rows) +
                                                 " tuples of " + std::to_string(l.k));
  std::vector<int64_t> off(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t o = (r / std::max<int64_t>(l.tuples, 1)) * l.batch_block;
    for (int64_t j = 0; j < l.k; ++j) {
      const auto uj = static_cast<size_t>(j);
      int64_t v = idx[static_cast<size_t>(r * l.k + j)];
      if (v < -l.dims[uj] || v >= l.dims[uj])
        return fail(ErrorCode::kInvalidArgument,
                    "GatherND index " + std::to_string(v) + " (tuple " + std::to_string(r) +
                        ", position " + std::to_string(j) + ") is out of range for dim " +
                        std::to_string(l.dims[uj]));
      if (v < 0) v += l.dims[uj];
      o += v * l.strides[uj];
    }
    off[static_cast<size_t>(r)] = o;
  }
  return off;
}

}  // namespace hone::ops
