// Internal to src/onnx: ONNX TypeProto <-> hone Value types, the
// "tensor(float)" / "seq(tensor(float))" spelling of TYPE_PROTO attributes,
// and the type an attribute holds.
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

/// The type an attribute's fields hold (the first one set, as ONNX's checker
/// reads them), whatever its `type` field says; UNDEFINED when none is set.
::onnx::AttributeProto::AttributeType held_attribute_type(const ::onnx::AttributeProto& a);

}  // namespace hone::onnx::detail
