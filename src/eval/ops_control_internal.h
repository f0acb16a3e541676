// Private to the control-flow family (ops_control*.cpp): the per-part
// registration functions and the tensor slicing/stacking helpers that Loop,
// Scan and the sequence ops share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval/kernel.h"

namespace hone::eval::control {

void register_flow_ops(OpRegistry& r);      // If, Loop, Scan
void register_sequence_ops(OpRegistry& r);  // Sequence*, SplitToSequence, ConcatFromSequence
void register_optional_ops(OpRegistry& r);  // Optional, OptionalHasElement, OptionalGetElement

/// The sub-tensor at `index` along `axis`, with that axis removed.
/// Preconditions: axis < rank, 0 <= index < t.dim(axis).
Tensor slice_along(const Tensor& t, int64_t axis, int64_t index);
/// Copies `count` slices starting at `begin` along `axis`, keeping the axis.
Tensor narrow_along(const Tensor& t, int64_t axis, int64_t begin, int64_t count);
/// Stacks equally shaped tensors along a new axis `axis` (0 <= axis <= rank);
/// error names `what` when shapes or dtypes differ. `parts` must be non-empty.
[[nodiscard]] Result<Tensor> stack_along(const std::vector<Tensor>& parts, int64_t axis,
                                         const std::string& what);
/// Concatenates along an existing `axis`; other dims must agree.
[[nodiscard]] Result<Tensor> concat_along(const std::vector<Tensor>& parts, int64_t axis,
                                          const std::string& what);

/// A scalar (or one-element) tensor read as int64 / bool; error names `what`.
[[nodiscard]] Result<int64_t> scalar_int(const Tensor& t, const std::string& what);
[[nodiscard]] Result<bool> scalar_bool(const Tensor& t, const std::string& what);

/// "tensor f32[2,3]", "sequence of 3 f32", "empty optional" for messages.
std::string describe_value(const RuntimeValue& v);

}  // namespace hone::eval::control
