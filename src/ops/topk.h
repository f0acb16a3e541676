// TopK's order, written once for the reference and the backends' kernels: the
// positions of the k largest (or smallest) values of a row, NaN above every
// number so the order stays strict, equal values to the lower position in
// both directions (ONNX's tie rule). topk_before_c() is the same order as C,
// for generated code.
//
//   ops::topk_order(len, k, largest, [&](int64_t i, int64_t j) {
//     return ops::nan_greater(row[i], row[j]); }, idx);   // idx[0, k): the positions
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace hone::ops {

/// u above v, NaN above every number.
inline bool nan_greater(double u, double v) {
  if (std::isnan(u) || std::isnan(v)) return std::isnan(u) && !std::isnan(v);
  return u > v;
}

/// nan_greater(u, v) as a C expression over the C expressions `u` and `v`
/// (floats), for the backends that generate code (aot).
inline std::string nan_greater_c(const std::string& u, const std::string& v) {
  return "((" + u + " != " + u + " || " + v + " != " + v + ") ? (" + u + " != " + u + " && " + v +
         " == " + v + ") : (" + u + " > " + v + "))";
}

/// topk_order's order of two elements as a C expression: value `u` at
/// position `i` comes before value `v` at position `j` (C expressions).
inline std::string topk_before_c(const std::string& u, const std::string& v, const std::string& i,
                                 const std::string& j, bool largest) {
  const std::string gt = nan_greater_c(u, v), lt = nan_greater_c(v, u);
  return largest ? "(" + gt + " || (!" + lt + " && " + i + " < " + j + "))"
                 : "(" + lt + " || (!" + gt + " && " + i + " < " + j + "))";
}

/// Fills idx[0, k) with the positions in [0, len) of the k values first in
/// TopK's order; `greater(i, j)` says value i is above value j. The order is
/// strict (ties go by position), so selecting the first k (nth_element) and
/// sorting only them gives partial_sort's result, in half its time at
/// ssdlite's K of 300 of 3234 (onednn's TopK step, 0.12 -> 0.06 ms).
template <class Greater>
void topk_order(int64_t len, int64_t k, bool largest, Greater greater, std::vector<int64_t>& idx) {
  idx.resize(static_cast<size_t>(len));
  std::iota(idx.begin(), idx.end(), int64_t{0});
  auto before = [&](int64_t i, int64_t j) {
    const bool gt = greater(i, j), lt = greater(j, i);
    if (gt || lt) return largest ? gt : lt;
    return i < j;
  };
  std::nth_element(idx.begin(), idx.begin() + k, idx.end(), before);
  std::sort(idx.begin(), idx.begin() + k, before);
}

}  // namespace hone::ops
