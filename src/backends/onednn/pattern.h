// Private to the onednn backend: multi-node patterns it runs as one primitive.
#pragma once

#include <vector>

#include "hone/graph.h"

namespace hone::onednn {

/// The erf form of GELU as GraphBuilder::gelu() and exporters write it:
/// Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5), each intermediate
/// read only by the next node. `div` is the first node; `rest` gets the other
/// four in order. Any other spelling does not match.
bool match_gelu(const Graph& g, const Node& div, std::vector<const Node*>* rest);

/// The Div that starts the GELU pattern `erf` belongs to, or nullptr.
const Node* gelu_start_of_erf(const Graph& g, const Node& erf);

}  // namespace hone::onednn
