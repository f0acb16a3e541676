// Transitional: the former names of arena_layout.h (issue 28: "plan" keeps one
// meaning), for the onednn backend until its files move to the new ones
// (src/backends/onednn/plan.cpp). New code includes arena_layout.h.
//
//   HONE_TRY(MemoryPlan m, plan_memory(p));   // == HONE_TRY(ArenaLayout m, lay_out(p))
#pragma once

#include "backends/common/arena_layout.h"

namespace hone {

using MemoryPlan = ArenaLayout;
using MemoryProblem = ArenaProblem;
using MemoryValue = ArenaValue;
using MemoryStep = ArenaStep;

[[nodiscard]] inline Result<ArenaLayout> plan_memory(const ArenaProblem& p) {
  return lay_out(p);
}

}  // namespace hone
