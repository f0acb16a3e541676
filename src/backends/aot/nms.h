// Private to the aot backend: NonMaxSuppression in aot's code (nms.cpp), the
// selection ops/nms_select.h makes, which the library embeds (emit_c()).
//
//   out = nms_dims(p, id, n);                  // shape_rules.cpp's infer_node
//   st.scratch_floats = nms_scratch_floats(p, id);
#pragma once

#include "backends/aot/program.h"
#include "hone/error.h"

namespace hone::aot {

/// NonMaxSuppression: [its length, 3] of i64, the length a symbol the run
/// sets (as NonZero's, nonzero.cpp); boxes and scores f32, the other inputs
/// constants.
[[nodiscard]] Result<DimExprs> nms_dims(Program& p, NodeId id, const Node& n);
/// The selection's scratch in the arena, in floats (at least
/// hone_nms_scratch_words of the boxes' count, in 8-byte words).
DimExpr nms_scratch_floats(const Program& p, NodeId id);
/// Whether some step is a NonMaxSuppression: the library then carries
/// ops/nms_select.h.
bool uses_nms(const Program& p);

}  // namespace hone::aot
