// Private to the onednn backend: Transpose, Split and Slice of integer or
// bool values, OneHot and ScatterND, as hone's own steps (own_moves.cpp), for
// a mixture of experts' routing (one_hot of TopK's indices, the positions
// NonZero finds, index_add_ as ScatterND), and NonZero itself and a Slice of
// starts, ends or steps read when it runs (a Loop's count), which end their
// block: their output's length is known only once they have run.
//
//   if (auto why = own_moves_why_not(g, n)) return *why;          // support.cpp
//   if (lowers_own_moves(b, n)) return lower_own_moves(b, n);     // lower_misc.cpp
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/onednn/plan.h"

namespace hone::onednn {

/// Nothing when `n` is none of those nodes (an f32 Transpose, Split or Slice
/// is oneDNN's reorder), else why not ("": claimed).
std::optional<std::string> own_moves_why_not(const Graph& g, const Node& n);
/// Whether `n` is a Slice (opset 10 on) of a start, end, axes or steps that
/// is neither a constant nor computed from dims (host_eval, kHostPolicy): its
/// output's dims are found when it runs, so it ends its block (own step
/// lower_slice_at_run_time; axes must still be known when the plan is built).
bool slice_reads_run_time(const Graph& g, const Node& n);
/// Why such a Slice cannot run on onednn ("": it can).
std::string slice_at_run_time_why_not(const Graph& g, const Node& n);
/// Whether the own steps take `n` (its operands' dtypes as planned).
bool lowers_own_moves(const PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_own_moves(PlanBuilder& b, const Node& n);
/// Whether those steps read input `input` of `n` as integers or bools.
bool own_moves_reads_integers(const Node& n, size_t input);
/// Slice `n`'s starts, ends, axes or steps: input `input` (a constant of
/// any integer type) from opset 10, attribute `attr` before; empty when an
/// optional one is left out. kUnsupported when the input is not known when
/// the plan is built (lower_shape.cpp's f32 Slice and the own steps' one).
[[nodiscard]] Result<std::vector<int64_t>> slice_param(const PlanBuilder& b, const Node& n,
                                                       size_t input, const char* attr);

}  // namespace hone::onednn
