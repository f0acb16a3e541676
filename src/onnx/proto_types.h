// Internal to src/onnx: ONNX TypeProto <-> hone Value types, and the
// "tensor(float)" / "seq(tensor(float))" spelling of TYPE_PROTO attributes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>

#include "hone/error.h"
#include "hone/graph.h"

namespace hone::onnx::detail {

/// "tensor(float)", "seq(tensor(int64))", "optional(tensor(bool))",
/// "map(int64,tensor(float))", "sparse_tensor(float)"; "undefined" when unset.
std::string type_proto_to_string(const ::onnx::TypeProto& type);
/// The inverse of type_proto_to_string (shapes are not spelled, so none are set).
Result<void> type_proto_from_string(std::string_view text, ::onnx::TypeProto* type);

/// Sets kind, dtype and shape of `value` from `type` (only fields `type` has).
/// `what` names the value for messages ("graph input 'x'").
Result<void> apply_type_proto(const ::onnx::TypeProto& type, const std::string& what, Value& value);
/// Writes kind, dtype and shape of `value` into `type`; false when nothing is known.
bool value_type_to_proto(const Value& value, ::onnx::TypeProto* type);

}  // namespace hone::onnx::detail
