// The Reduce* family's formulas, written once for the reference and the
// backends' own loops: which op computes what over a set of values, in
// double, with the reference's NaN rule (ReduceMax/ReduceMin propagate a
// NaN) and identities (an empty set gives 0 for sums, 1 for a product,
// -inf/+inf for max/min, -inf for the log forms).
//
//   const auto kind = ops::reduce_kind(n.op_type);                   // nullopt: not a Reduce*
//   double y = ops::reduce_f64(*kind, len, [&](int64_t r) { return double(x[r * stride]); });
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace hone::ops {

enum class ReduceKind : uint8_t {
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kLogSum,
  kLogSumExp,
  kSumSquare
};

/// The ONNX op of each kind, in ReduceKind's order.
inline constexpr std::string_view kReduceOps[] = {
    "ReduceSum", "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",
    "ReduceL1",  "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

inline const char* reduce_name(ReduceKind k) {
  return kReduceOps[static_cast<size_t>(k)].data();
}

/// The kind `op` names; nullopt when `op` is not one of the ten.
inline std::optional<ReduceKind> reduce_kind(std::string_view op) {
  for (size_t i = 0; i < std::size(kReduceOps); ++i)
    if (kReduceOps[i] == op) return static_cast<ReduceKind>(i);
  return std::nullopt;
}

/// Whether reducing a single value `x` gives `x` back (Sum, Mean, Max, Min,
/// Prod), so a reduction over axes of length 1 is a view; the others map it
/// (|x|, x*x, log x, log(exp x)).
inline bool reduce_keeps_single(ReduceKind k) {
  return k == ReduceKind::kSum || k == ReduceKind::kMean || k == ReduceKind::kMax ||
         k == ReduceKind::kMin || k == ReduceKind::kProd;
}

/// The reduction of the n values `at(0) ... at(n - 1)` (doubles), in double.
template <class Get>
double reduce_f64(ReduceKind kind, int64_t n, Get at) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  switch (kind) {
    case ReduceKind::kMax: {
      double m = -kInf;
      for (int64_t r = 0; r < n; ++r) {
        const double v = at(r);
        if (v > m || std::isnan(v)) m = v;
        if (std::isnan(m)) break;
      }
      return m;
    }
    case ReduceKind::kMin: {
      double m = kInf;
      for (int64_t r = 0; r < n; ++r) {
        const double v = at(r);
        if (v < m || std::isnan(v)) m = v;
        if (std::isnan(m)) break;
      }
      return m;
    }
    case ReduceKind::kProd: {
      double p = 1.0;
      for (int64_t r = 0; r < n; ++r) p *= at(r);
      return p;
    }
    case ReduceKind::kLogSumExp: {
      double m = -kInf;
      for (int64_t r = 0; r < n; ++r) m = std::max(m, at(r));
      if (std::isinf(m)) return m;
      double s = 0.0;
      for (int64_t r = 0; r < n; ++r) s += std::exp(at(r) - m);
      return m + std::log(s);
    }
    default:
      break;
  }
  double s = 0.0;
  switch (kind) {
    case ReduceKind::kL1:
      for (int64_t r = 0; r < n; ++r) s += std::fabs(at(r));
      return s;
    case ReduceKind::kL2:
    case ReduceKind::kSumSquare:
      for (int64_t r = 0; r < n; ++r) {
        const double v = at(r);
        s += v * v;
      }
      return kind == ReduceKind::kL2 ? std::sqrt(s) : s;
    default:
      for (int64_t r = 0; r < n; ++r) s += at(r);
      if (kind == ReduceKind::kMean) return s / static_cast<double>(n);
      if (kind == ReduceKind::kLogSum) return std::log(s);
      return s;
  }
}

/// Offsets of every point of the index space `dims` walked row-major with
/// `strides` (one point, offset 0, for no dims): a reduction combines
/// x[kept[i] + reduced[r]] over r, each list walked this way.
inline std::vector<int64_t> strided_offsets(const std::vector<int64_t>& dims,
                                            const std::vector<int64_t>& strides) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<int64_t> offs(static_cast<size_t>(n));
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    offs[static_cast<size_t>(i)] = off;
    for (size_t a = dims.size(); a-- > 0;) {
      if (++idx[a] < dims[a]) {
        off += strides[a];
        break;
      }
      off -= strides[a] * (dims[a] - 1);
      idx[a] = 0;
    }
  }
  return offs;
}

}  // namespace hone::ops
