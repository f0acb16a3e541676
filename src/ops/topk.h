// TopK's order, written once for the reference and the backends' kernels: the
// positions of the k largest (or smallest) values of a row, NaN above every
// number so the order stays strict, equal values to the lower position in
// both directions (ONNX's tie rule).
//
//   ops::topk_order(len, k, largest, [&](int64_t i, int64_t j) {
//     return ops::nan_greater(row[i], row[j]); }, idx);   // idx[0, k): the positions
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace hone::ops {

/// u above v, NaN above every number.
inline bool nan_greater(double u, double v) {
  if (std::isnan(u) || std::isnan(v)) return std::isnan(u) && !std::isnan(v);
  return u > v;
}

/// Fills idx[0, k) with the positions in [0, len) of the k values first in
/// TopK's order; `greater(i, j)` says value i is above value j.
template <class Greater>
void topk_order(int64_t len, int64_t k, bool largest, Greater greater, std::vector<int64_t>& idx) {
  idx.resize(static_cast<size_t>(len));
  std::iota(idx.begin(), idx.end(), int64_t{0});
  auto before = [&](int64_t i, int64_t j) {
    const bool gt = greater(i, j), lt = greater(j, i);
    if (gt || lt) return largest ? gt : lt;
    return i < j;
  };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), before);
}

}  // namespace hone::ops
