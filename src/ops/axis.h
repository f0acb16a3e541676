// Axis normalisation, the one ONNX rule: an axis attribute or input may be
// negative, counting from the end, and must lie in [-rank, rank - 1].
//
//   HONE_TRY(int64_t a, ops::normalize_axis(n.attr_int("axis", -1), x.rank(), "Softmax axis"));
//   if (auto a = ops::try_normalize_axis(axis, rank)) use(*a);   // no error text needed
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hone/error.h"

namespace hone::ops {

/// `axis` mapped into [0, rank); nullopt when it is outside [-rank, rank - 1].
std::optional<int64_t> try_normalize_axis(int64_t axis, int64_t rank);

/// A position between axes (Flatten's axis: the first `axis` dims go to the
/// first output dim) mapped into [0, rank]; nullopt outside [-rank, rank].
std::optional<int64_t> try_normalize_boundary(int64_t axis, int64_t rank);

/// `axis` mapped into [0, rank); an invalid-argument error naming `what`
/// ("axis", "Concat axis", ...) and the rank otherwise.
[[nodiscard]] Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const char* what = "axis");

/// Every axis of `axes` normalised; an error names the first bad one or the
/// first axis named twice (ONNX axes lists never repeat an axis).
[[nodiscard]] Result<std::vector<int64_t>> normalize_axes(std::vector<int64_t> axes, int64_t rank,
                                                          const char* what = "axes");

}  // namespace hone::ops
