// Private to the onednn backend: NonMaxSuppression as hone's own step
// (own_nms.cpp), the box selection of torchvision's detectors (the batched
// NMS inside their `if boxes.numel() == 0` guard), run by ops/nms_select.h,
// the C the reference selects with.
//
//   if (auto why = own_nms_why_not(g, n)) return *why;         // support.cpp
//   if (lowers_own_nms(n)) return lower_own_nms(b, n);          // lower_misc.cpp
#pragma once

#include <optional>
#include <string>

#include "backends/onednn/plan.h"

namespace hone::onednn {

/// Nothing when `n` is not NonMaxSuppression, else why not ("": claimed).
std::optional<std::string> own_nms_why_not(const Graph& g, const Node& n);
/// Whether the own step takes `n`.
bool lowers_own_nms(const Node& n);
/// Whether the step reads input `input` of `n` as integers (max_output_boxes_per_class).
bool own_nms_reads_integers(const Node& n, size_t input);
[[nodiscard]] Result<void> lower_own_nms(PlanBuilder& b, const Node& n);

}  // namespace hone::onednn
