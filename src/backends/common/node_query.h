// Node queries every backend's supports_node() asks: the value behind an
// input slot, whether it is a constant, its rank, whether optional outputs
// are wired. Private to src/backends; each backend keeps its own refusal
// messages, these only answer the questions.
//
//   using node_query::val, node_query::is_const, node_query::rank_of;
//   if (val(g, n, 2) && !is_const(g, n, 2)) return "the bias must be a constant";
//   if (rank_of(val(g, n, 0)) == 0) return "a scalar operand";
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "hone/graph.h"
#include "hone/partition.h"

namespace hone::node_query {

/// The value at input slot `i` of `n`, or nullptr when the slot is absent or empty.
inline const Value* val(const Graph& g, const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0 ? &g.value(n.inputs[i]) : nullptr;
}

/// Input `i` is present and has an initializer.
inline bool is_const(const Graph& g, const Node& n, size_t i) {
  const Value* v = val(g, n, i);
  return v != nullptr && v->initializer.has_value();
}

/// Input `i` is a constant i64 tensor (shapes, axes).
inline bool is_const_i64(const Graph& g, const Node& n, size_t i) {
  return is_const(g, n, i) && g.value(n.inputs[i]).initializer->dtype() == DType::kI64;
}

/// Rank when the value and its shape are known, else -1.
inline int64_t rank_of(const Value* v) {
  return v && v->shape ? static_cast<int64_t>(v->shape->rank()) : -1;
}

/// Any output past the first is wired (training statistics, pool indices, ...).
inline bool extra_outputs_used(const Node& n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) return true;
  return false;
}

/// `ap` is one of ONNX's auto_pad values (NOTSET, SAME_UPPER, SAME_LOWER, VALID).
inline bool is_onnx_auto_pad(const std::string& ap) {
  return ap == "NOTSET" || ap == "SAME_UPPER" || ap == "SAME_LOWER" || ap == "VALID";
}

/// Why the first `data_inputs` inputs and output 0 of `n` are not f32
/// tensors, or "" when they are. kUndefined passes: a builder-made
/// intermediate, whose real dtype the block checks when it runs. `f32_only`
/// ends the dtype messages ("blas runs f32 only"), so each backend names itself.
inline std::string check_f32_io(const Graph& g, const Node& n, size_t data_inputs,
                                const std::string& f32_only) {
  for (size_t i = 0; i < data_inputs; ++i) {
    const Value* v = val(g, n, i);
    if (v != nullptr && v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
      return "input " + std::to_string(i) + " is " + std::string(dtype_name(v->dtype)) + "; " +
             f32_only;
    if (v != nullptr && v->kind != ValueKind::kTensor)
      return "input " + std::to_string(i) + " is not a tensor";
  }
  if (n.outputs.empty() || n.outputs[0] < 0) return "no output";
  if (const DType t = g.value(n.outputs[0]).dtype; t != DType::kF32 && t != DType::kUndefined)
    return "output is " + std::string(dtype_name(t)) + "; " + f32_only;
  return {};
}

/// A why_not() answer as a proposal: "" is yes, anything else is the reason.
inline NodeSupport support_from(std::string why) {
  return why.empty() ? NodeSupport::yes() : NodeSupport::no(std::move(why));
}

}  // namespace hone::node_query
