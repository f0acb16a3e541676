// ArgMax and ArgMin's choice, written once for the reference and the backends'
// kernels: along a row of `len` values (stride `inner`), the position of the
// largest (or smallest) value; a later value wins only by comparing strictly
// better, or equal under select_last_index, so a NaN after the first value
// never wins and ties go to the first position unless the last is asked for.
//
//   ops::arg_extreme_rows(outer, len, inner, is_max, last, in, out,
//                         [](T v) { return static_cast<double>(v); });
//   "if (" + ops::arg_extreme_wins_c("v", "bv", is_max, last) + ") best = k, bv = v;"   // aot
#pragma once

#include <cstdint>
#include <string>

namespace hone::ops {

/// Whether a later value `v` takes the place of the chosen value `bv`.
template <class V>
bool arg_extreme_wins(const V& v, const V& bv, bool is_max, bool last) {
  return (is_max ? v > bv : v < bv) || (last && v == bv);
}

/// arg_extreme_wins as a C condition over the C expressions `v` and `bv`, for
/// the backends that generate code (aot).
inline std::string arg_extreme_wins_c(const std::string& v, const std::string& bv, bool is_max,
                                      bool last) {
  const std::string wins = v + (is_max ? " > " : " < ") + bv;
  return last ? wins + " || " + v + " == " + bv : wins;
}

/// For every (a, c) of [0, outer) x [0, inner): out[a * inner + c] = the
/// chosen position along the row in + a * len * inner + c. `key` maps an
/// element to the value compared (the element itself, or a double for the
/// half-precision types).
template <class T, class Key>
void arg_extreme_rows(int64_t outer, int64_t len, int64_t inner, bool is_max, bool last,
                      const T* in, int64_t* out, Key key) {
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t c = 0; c < inner; ++c) {
      const T* p = in + a * len * inner + c;
      int64_t best = 0;
      auto bv = key(p[0]);
      for (int64_t k = 1; k < len; ++k) {
        const auto v = key(p[k * inner]);
        if (arg_extreme_wins(v, bv, is_max, last)) {
          best = k;
          bv = v;
        }
      }
      out[a * inner + c] = best;
    }
}

}  // namespace hone::ops
