// How ONNX Split divides its axis, written once: the sizes come from the
// `split` input (opset 13 on), the `split` attribute (before 13), or an equal
// division into the outputs (opset 18's `num_outputs`: chunks of
// ceil(dim / n), the last one smaller). The reference kernel and the backends
// that plan Split themselves (cuda, onednn) all take the sizes from here.
//
//   HONE_TRY(auto sizes, ops::split_sizes(node, 10, 3, nullptr));  // num_outputs=3: {4, 4, 2}
#pragma once

#include <cstdint>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"

namespace hone::ops {

/// The size of each of `outputs` parts of an axis of size `dim`. `given` is
/// the `split` input's contents when the node has that input (null when not).
/// Invalid argument, naming the sizes: a count that is not the node's outputs,
/// a negative size, sizes not summing to `dim`, an uneven equal division
/// without `num_outputs`.
[[nodiscard]] Result<std::vector<int64_t>> split_sizes(const Node& node, int64_t dim,
                                                       size_t outputs,
                                                       const std::vector<int64_t>* given);

}  // namespace hone::ops
