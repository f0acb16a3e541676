// Graph passes shared by backends. Each takes a graph and returns a new one
// that computes the same outputs from the same inputs (names kept), so a pass
// can be tested by running both on the reference backend.
//
//   PassStats st;
//   HONE_TRY(Graph g2, hone::fold_constants(g, &st));   // st.folded nodes became initializers
//   HONE_TRY(Graph g3, hone::eliminate_dead_code(g2, &st));
//
// Passes written so far: constant folding and dead-code elimination. Still
// to come (issue 3): shape folding, BatchNormalization into Conv/Gemm,
// bias/activation fusion, element-wise chains, transpose elimination.
#pragma once

#include <cstddef>

#include "hone/graph.h"

namespace hone {

struct PassStats {
  int folded = 0;   // nodes replaced by the constants they compute
  int removed = 0;  // nodes dropped because nothing needs their outputs
};

/// Evaluates, with the reference interpreter, every node whose inputs are all
/// constants (initializers, or outputs of nodes folded before it) and turns
/// its outputs into initializers. Nodes with subgraphs, random ops and nodes
/// whose outputs would exceed `max_bytes` are left alone. The folded nodes
/// are then removed.
[[nodiscard]] Result<Graph> fold_constants(const Graph& g, PassStats* stats = nullptr,
                                           size_t max_bytes = size_t{16} << 20);

/// Drops nodes none of whose outputs reach a graph output, and initializers
/// nothing reads. Graph inputs are kept even when unused: they are the interface.
[[nodiscard]] Result<Graph> eliminate_dead_code(const Graph& g, PassStats* stats = nullptr);

}  // namespace hone
