// Private to the onednn backend: hone's own steps for the mask and index
// arithmetic of text and graph models that oneDNN 2.6 has no primitive for
// (own_logic.cpp): comparisons (Equal, Less, Greater and the -OrEqual ones)
// to bool, And/Or/Xor/Not, CumSum (positions from an attention mask),
// Expand and Clip of integer or bool values (relative-position indices),
// GatherElements and ScatterElements (DeBERTa's relative scores, a GCN's
// scatter_add_), and Pad in reflect, edge or wrap mode (style transfer's
// ReflectionPad2d). Each computes as the reference does (eval/).
//
//   if (auto why = own_logic_why_not(g, n)) return *why;          // support.cpp
//   if (lowers_own_logic(b, n)) return lower_own_logic(b, n);     // lower_misc.cpp
#pragma once

#include <optional>
#include <string>

#include "backends/onednn/plan.h"
#include "ops/pad.h"

namespace hone::onednn {

/// Nothing when `n` is none of those steps' nodes (an f32 Expand or Clip, a
/// constant Pad: oneDNN's), else why not ("": claimed).
std::optional<std::string> own_logic_why_not(const Graph& g, const Node& n);
/// Whether the own steps take `n` (its operands' dtypes as planned).
bool lowers_own_logic(const PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_own_logic(PlanBuilder& b, const Node& n);
/// Pad in reflect, edge or wrap mode by window `w` (ops::pad_window, known
/// when the plan is built): every output element copies the input element
/// ops::pad_source_offsets names. lower_shape.cpp's lower_pad calls it.
[[nodiscard]] Result<void> lower_pad_by_offsets(PlanBuilder& b, const Node& n,
                                                const ops::PadWindow& w, const std::string& mode);
/// Whether those steps read input `input` of `n` as integers or bools.
bool own_logic_reads_integers(const Node& n, size_t input);

}  // namespace hone::onednn
