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

/// HardSwish as PaddlePaddle's exporter writes it: Add(y, 3) -> Clip(0, 6)
/// -> Mul(y, .) -> Div(., 6), where `y` is read by exactly the Add and the
/// Mul and each intermediate only by the next node. `nodes` gets the four in
/// that order.
bool match_hardswish(const Graph& g, ValueId y, std::vector<const Node*>* nodes);

/// SiLU (swish) as exporters write it: Sigmoid(y) -> Mul(y, .), where `y`
/// is read by exactly the two and the Sigmoid's output only by the Mul.
/// `nodes` gets the Sigmoid and the Mul.
bool match_swish(const Graph& g, ValueId y, std::vector<const Node*>* nodes);

/// The Div that starts the GELU pattern `erf` belongs to, or nullptr.
const Node* gelu_start_of_erf(const Graph& g, const Node& erf);

}  // namespace hone::onednn
