// Helpers the GraphSpec sources share (learning, running, JSON). Internal to src/tune.
#pragma once

#include <string>
#include <vector>

#include "hone/graph_spec.h"

namespace hone::tuning {

/// "f32[batch,3,seq]" for a tensor spec; "f32 (number)" for a scalar leaf.
std::string describe_tensor_spec(const TensorSpec& t);

/// "'meta.scale' (input 'scale')" for messages.
std::string where(const TensorSpec& t, const char* role = "input");

/// The graph tensor for one leaf: a tensor of the spec's dtype, or a number
/// converted to a 0-d tensor (integral and in range for integer dtypes).
[[nodiscard]] Result<Tensor> leaf_to_tensor(const SampleValue& leaf, const TensorSpec& spec);

/// Output paths for graph outputs named `names`: a bare tensor for one plain
/// name, names as paths otherwise; names that do not form a tree fall back to
/// flat keys, then to a list. Never fails.
std::vector<std::string> default_output_paths(const std::vector<std::string>& names);

/// The first axis of `t` of kind kBatch, or -1.
int first_batch_axis(const TensorSpec& t);

}  // namespace hone::tuning
