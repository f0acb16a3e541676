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

/// Split of a row-major tensor of dims `x` into `outputs` parts along the
/// node's `axis`: the sizes (split_sizes), where each part starts on the
/// axis, each part's dims, and the [outer, dim, inner] view of `x` around the
/// axis a kernel copies through. Invalid argument: a scalar `x`, an axis out
/// of range, and split_sizes' errors.
struct SplitParts {
  int64_t axis = 0, outer = 1, dim = 0, inner = 1;
  std::vector<int64_t> sizes, starts;
  std::vector<std::vector<int64_t>> outs;
};
[[nodiscard]] Result<SplitParts> split_parts(const Node& node, const std::vector<int64_t>& x,
                                             size_t outputs, const std::vector<int64_t>* given);

}  // namespace hone::ops
