// Private to the onednn backend: GatherND, GridSample and the Concat of
// integer or bool values as hone's own steps (own_index.cpp), for the index
// tuples and gathers PyTorch's dynamo exporter writes (CLIP's pooled token,
// DGCNN's kNN features), RAFT's correlation lookup and an R-CNN's RoiAlign.
//
//   if (auto why = own_index_why_not(g, n)) return *why;         // support.cpp
//   if (lowers_own_index(b, n)) return lower_own_index(b, n);    // lower_misc.cpp
#pragma once

#include <optional>
#include <string>

#include "backends/onednn/plan.h"

namespace hone::onednn {

/// Nothing when `n` is neither GatherND, GridSample, RoiAlign nor a Concat of
/// integer or bool values (an f32 Concat is oneDNN's concat), else why not ("": claimed).
std::optional<std::string> own_index_why_not(const Graph& g, const Node& n);
/// Whether the own step takes `n` (its operands' dtypes as planned).
bool lowers_own_index(const PlanBuilder& b, const Node& n);
[[nodiscard]] Result<void> lower_own_index(PlanBuilder& b, const Node& n);

}  // namespace hone::onednn
