// NonZero, written once for the passes and the backends that run it: its
// output is [rank, count] of i64, the coordinates of the input's non-zero
// elements in row-major order, and count is known only once it has run. The
// length is a named symbol (nonzero_length) whose bound is the input's element
// count (passes/dim_bounds.h), and a backend that runs NonZero ends its block
// there (NodeSupport::ends_block), so the blocks reading the length are
// planned, or bound, with it.
//
//   const int64_t count = ops::nonzero_count(numel, [&](int64_t i) { return x[i] != 0; });
//   ops::nonzero_write(dims, count, [&](int64_t i) { return x[i] != 0; }, out);  // [rank, count]
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/shape.h"
#include "hone/tensor.h"

namespace hone::ops {

inline constexpr std::string_view kNonZeroLengthPrefix = "nonzero_";

/// Whether `n`'s output dims are known only once it has run (NonZero, and
/// NonMaxSuppression's count of selected boxes, ops/nms.h): a backend that
/// runs it ends its block after it.
inline bool length_known_after_run(const Node& n) {
  return (n.op_type == "NonZero" || n.op_type == "NonMaxSuppression") &&
         (n.domain.empty() || n.domain == "ai.onnx");
}

/// Where such a node's length sits: the output axis holding it (NonZero's
/// [rank, count], NonMaxSuppression's [count, 3]) and the input whose element
/// count bounds it (NonZero's input; NonMaxSuppression's scores, one box per
/// batch, class and box at most).
struct RunLengthAt {
  size_t axis = 1;
  size_t bounded_by = 0;
};
inline RunLengthAt run_length_at(const Node& n) {
  return n.op_type == "NonMaxSuppression" ? RunLengthAt{0, 1} : RunLengthAt{1, 0};
}

/// Whether `c` stays as it is in a run-length symbol: an identifier's letter or digit.
inline bool run_length_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/// `prefix` and `value_name` made a plain identifier (every other character
/// '_'), so a length's symbol is never read as an expression of dims
/// (ops/sym_int.h) nor breaks generated code.
inline std::string run_length_symbol(std::string_view prefix, const std::string& value_name) {
  std::string s(prefix);
  for (char c : value_name) s += run_length_char(c) ? c : '_';
  return s;
}

/// The symbol of the length of NonZero (or NonMaxSuppression) output `value_name`: the name made a
/// plain identifier ("nonzero_layers_0_mlp_NonZero_output_0"), so it is never
/// read as an expression of dims (ops/sym_int.h) nor breaks generated code.
inline Dim nonzero_length(const std::string& value_name) {
  return Dim::symbol(run_length_symbol(kNonZeroLengthPrefix, value_name));
}

/// Whether `d` is such a length: unlike a model input's dims it may be 0.
inline bool is_nonzero_length(const Dim& d) {
  return d.is_symbolic() && d.symbol_name().rfind(kNonZeroLengthPrefix, 0) == 0;
}
inline bool is_nonzero_length(const std::string& symbol) {
  return symbol.rfind(kNonZeroLengthPrefix, 0) == 0;
}

/// How many of the `numel` elements `nonzero_at(i)` says are non-zero.
template <class NonZeroAt>
int64_t nonzero_count(int64_t numel, NonZeroAt nonzero_at) {
  int64_t count = 0;
  for (int64_t i = 0; i < numel; ++i) count += nonzero_at(i) ? 1 : 0;
  return count;
}

/// Writes NonZero's output for an input of `dims` with `count` non-zero
/// elements (nonzero_count's): row a of `out` ([rank, count], row-major)
/// holds axis a's coordinate of each, in increasing flat order. A rank-0
/// input writes nothing ([0, count]).
template <class NonZeroAt>
void nonzero_write(const std::vector<int64_t>& dims, int64_t count, NonZeroAt nonzero_at,
                   int64_t* out) {
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  const auto rank = static_cast<int64_t>(dims.size());
  int64_t j = 0;
  for (int64_t i = 0; i < numel && j < count; ++i) {
    if (!nonzero_at(i)) continue;
    int64_t lin = i;
    for (int64_t a = rank - 1; a >= 0; --a) {
      out[a * count + j] = lin % dims[static_cast<size_t>(a)];
      lin /= dims[static_cast<size_t>(a)];
    }
    ++j;
  }
}

/// NonZero's output as a backend hands it out from `packed`, a buffer of its
/// largest dims whose first elements are the output's: those, as `dims`.
[[nodiscard]] inline Result<Tensor> nonzero_unpacked(const Tensor& packed,
                                                     std::vector<int64_t> dims) {
  if (dims == packed.shape()) return packed;
  HONE_TRY(Tensor y, Tensor::allocate(packed.dtype(), std::move(dims)));
  if (y.nbytes() > packed.nbytes())
    return fail(ErrorCode::kInternal, "NonZero's output " + y.describe() +
                                          " is larger than its buffer " + packed.describe());
  if (y.nbytes() > 0) std::memcpy(y.raw(), packed.raw(), y.nbytes());
  return y;
}
/// An output whose length a run found (length_known_after_run): output
/// `output` holds its elements, then the length as its last i64; `dims` are
/// its dims but at `axis`, where the length goes (NonZero's {rank, 0} at 1,
/// NonMaxSuppression's {0, 3} at 0).
struct CountedOutput {
  size_t output = 0;
  std::vector<int64_t> dims;
  size_t axis = 0;
};
/// Each of `counted` in `outs` made its real dims, the length read from its end.
[[nodiscard]] inline Result<void> unpack_counted(std::vector<Tensor>& outs,
                                                 const std::vector<CountedOutput>& counted) {
  for (const CountedOutput& c : counted) {
    Tensor& t = outs[c.output];
    std::vector<int64_t> dims = c.dims;
    dims[c.axis] = t.data<int64_t>()[t.numel() - 1];
    HONE_TRY(t, nonzero_unpacked(t, std::move(dims)));
  }
  return {};
}

}  // namespace hone::ops
