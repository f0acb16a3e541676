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
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/tensor.h"

namespace hone {

/// The dims of a block's inputs, in block.inputs() order: the key of a plan.
using ShapeSignature = std::vector<std::vector<int64_t>>;

/// Dims of every input of `block`, in block.inputs() order; nullopt when
/// any input has no shape or a symbolic dim.
std::optional<ShapeSignature> static_input_dims(const Graph& block);

/// The signature of the tensors one run was given.
ShapeSignature signature_of(const std::vector<Tensor>& inputs);
/// Every tensor is f32 (what a plan of an f32-only backend can take).
bool all_f32(const std::vector<Tensor>& inputs);
/// A plan key that also carries the values of some inputs (a Reshape target
/// or an Expand shape another block computed from dims): after the inputs'
/// dims, one entry {index, dtype, values...} per input i with `take[i]`
/// (integer or bool, at most `max_numel` elements). False when one is larger
/// or of another dtype: such a run has no plan.
[[nodiscard]] bool append_values(ShapeSignature& key, const std::vector<Tensor>& inputs,
                                 const std::vector<bool>& take, int64_t max_numel);
/// One value entry of a key ({index, dtype, values...}) as a tensor of
/// `dims` (its input's); kInternal when the entry does not match them.
[[nodiscard]] Result<Tensor> value_of_key_entry(const std::vector<int64_t>& entry,
                                                const std::vector<int64_t>& dims);
/// The tensors append_values() put in `key` (whose first `num_inputs`
/// entries are the dims), by input index; kInternal for a malformed key.
[[nodiscard]] Result<std::vector<std::pair<size_t, Tensor>>> values_of_key(
    const ShapeSignature& key, size_t num_inputs);

/// "[1, 3, 8, 8] [3]": the signature for logs and kernel plans.
std::string signature_text(const ShapeSignature& s);

}  // namespace hone
