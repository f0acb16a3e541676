// The static input signature of a compiled block: the dims of each of its
// inputs, when every one is known at compile time. Backends that plan per
// signature plan such blocks in compile() rather than at the first run.
//
//   if (auto sig = static_input_dims(block)) (void)compiled->prepare(*sig);
//   // nullopt: some input is unknown or symbolic; planned on first use.
//   // Inputs in block.inputs() order, each as its row-major dims.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hone/graph.h"

namespace hone {

/// Dims of every input of `block`, in block.inputs() order; nullopt when
/// any input has no shape or a symbolic dim.
std::optional<std::vector<std::vector<int64_t>>> static_input_dims(const Graph& block);

}  // namespace hone
